import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { LiveCaptions, LiveCaptionsSnapshot } from '@soundclone/web-audio';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { pageUntil, platform, watchPlatform } from './lab.ts';
import type { LivePage } from './live-page.ts';
import { startLiveServer, type LiveServer } from './live-server.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { speechWav } from './support.ts';

/**
 * The live-captions store in real Chromium (its fake microphone playing speech-like bursts) against the
 * reference server, through a backend that mints sessions and tokens with the Node client
 * (live-server.ts). Each test ends with what the store promises: no session left open on the server, no
 * live track, no running AudioContext, no listener called after it unsubscribed.
 */
type W = { live: LivePage; store: LiveCaptions; stores: LiveCaptions[]; counter: ReturnType<LivePage['watch']>; seen: string[] };

const wav = speechWav();
let demo: DemoServer;
let browser: Browser;
let server: LiveServer;
let page: Page;

beforeAll(async () => {
  ({ demo, browser } = await startDemoRig('fake-mic-live.wav', wav.pcm));
  server = await startLiveServer(demo);
});
afterAll(async () => {
  await server?.close();
  await closeRig({ demo, browser });
});

async function openPage(): Promise<Page> {
  page = await browser.newPage();
  await page.addInitScript(watchPlatform);
  await page.goto(server.url);
  await page.waitForFunction(() => (window as unknown as Partial<W>).live !== undefined);
  return page;
}

afterEach(async () => {
  await page?.close();
});

/** Nothing left: every store stopped, no open session, no live track, no running context, no late listener call. */
async function expectNothingLeft(p: Page): Promise<void> {
  await p.evaluate(async () => {
    const w = window as unknown as W;
    await Promise.all((w.stores ?? [w.store]).map((s) => s.stop()));
  });
  expect(await server.settledOpenSessions()).toEqual([]);
  const left = await platform(p);
  expect(left.liveTracks).toBe(0);
  expect(left.openContexts).toBe(0);
  expect(left.rejections).toEqual([]);
  expect(await p.evaluate(() => (window as unknown as W).counter?.late ?? 0)).toBe(0);
}

const snapshot = (p: Page): Promise<LiveCaptionsSnapshot> => p.evaluate(() => JSON.parse(JSON.stringify((window as unknown as W).store.getSnapshot())) as LiveCaptionsSnapshot);

describe('live-captions store (Chromium, reference server)', () => {
  it('start: microphone, session and capture; lines, partials, cues and health in immutable snapshots; stop finishes the session and releases everything', async () => {
    const p = await openPage();
    const before = server.created.length;
    await p.evaluate(async () => {
      const w = window as unknown as W;
      w.store = w.live.make();
      w.counter = w.live.watch(w.store);
      w.seen = [];
      // Every snapshot is a new frozen object; the previous one is never changed.
      let last = w.store.getSnapshot();
      const idle = JSON.stringify(last);
      w.store.subscribe(() => {
        const next = w.store.getSnapshot();
        if (next === last || !Object.isFrozen(next) || !Object.isFrozen(next.lines)) w.seen.push('not a new frozen snapshot');
        if (JSON.stringify(w.store.getServerSnapshot()) !== idle) w.seen.push('the idle snapshot changed');
        if (w.seen.at(-1) !== next.status) w.seen.push(next.status);
        last = next;
      });
      await w.store.start();
    });
    expect((await snapshot(p)).status).toBe('live');
    await pageUntil(p, 'two committed lines', () => (window as unknown as W).store.getSnapshot().lines.length >= 2, 20_000);
    const live = await snapshot(p);
    expect(live.sessionId).toBe(server.created[before]);
    expect(live.capture?.state).toBe('running');
    expect(live.session).not.toBeNull();
    expect(live.cues.length).toBeGreaterThan(0);
    expect(live.error).toBeNull();
    expect(new Set(live.lines.map((l) => l.id)).size).toBe(live.lines.length);
    await p.evaluate(() => (window as unknown as W).store.stop());
    const stopped = await snapshot(p);
    expect(stopped.status).toBe('stopped');
    expect(stopped.lines.length).toBeGreaterThanOrEqual(2);
    expect(stopped.capture).toBeNull();
    const seen = await p.evaluate(() => (window as unknown as W).seen);
    expect(seen.filter((s) => s.includes(' '))).toEqual([]);
    expect(seen).toEqual(expect.arrayContaining(['starting', 'live', 'stopping', 'stopped']));
    expect(server.created.length - before).toBe(1);
    expect((await platform(p)).calls).toBe(1);
    await p.evaluate(() => (window as unknown as W).counter.unsubscribe());
    await expectNothingLeft(p);
  });

  for (const phase of ['asking for the microphone', 'reserving a session', 'connecting', 'starting the capture', 'listening'] as const) {
    it(`stop() while ${phase}: start() rejects WEB_AUDIO_STOPPED (or resolved first), the session is finished or released, nothing left running`, async () => {
      const p = await openPage();
      const before = server.created.length;
      const outcome = await p.evaluate(async (phase) => {
        const w = window as unknown as W;
        w.store = w.live.make();
        w.counter = w.live.watch(w.store);
        let stopping: Promise<void> | undefined;
        w.store.subscribe(() => {
          if (stopping === undefined && w.store.getSnapshot().reason === phase) stopping = w.store.stop();
        });
        const started = await w.store.start().then(() => 'started', (e: { code?: string }) => e.code ?? String(e));
        await stopping;
        w.counter.unsubscribe();
        return { started, status: w.store.getSnapshot().status };
      }, phase);
      expect(outcome.status).toBe('stopped');
      expect(outcome.started).toBe(phase === 'listening' ? 'started' : 'WEB_AUDIO_STOPPED');
      const made = server.created.slice(before);
      expect(made.length).toBe(phase === 'asking for the microphone' ? 0 : 1);
      // Before the socket was up the backend released it; after, the store finished it over its socket.
      const released = made.filter((id) => server.released.includes(id));
      expect(released).toEqual(phase === 'reserving a session' ? made : []);
      await expectNothingLeft(p);
    });
  }

  it('rapid start/stop/start: exactly one live session, one microphone live; the first run ended before the second began', async () => {
    const p = await openPage();
    const before = server.created.length;
    await p.evaluate(async () => {
      const w = window as unknown as W;
      w.store = w.live.make();
      w.counter = w.live.watch(w.store);
      const first = w.store.start().catch(() => undefined);
      void w.store.stop();
      void w.store.start().catch(() => undefined);
      void w.store.stop();
      await first;
      await w.store.start();
    });
    expect((await snapshot(p)).status).toBe('live');
    expect(await server.openSessions()).toEqual([`${(await snapshot(p)).sessionId} ACTIVE`]);
    expect((await platform(p)).liveTracks).toBe(1);
    // Stopped before they acquired anything, the first two runs reserved no session.
    expect(server.created.length - before).toBe(1);
    await p.evaluate(() => (window as unknown as W).counter.unsubscribe());
    await expectNothingLeft(p);
  });

  it('mount, release, mount in one task (React StrictMode): one run, one microphone, one server session; the last release stops it', async () => {
    const p = await openPage();
    const before = server.created.length;
    await p.evaluate(async () => {
      const w = window as unknown as W;
      w.store = w.live.make({ autoStart: true });
      w.counter = w.live.watch(w.store);
      const first = w.store.mount();
      first();
      const second = w.store.mount();
      (w as unknown as { release: () => void }).release = second;
    });
    await pageUntil(p, 'live', () => (window as unknown as W).store.getSnapshot().status === 'live');
    expect(server.created.length - before).toBe(1);
    expect((await platform(p)).calls).toBe(1);
    await p.evaluate(() => {
      const w = window as unknown as W & { release: () => void };
      w.counter.unsubscribe();
      w.release();
    });
    await pageUntil(p, 'stopped', () => (window as unknown as W).store.getSnapshot().status === 'stopped');
    await expectNothingLeft(p);
  });
});
