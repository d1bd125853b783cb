import { describe, expect, it } from 'vitest';
import { ADAPTERS, PAGES, measureAdapter, measurePage, measureWorklet, type BundlePage } from '../../bench/scripts/bundle-pages.mjs';

/**
 * What a browser page ships: each page of the bundle bench (bench/scripts/bundle-pages.mjs), bundled
 * from the packages' sources as an application's bundler would, minified and gzipped. A page that
 * grows past its ceiling fails here; the figures and the targets are in bench/results/bundle-size.md.
 * Sizes, not times: the same sources always give the same bytes.
 */
describe('page weight', () => {
  for (const page of PAGES) {
    it(`${page.id}: within ${page.ceiling} bytes gzipped, and without ${page.forbid.join(' or ')}`, async () => {
      const weight = await measurePage(page, { from: 'src' });
      for (const kind of page.forbid) expect(weight.forbidden[kind], `${page.id} must not contain ${kind}`).toEqual([]);
      expect(weight.gzip).toBeLessThanOrEqual(page.ceiling);
    });
  }

  it('finds the REST client and rxjs where they are (the checks above can fail)', async () => {
    const find = (id: string): BundlePage => PAGES.find((p) => p.id === id)!;
    const client = await measurePage({ ...find('core-client'), forbid: ['rest-client'] }, { from: 'src' });
    expect(client.forbidden['rest-client']!.length).toBeGreaterThan(10);
    const rx = await measurePage({ ...find('web-audio-rx'), forbid: ['rxjs'] }, { from: 'src' });
    expect(rx.forbidden.rxjs!.length).toBeGreaterThan(5);
    expect(rx.rxjsGzip).toBeGreaterThan(2_000);
  });

  for (const adapter of ADAPTERS) {
    it(`@soundclone/${adapter.id} by itself (web-audio and the framework left out): within ${adapter.ceiling} bytes gzipped`, async () => {
      const weight = await measureAdapter(adapter, { from: 'src' });
      expect(weight.minified).toBeGreaterThan(100); // the binding itself, not an empty bundle
      expect(weight.gzip).toBeLessThanOrEqual(adapter.ceiling);
    });
  }

  it('the capture worklet, a separate artifact, stays within its ceiling', async () => {
    const worklet = await measureWorklet();
    expect(worklet.gzip).toBeLessThanOrEqual(worklet.ceiling);
  });
});
