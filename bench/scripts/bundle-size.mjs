// What a browser page pays for the SDK: bundles each page of bundle-pages.mjs (attach by token, capture,
// show lines; the REST client's attach beside them) from the packages' built dist/, as an application
// bundler would, minified, and prints raw and gzipped bytes, rxjs's share, each page's ceiling and
// target, and the minified bytes by package. Run after `pnpm build`:
//
//   node bench/scripts/bundle-size.mjs [workspace root]     (default: this workspace)
//   node bench/scripts/bundle-size.mjs --json               (the full report as JSON)
//
// Passing another checkout's root measures that build with the same entries, for before/after tables.
// test/bundle/page-weight.test.ts bundles the same pages from the sources and fails past a ceiling.
import { resolve } from 'node:path';
import { PAGES, WORKSPACE, measurePage, measureWorklet } from './bundle-pages.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const root = resolve(args.find((a) => !a.startsWith('--')) ?? WORKSPACE);

const pages = [];
for (const page of PAGES) pages.push({ page, weight: await measurePage(page, { root, from: 'dist' }) });
const worklet = await measureWorklet({ root });

if (json) {
  console.log(JSON.stringify({ root, pages: pages.map(({ weight }) => ({ ...weight, inputs: undefined })), worklet }, null, 2));
} else {
  const n = (v) => v.toLocaleString('en-US');
  console.log('| bundle | min | gzip | rxjs share | ceiling (test) | target |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const { page, weight } of pages) {
    console.log(`| ${page.label} | ${n(weight.minified)} | ${n(weight.gzip)} | ${n(weight.rxjsGzip)} | ${n(page.ceiling)} | ${page.target === null ? '—' : n(page.target)} |`);
  }
  console.log(`| Capture worklet (\`dist/capture-worklet.js\`, minified) | ${n(worklet.bytes)} | ${n(worklet.gzip)} | 0 | ${n(worklet.ceiling)} | ${n(worklet.target)} |`);
  console.log('');
  for (const { page, weight } of pages) {
    console.log(`Minified bytes by package, ${page.id}: ${Object.entries(weight.byPackage).map(([k, v]) => `${k} ${n(v)}`).join(', ')}`);
  }
}
