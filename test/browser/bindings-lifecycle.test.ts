import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { LiveCaptionsSnapshot } from '@soundclone/web-audio';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { bundleBindingPage } from './binding-bundle.ts';
import type { BindingPage } from './binding-page.ts';
import { pageUntil, platform, watchPlatform } from './lab.ts';
import { startLiveServer, type LiveServer } from './live-server.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { speechWav } from './support.ts';

/**
 * The React, Vue and Svelte bindings in real Chromium (its fake microphone) against the reference
 * server: each framework's own component mounted and unmounted the way apps do, at the moments that
 * leak in hand-written code. After each: no session open on the server (finished over its socket or
 * released by the backend), no live track, no running AudioContext, no render after the unmount, and
 * nothing unhandled. React's page is bundled in development mode, where StrictMode mounts twice.
 *
 * Substituted: an unplugged microphone is its track stopped plus the `ended` event the browser would
 * fire (Chromium's fake device cannot be unplugged; see capture-recovery.test.ts).
 */
type W = { bind: BindingPage };

const wav = speechWav();
let demo: DemoServer;
let browser: Browser;
const servers = new Map<string, LiveServer>();
let page: Page | undefined;

beforeAll(async () => {
  ({ demo, browser } = await startDemoRig('fake-mic-bindings.wav', wav.pcm));
  for (const binding of ['react', 'vue', 'svelte'] as const) servers.set(binding, await startLiveServer(demo, await bundleBindingPage(binding)));
});
afterAll(async () => {
  for (const server of servers.values()) await server.close();
  await closeRig({ demo, browser });
});
afterEach(async () => {
  await page?.close();
  page = undefined;
});

async function open(server: LiveServer): Promise<Page> {
  page = await browser.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  (page as unknown as { errors: string[] }).errors = errors;
  await page.addInitScript(watchPlatform);
  await page.goto(server.url);
  await page.waitForFunction(() => (window as unknown as Partial<W>).bind !== undefined);
  return page;
}

const status = (p: Page): Promise<LiveCaptionsSnapshot['status'] | undefined> => p.evaluate(() => (window as unknown as W).bind.store?.getSnapshot().status);

/** After an unmount: the store stopped by itself, and nothing is left anywhere. */
async function expectReleased(p: Page, server: LiveServer): Promise<void> {
  await pageUntil(p, 'the store to stop after the unmount', () => (window as unknown as W).bind.store?.getSnapshot().status === 'stopped');
  expect(await server.settledOpenSessions()).toEqual([]);
  const left = await platform(p);
  expect(left.liveTracks).toBe(0);
  expect(left.openContexts).toBe(0);
  expect(left.rejections).toEqual([]);
  expect(left.reported).toEqual([]);
  expect((p as unknown as { errors: string[] }).errors).toEqual([]);
  expect(await p.evaluate(() => (window as unknown as W).bind.counts.afterUnmount)).toBe(0);
}

for (const binding of ['react', 'vue', 'svelte'] as const) {
  describe(`@soundclone/${binding} lifecycle (Chromium, reference server)`, () => {
    it('mount with autoStart: captions shown; unmount: session finished, microphone and context released, no render after', async () => {
      const server = servers.get(binding)!;
      const p = await open(server);
      const before = server.created.length;
      await p.evaluate(() => (window as unknown as W).bind.mount({ autoStart: true }));
      await pageUntil(p, 'a committed line on the page', () => document.querySelectorAll('#captions p').length >= 1, 20_000);
      expect(await status(p)).toBe('live');
      expect(await p.evaluate(() => document.querySelector('#captions b')?.textContent)).toBe('live');
      expect(server.created.length - before).toBe(1);
      expect((await platform(p)).calls).toBe(1);
      await p.evaluate(() => (window as unknown as W).bind.unmount());
      await expectReleased(p, server);
      expect(server.released.filter((id) => server.created.slice(before).includes(id))).toEqual([]); // finished over its socket
    });

    for (const moment of ['connecting', 'device recovery', 'finishing'] as const) {
      it(`unmount during ${moment}: nothing leaks, no render after the unmount, the session finished or released`, async () => {
        const server = servers.get(binding)!;
        const p = await open(server);
        const before = server.created.length;
        await p.evaluate(async (moment) => {
          const { bind } = window as unknown as W;
          bind.mount({ autoStart: true });
          const store = bind.store!;
          const reached = (check: () => boolean): Promise<void> =>
            new Promise((resolve) => {
              if (check()) return resolve();
              const off = store.subscribe(() => {
                if (check()) {
                  off();
                  resolve();
                }
              });
            });
          if (moment === 'connecting') {
            await reached(() => store.getSnapshot().reason === 'connecting');
          } else {
            await reached(() => store.getSnapshot().status === 'live');
            if (moment === 'device recovery') {
              const track = (window as unknown as { gum: { streams: MediaStream[] } }).gum.streams[0]!.getAudioTracks()[0]!;
              track.stop();
              track.dispatchEvent(new Event('ended'));
              if (store.getSnapshot().capture?.state !== 'recovering') throw new Error(`not recovering: ${store.getSnapshot().capture?.state}`);
            } else {
              void store.stop();
              if (store.getSnapshot().status !== 'stopping') throw new Error('not finishing');
            }
          }
          bind.unmount();
        }, moment);
        await expectReleased(p, server);
        expect(server.created.length - before).toBe(1);
      });
    }

    if (binding === 'react') {
      it('StrictMode double mount: one run, one microphone, one server session; the unmount releases it', async () => {
        const server = servers.get(binding)!;
        const p = await open(server);
        const before = server.created.length;
        await p.evaluate(() => (window as unknown as W).bind.mount({ autoStart: true, strict: true }));
        await pageUntil(p, 'live', () => (window as unknown as W).bind.store?.getSnapshot().status === 'live');
        await pageUntil(p, 'a committed line on the page', () => document.querySelectorAll('#captions p').length >= 1, 20_000);
        // StrictMode did mount twice (the component's own effect ran twice), yet one session was asked for and made.
        expect(await p.evaluate(() => (window as unknown as W).bind.counts.effects)).toBe(2);
        expect(await p.evaluate(() => (window as unknown as { live: { asked: { connect: number } } }).live.asked.connect)).toBe(1);
        expect(server.created.length - before).toBe(1);
        expect((await platform(p)).calls).toBe(1);
        expect((await server.openSessions()).length).toBe(1);
        await p.evaluate(() => (window as unknown as W).bind.unmount());
        await expectReleased(p, server);
      });
    }
  });
}
