import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import type { RunningServer } from '@soundclone/server';
import type { DemoApi, DemoStartOptions, DemoStopResult, DemoSnapshot } from '../../packages/web-audio/demo/page/main.ts';
import { snapshot, startKeepingInput, stopDemo, tryStart as tryStartOn } from './demo-page.ts';
import { closeRig, startDemoRig, storedAudio } from './rig.ts';
import { ARTIFACTS, WAV_RATE, align, onsetMatches, decodeFloat32, encodeLikeThePage, speechWav, stretchesLikeThePage } from './support.ts';

/**
 * @soundclone/web-audio in real Chromium: the fake microphone plays a WAV made here; the demo
 * page captures it through the AudioWorklet into a realtime session on the reference server, with a
 * socket drop in the middle. Checked: the server stored exactly core's resampling of what the worklet
 * captured (bit for bit, every count equal), that audio matches the WAV, the DOM shows the server's
 * lines with their entities, and a screenshot is kept in test/artifacts/browser/.
 */
const wav = speechWav();
const wavSeconds = wav.pcm.length / WAV_RATE;
let demo: DemoServer;
let browser: Browser;

beforeAll(async () => void ({ demo, browser } = await startDemoRig('fake-mic.wav', wav.pcm)));
afterAll(() => closeRig({ demo, browser }));

/** Called on every poll with the capture's progress; returns true while it has more to do. */
type Act = (seconds: number, page: Page) => Promise<boolean>;

/** Drops the session's socket once, a little past 2 s of capture. */
const dropSocketOnce = (): Act => {
  let done = false;
  return async (seconds) => {
    if (done || seconds < 2.2) return !done;
    done = true;
    expect((demo.server as RunningServer).faults.socket.closeSocket(demo.sessions.at(-1) as string, 4000, 'test: forced drop')).toBe(true);
    return false;
  };
};

/** Starts the demo, runs `act` as capture goes on, captures the whole WAV, stops and finishes. */
async function run(page: Page, path: string, options: DemoStartOptions, screenshot: string, act: Act): Promise<{ started: Awaited<ReturnType<DemoApi['start']>>; result: DemoStopResult; during: DemoSnapshot[] }> {
  const { started, errors } = await startKeepingInput(page, `${demo.url}${path}`, options);
  const during: DemoSnapshot[] = [];
  const until = Date.now() + 20_000;
  let live = false;
  // The file plays in real time from getUserMedia on: wait until the worklet has seen all of it.
  for (;;) {
    const s = await snapshot(page);
    during.push(s);
    const seconds = (s.stats?.capturedFrames ?? 0) / started.sampleRate;
    const busy = await act(seconds, page);
    if (!live && screenshot !== '' && s.partial !== '') {
      // Mid-stream: the open segment's words in grey under the committed lines.
      live = true;
      await page.screenshot({ path: join(ARTIFACTS, `live-${screenshot}`) });
      const grey = await page.locator('#partial').evaluate((el) => getComputedStyle(el).color);
      expect(grey).toBe('rgb(154, 161, 171)');
    }
    if ((seconds >= wavSeconds - 0.1 && !busy) || Date.now() > until) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const result = await stopDemo(page);
  expect(errors).toEqual([]);
  if (screenshot !== '') expect(live, 'a partial was shown while capturing').toBe(true);
  return { started, result, during };
}

/** Everything the server holds is exactly what the page captured, resampled by core in Node. */
async function verifyAudio(result: DemoStopResult, sessionId: string, rate: number, kernel: string): Promise<void> {
  const stored = await storedAudio(demo, sessionId);
  const input = decodeFloat32(result.input as string);
  const c = result.capture;
  // The worklet's own totals: every frame it saw reached the page; none was muted, paused or dropped.
  expect(c.worklet.exact).toBe(true);
  expect(c.worklet.dropped).toBe(0);
  expect(c.worklet.frames).toBe(c.capturedFrames);
  expect(c.encodedFrames).toBe(c.capturedFrames);
  expect(input.length).toBe(c.encodedFrames);
  expect(c.mutedFrames + c.pausedFrames + c.refusedFrames).toBe(0);
  // Counts: the session's capturedSamples, the server's received and stored samples, the page's sent
  // samples and Node's resampling of the captured input all agree exactly.
  const expected = encodeLikeThePage(input, rate, kernel as 'wasm' | 'js');
  expect(c.sentSamples).toBe(expected.length);
  expect(result.sessionStats.producedSamples).toBe(expected.length);
  expect(result.sessionStats.ackedSamples).toBe(expected.length);
  expect(Number(result.finish.receivedSamples)).toBe(expected.length);
  expect(Number(result.finish.capturedSamples)).toBe(expected.length);
  expect(stored.length).toBe(expected.length);
  // Samples: bit for bit, across the socket drop (the resend from the server's cursor lost nothing).
  let firstDiff = -1;
  for (let i = 0; i < expected.length && firstDiff < 0; i++) if (stored[i] !== expected[i]) firstDiff = i;
  expect(firstDiff).toBe(-1);
  expect(result.finish.status).toBe('COMPLETED');
  expect(result.finish.notices).not.toContain('TRANSPORT_GAP');
  // And what the worklet captured is the WAV: the server's audio against the WAV resampled in Node.
  // Seen on a quiet machine: 0.9999998 over the whole file at 44.1 kHz (no conversion in Chromium),
  // 0.998 at 48 kHz. On a loaded machine Chromium's fake device (paced by a timer) sometimes inserts or
  // skips 10-20 ms upstream of the worklet, which shifts everything after it and sinks a whole-file
  // correlation; so the check is per burst onset: every onset is there, in order, with the right
  // waveform, and the timing never moves by more than a few such glitches.
  const reference = Float32Array.from(encodeLikeThePage(wav.samples, WAV_RATE, kernel as 'wasm' | 'js'), (v) => v / 32768);
  const captured = Float32Array.from(stored, (v) => v / 32768);
  const match = align(captured, reference, 16_000);
  const onsets = onsetMatches(captured, reference, match.lag, 1600);
  const report = `whole file ${JSON.stringify(match)}; onsets ${onsets.map((o) => `${o.at}:${o.lag}/${o.c.toFixed(4)}`).join(' ')}`;
  if (process.env.SHOW_MATCH) process.stdout.write(`${report}\n`);
  expect(onsets.length, report).toBe(6); // two bursts per line, three lines
  for (const o of onsets) expect(o.c, report).toBeGreaterThan(0.98);
  const lags = onsets.map((o) => o.lag);
  expect(Math.max(...lags) - Math.min(...lags), report).toBeLessThanOrEqual(960); // 60 ms at most, all glitches together
  expect(match.envelope, report).toBeGreaterThan(0.95);
  expect(Math.abs(match.lag)).toBeLessThan(16_000); // the file started less than a second before the worklet
}

async function verifyPage(page: Page, result: DemoStopResult, during: DemoSnapshot[], screenshot: string): Promise<void> {
  const after = await snapshot(page);
  // Captions: the committed lines in the DOM are the server's final lines, entities marked.
  expect(result.finish.lines.length).toBeGreaterThanOrEqual(2);
  expect(after.lines).toEqual(result.finish.lines);
  expect(after.entities.length, `entities marked in ${JSON.stringify(after.lines)}`).toBeGreaterThanOrEqual(1);
  for (const e of after.entities) expect(after.lines.some((l) => l.includes(e.text))).toBe(true);
  expect(after.entities.every((e) => e.category === 'name')).toBe(true);
  // Connection state and reconnects as the page showed them; the level meter moved with the speech.
  expect(during.some((s) => s.connection === 'streaming')).toBe(true);
  expect(after.reconnects).toBe(1);
  expect(await page.locator('#reconnects').textContent()).toBe('1 reconnect');
  expect(Math.max(...during.map((s) => s.level))).toBeGreaterThan(-20);
  const png = await page.screenshot({ path: join(ARTIFACTS, screenshot), fullPage: true });
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  expect(readFileSync(join(ARTIFACTS, screenshot)).length).toBe(png.length);
}

describe('web-audio capture in Chromium', () => {
  it('SharedArrayBuffer ring on an isolated page (native 44.1 kHz context, worklet URL under a strict CSP), socket dropped mid-stream', async () => {
    const page = await browser.newPage();
    try {
      const { started, result, during } = await run(page, '/', {}, 'captions-shared.png', dropSocketOnce());
      expect(started).toMatchObject({ transport: 'shared', isolated: true, sampleRate: 44_100, kernel: 'wasm' });
      expect(result.capture.transport).toBe('shared');
      // stop() released what startCapture made: the microphone tracks and its own AudioContext.
      expect(result).toMatchObject({ tracksEnded: true, contextState: 'closed' });
      await verifyAudio(result, demo.sessions.at(-1) as string, started.sampleRate, started.kernel);
      await verifyPage(page, result, during, 'captions-shared.png');
    } finally {
      await page.close();
    }
  });

  it('transferable batches on a page without isolation (48 kHz context, worklet from a Blob URL), socket dropped mid-stream', async () => {
    const page = await browser.newPage();
    try {
      const { started, result, during } = await run(page, '/?coi=0&worklet=blob', { sampleRate: 48_000, worklet: 'blob' }, 'captions-transfer.png', dropSocketOnce());
      expect(started).toMatchObject({ transport: 'transfer', isolated: false, sampleRate: 48_000, kernel: 'wasm' });
      // The app's own AudioContext is left running for the app; the tracks startCapture opened are stopped.
      expect(result).toMatchObject({ tracksEnded: true, contextState: 'running' });
      await verifyAudio(result, demo.sessions.at(-1) as string, started.sampleRate, started.kernel);
      await verifyPage(page, result, during, 'captions-transfer.png');
    } finally {
      await page.close();
    }
  });

  it('mute sends nothing and keeps the session streaming; pause commits and resumes in a new epoch; counts balance', async () => {
    const page = await browser.newPage();
    try {
      const api = (p: Page, call: 'mute' | 'unmute' | 'pause' | 'resume') => p.evaluate((c) => (window as unknown as { demo: DemoApi }).demo[c](), call);
      const seen: Record<string, DemoSnapshot> = {};
      let step = 0;
      let last = 0;
      // Each step waits for capture time (the audio clock) since the one before, one step per poll,
      // so a slow poll on a loaded machine can stretch the plan but never squeeze it.
      const plan: Array<[number, (p: Page) => Promise<void>]> = [
        [1.7, (p) => api(p, 'mute')],
        [0.3, async (p) => void (seen['muted'] = await snapshot(p))],
        [0.6, (p) => api(p, 'unmute')],
        [0.7, (p) => api(p, 'pause')],
        [0.2, async (p) => void (seen['paused'] = await snapshot(p))],
        [0.5, (p) => api(p, 'resume')],
        [0.0, async (p) => void (seen['resumed'] = await snapshot(p))],
      ];
      const act: Act = async (seconds, p) => {
        const next = plan[step];
        if (next !== undefined && seconds - last >= next[0]) {
          await next[1](p);
          last = seconds;
          step++;
        }
        return step < plan.length;
      };
      const { started, result } = await run(page, '/', { transport: 'transfer' }, '', act);
      expect(step).toBe(7);
      expect(started).toMatchObject({ transport: 'transfer', isolated: true });
      // Muted: the session stays connected and streaming. Paused: the session pauses. Resumed: epoch 2.
      expect(seen['muted']).toMatchObject({ captureState: 'muted', connection: 'streaming', epoch: 1 });
      expect(seen['paused']).toMatchObject({ captureState: 'paused', connection: 'paused', epoch: 1 });
      expect(seen['resumed']).toMatchObject({ captureState: 'capturing', connection: 'streaming', epoch: 2 });
      const c = result.capture;
      const rate = started.sampleRate;
      // The books balance: every frame the worklet saw was encoded, muted or paused.
      expect(c.worklet).toMatchObject({ exact: true, dropped: 0 });
      expect(c.worklet.frames).toBe(c.capturedFrames);
      expect(c.encodedFrames + c.mutedFrames + c.pausedFrames).toBe(c.capturedFrames);
      expect(c.mutedFrames / rate).toBeGreaterThan(0.6);
      expect(c.pausedFrames / rate).toBeGreaterThan(0.4);
      // The server got exactly the unmuted, unpaused audio: each segment resampled on its own (the
      // session writer ends the segment at mute and pause: the tail is flushed), nothing of the muted or paused time.
      const input = decodeFloat32(result.input as string);
      expect(input.length).toBe(c.encodedFrames);
      expect(result.segments).toHaveLength(2);
      const { expected } = stretchesLikeThePage(input, result.segments, rate, started.kernel as 'wasm');
      const stored = await storedAudio(demo, demo.sessions.at(-1) as string);
      expect(stored.length).toBe(expected.length);
      expect(Number(result.finish.receivedSamples)).toBe(expected.length);
      expect(Number(result.finish.capturedSamples)).toBe(expected.length);
      expect(c.sentSamples).toBe(expected.length);
      expect(Buffer.from(stored.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
      expect(result.finish.status).toBe('COMPLETED');
    } finally {
      await page.close();
    }
  });

  for (const [transport, path, options, stalls] of [
    // The transfer pool's default: 2 s. A 1 s long task costs nothing; a 2.6 s one loses ~0.6 s.
    ['transfer', '/?coi=0', {}, [[1.2, 1000, 0], [2.6, 2600, 1]]],
    // The shared ring, made shorter (1 s) so that a 1.8 s stall loses ~0.8 s.
    ['shared', '/', { ringMs: 1000 }, [[1.5, 1800, 1]]],
  ] as const) {
    it(`${transport}: a page stalled longer than it may loses only the excess, reported live (drops$, stats) and spliced exactly on the server`, async () => {
      const page = await browser.newPage();
      try {
        const seen: DemoSnapshot[] = [];
        let step = 0;
        // Each stall blocks the page's main thread (a long task) while the audio thread goes on.
        const act: Act = async (seconds, p) => {
          const next = stalls[step];
          if (next === undefined) return false;
          if (seconds < next[0]) return true;
          await p.evaluate((ms) => {
            const end = performance.now() + ms;
            while (performance.now() < end);
          }, next[1]);
          await new Promise((r) => setTimeout(r, 300)); // the page catches up; frames flow again
          seen.push(await snapshot(p));
          step++;
          return step < stalls.length;
        };
        const { started, result } = await run(page, path, { transport, ...options }, '', act);
        expect(step).toBe(stalls.length);
        expect(started).toMatchObject({ transport });
        const rate = started.sampleRate;
        // After each stall, live (before stop): the losses so far, as drops$ reported them and in stats.
        stalls.forEach(([, , drops], k) => {
          const s = seen[k] as DemoSnapshot;
          expect(s.drops, `after stall ${k + 1}`).toHaveLength(drops);
          expect(s.stats?.droppedFrames).toBe(s.drops.reduce((n, d) => n + d.to - d.from, 0));
        });
        const c = result.capture;
        const drops = (seen.at(-1) as DemoSnapshot).drops;
        const lost = drops.reduce((n, d) => n + d.to - d.from, 0);
        if (process.env.SHOW_MATCH) process.stdout.write(`${transport} at ${rate} Hz: drops ${JSON.stringify(drops)} (${((lost / rate) * 1000).toFixed(0)} ms)\n`);
        const longest = stalls.at(-1)![1] / 1000;
        const allowance = transport === 'shared' ? 1 : 2;
        // Lost: about the stall past the allowance (the page may run behind a little before and after it).
        expect(lost / rate).toBeGreaterThan((longest - allowance) * 0.5);
        expect(lost / rate).toBeLessThan(longest - allowance + 0.5);
        expect(drops.every((d) => d.cause === (transport === 'shared' ? 'ring' : 'pool'))).toBe(true);
        // The books: the worklet's own totals agree with what the page reported.
        expect(c.worklet).toMatchObject({ exact: true, dropped: lost });
        expect(c.droppedFrames).toBe(lost);
        expect(c.worklet.frames).toBe(c.capturedFrames + lost);
        expect(c.encodedFrames).toBe(c.capturedFrames);
        // The server got the audio on each side of a loss, each resampled on its own (the session's
        // segment ends at the cut), nothing in between: no zeros, no smear. sessionSample is the cut.
        const input = decodeFloat32(result.input as string);
        expect(input.length).toBe(c.encodedFrames);
        expect(result.segments).toHaveLength(drops.length);
        const { parts, expected } = stretchesLikeThePage(input, result.segments, rate, started.kernel as 'wasm');
        drops.forEach((d, k) => expect(d.sessionSample).toBe(parts.slice(0, k + 1).reduce((n, p) => n + p.length, 0)));
        const stored = await storedAudio(demo, demo.sessions.at(-1) as string);
        expect(stored.length).toBe(expected.length);
        expect(Buffer.from(stored.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
        expect(Number(result.finish.capturedSamples)).toBe(expected.length);
        expect(result.finish.notices).not.toContain('TRANSPORT_GAP'); // the session itself lost nothing
        expect(await page.locator('#drops').textContent()).toMatch(/^\d+ ms of audio lost/);
      } finally {
        await page.close();
      }
    });
  }

  it('refuses with typed errors: shared memory without isolation, an unknown microphone, a worklet URL that does not load or that the CSP forbids, an app context at 192 kHz; makes its own context at 48 kHz when the device runs at 192 kHz', async () => {
    const page = await browser.newPage();
    // A device whose native rate the encoder does not take: every AudioContext made without a rate
    // runs at 192 kHz (Chromium makes one at any rate asked for). Each one made is kept, to check it is closed.
    await page.addInitScript(() => {
      const Native = window.AudioContext;
      const made: AudioContext[] = [];
      (window as unknown as { contexts: AudioContext[] }).contexts = made;
      window.AudioContext = class extends Native {
        constructor(options: AudioContextOptions = {}) {
          super(options.sampleRate === undefined ? { ...options, sampleRate: 192_000 } : options);
          made.push(this);
        }
      };
    });
    const contexts = () => page.evaluate(() => (window as unknown as { contexts: AudioContext[] }).contexts.map((c) => ({ rate: c.sampleRate, state: c.state })));
    try {
      const tryStart = (o: DemoStartOptions) => tryStartOn(page, o);
      await page.goto(`${demo.url}/?coi=0`);
      expect(await tryStart({ transport: 'shared' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_SHARED_MEMORY_UNAVAILABLE' });
      await page.goto(`${demo.url}/`);
      expect(await tryStart({ workletUrl: '/no-such-worklet.js' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_WORKLET_LOAD_FAILED' });
      expect(await tryStart({ deviceId: 'no-such-microphone' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_DEVICE_NOT_FOUND' });
      // Under the page's CSP a Blob URL is refused unless the policy allows blob: (only ?worklet=blob does).
      expect(await tryStart({ worklet: 'blob' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_WORKLET_LOAD_FAILED' });
      // Each failed start closed every context it made: the 192 kHz one at once, the 48 kHz one on failure.
      // The unknown microphone made none: the page asks for the microphone before anything else.
      const pair = [{ rate: 192_000, state: 'closed' }, { rate: 48_000, state: 'closed' }];
      expect(await contexts()).toEqual([...pair, ...pair]);
      // The app's own context at 192 kHz is refused; the demo closes the context it made when start fails.
      expect(await tryStart({ sampleRate: 192_000 })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_UNSUPPORTED_RATE' });
      expect(await tryStart({ sampleRate: 48_000, workletUrl: '/no-such-worklet.js' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_WORKLET_LOAD_FAILED' });
      expect((await contexts()).slice(-2)).toEqual([{ rate: 192_000, state: 'closed' }, { rate: 48_000, state: 'closed' }]);
      // startCapture's own context: the 192 kHz one is replaced by one at 48 kHz, and audio flows through it.
      const before = (await contexts()).length;
      const started = await page.evaluate(() => (window as unknown as { demo: DemoApi }).demo.start({}));
      expect(started).toMatchObject({ sampleRate: 48_000, transport: 'shared' });
      expect((await contexts()).slice(before)).toEqual([{ rate: 192_000, state: 'closed' }, { rate: 48_000, state: 'running' }]);
      const until = Date.now() + 10_000;
      while (((await snapshot(page)).stats?.capturedFrames ?? 0) < 24_000 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const result = await stopDemo(page);
      expect(result.capture.capturedFrames).toBeGreaterThanOrEqual(24_000);
      expect(result.capture).toMatchObject({ sampleRate: 48_000, worklet: { exact: true, dropped: 0 } });
      expect(result.capture.sentSamples).toBe(Number(result.finish.capturedSamples));
      expect(result.contextState).toBe('closed');
    } finally {
      await page.close();
    }
  });
});
