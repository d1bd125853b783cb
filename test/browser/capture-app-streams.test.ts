import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { expectExactStretches, finishRun, openLab, pageUntil, platform, startLabRig, watchPlatform, type LabServer, type LabWindow, type PlatformWatch } from './lab.ts';
import { closeRig } from './rig.ts';
import { speechWav } from './support.ts';

/**
 * Streams the app supplies, in real Chromium: the capture never calls getUserMedia for a stream it did
 * not open. A lost track of the app's ends the capture with WEB_AUDIO_DEVICE_LOST (the audio before it
 * exact in the session); with `recovery.reacquire` the app gives the next stream and the session goes
 * on; a closed AudioContext under a stream that still runs only gets a new context. getUserMedia is
 * watched (calls counted, passed through) to prove who opened what. Substituted, as in
 * capture-recovery.test.ts: an unplugged device is track.stop() plus the 'ended' event the browser fires.
 */
const wav = speechWav();
let demo: DemoServer;
let lab: LabServer;
let browser: Browser;

beforeAll(async () => void ({ demo, lab, browser } = await startLabRig('fake-mic-app-streams.wav', wav.pcm)));
afterAll(() => closeRig({ demo, lab, browser }));

const RAW = { echoCancellation: false, noiseSuppression: false, autoGainControl: false };

/** Until the run's capture has handed on `seconds` more audio. */
const captureFor = async (page: import('playwright-core').Page, seconds: number): Promise<void> => {
  const from = await page.evaluate(() => (window as unknown as LabWindow).run.capture.stats.capturedFrames);
  await pageUntil(page, `${seconds} s of audio`, new Function(`const c = window.run.capture; return c.stats.capturedFrames - ${from} >= ${seconds} * c.sampleRate;`) as () => boolean);
};

const endTrack = (page: import('playwright-core').Page): Promise<void> =>
  page.evaluate(() => {
    // Substituted: Chromium cannot unplug its fake device; track.stop() and the 'ended' it would fire.
    const track = (window as unknown as LabWindow).run.capture.stream.getAudioTracks()[0] as MediaStreamTrack;
    track.stop();
    track.dispatchEvent(new Event('ended'));
  });

const eventTypes = (page: import('playwright-core').Page): Promise<string[]> => page.evaluate(() => (window as unknown as LabWindow).run.events.map((e) => e.type));

describe('web-audio: streams the app supplies (Chromium)', () => {
  it('the app\'s own microphone stream is lost: no getUserMedia by the capture, WEB_AUDIO_DEVICE_LOST, the session exact up to the loss', async () => {
    const page = await browser.newPage();
    await page.addInitScript(watchPlatform);
    try {
      const grant = await openLab(page, lab);
      await page.evaluate(async ({ grant, raw }) => {
        const w = window as unknown as LabWindow;
        // The app's own getUserMedia (not openMicrophone()): the capture cannot know what it is.
        const stream = await navigator.mediaDevices.getUserMedia({ audio: raw });
        w.run = await w.lab.run(grant, { stream });
      }, { grant, raw: RAW });
      await captureFor(page, 1.2);
      // A device-list change: the app's stream is no listed device to the capture; nothing is lost.
      await page.evaluate(() => navigator.mediaDevices.dispatchEvent(new Event('devicechange')));
      await pageUntil(page, 'devices-changed', () => (window as unknown as LabWindow).run.events.some((e) => e.type === 'devices-changed'));
      await endTrack(page);
      await pageUntil(page, 'failed', () => (window as unknown as LabWindow).run.events.some((e) => e.type === 'failed'));
      expect(await eventTypes(page)).toEqual(['devices-changed', 'device-lost', 'failed']);
      const state = await page.evaluate(() => {
        const c = (window as unknown as LabWindow).run.capture;
        return { state: c.state, failure: c.failure?.code, message: c.failure?.message, health: c.health.state, present: (window as unknown as LabWindow).run.events[0]?.['present'] };
      });
      expect(state).toMatchObject({ state: 'stopped', failure: 'WEB_AUDIO_DEVICE_LOST', health: 'failed', present: true });
      expect(state.message).toContain('recovery.reacquire');
      const done = await finishRun(page);
      expect(done.stop).toBe('WEB_AUDIO_DEVICE_LOST');
      expect(done.status).toBe('COMPLETED');
      expect(done.cuts).toEqual([]);
      await expectExactStretches(demo, grant.sessionId, done);
      expect(decodeLength(done.input)).toBeGreaterThan(1.2 * 44_100);
      const seen = await platform(page);
      // Only the app's one call; the failure was reported to the page (reportError), nothing unhandled.
      expect(seen).toMatchObject({ calls: 1, openContexts: 0, rejections: [] });
      expect(seen.reported).toEqual(['WEB_AUDIO_DEVICE_LOST']);
    } finally {
      await page.close();
    }
  });

  it('recovery.reacquire: the app gives the next stream (a failed attempt retried), then a closed context keeps the same stream; one session, exact', async () => {
    const page = await browser.newPage();
    await page.addInitScript(watchPlatform);
    try {
      const grant = await openLab(page, lab);
      await page.evaluate(async ({ grant, raw }) => {
        const w = window as unknown as LabWindow & { asked: unknown[] };
        w.asked = [];
        // A processed stream: the microphone through the app's own gain, out of a MediaStreamAudioDestinationNode.
        const mic = await navigator.mediaDevices.getUserMedia({ audio: raw });
        const mix = new AudioContext();
        const out = mix.createMediaStreamDestination();
        const gain = mix.createGain();
        gain.gain.value = 0.5;
        mix.createMediaStreamSource(mic).connect(gain).connect(out);
        const other = (await navigator.mediaDevices.enumerateDevices()).find((d) => d.kind === 'audioinput' && d.deviceId !== 'default');
        w.run = await w.lab.run(grant, {
          stream: out.stream,
          releaseStream: true,
          recovery: {
            nextDelayMs: () => 50,
            reacquire: async (request) => {
              w.asked.push(request);
              if (request.attempt === 1) throw new Error('the app is not ready yet');
              return navigator.mediaDevices.getUserMedia({ audio: { ...raw, deviceId: { exact: other?.deviceId ?? '' } } });
            },
          },
        });
      }, { grant, raw: RAW });
      await captureFor(page, 1.2);
      await endTrack(page);
      await pageUntil(page, 'recovered', () => (window as unknown as LabWindow).run.events.some((e) => e.type === 'recovered'));
      expect(await page.evaluate(() => (window as unknown as { asked: unknown[] }).asked)).toEqual([{ attempt: 1, detail: 'track-ended' }, { attempt: 2, detail: 'track-ended' }]);
      // The app's two getUserMedia calls (its first microphone, its reacquire), none by the capture.
      expect((await platform(page)).calls).toBe(2);
      await captureFor(page, 1.2);

      // The capture's own AudioContext closes under the app's stream, which still runs: a new context, the same stream.
      const before = await page.evaluate(async () => {
        const c = (window as unknown as LabWindow).run.capture;
        const id = c.stream.id;
        await c.context.close();
        return id;
      });
      await pageUntil(page, 'second recovery', () => (window as unknown as LabWindow).run.events.filter((e) => e.type === 'recovered').length === 2);
      const after = await page.evaluate(() => ({ id: (window as unknown as LabWindow).run.capture.stream.id, asked: (window as unknown as { asked: unknown[] }).asked.length }));
      expect(after).toEqual({ id: before, asked: 2 });
      await captureFor(page, 1);
      const types = await eventTypes(page);
      expect(types.filter((t) => t !== 'device-changed' && t !== 'rate-changed')).toEqual(['device-lost', 'gap', 'recovered', 'device-lost', 'gap', 'recovered']);
      const lost = await page.evaluate(() => (window as unknown as LabWindow).run.events.filter((e) => e.type === 'device-lost').map((e) => e['detail']));
      expect(lost).toEqual(['track-ended', 'context-closed']);

      const done = await finishRun(page);
      expect(done.stop).toBe('ok');
      expect(done.gaps.map((g) => g.cause)).toEqual(['device-lost', 'device-lost']);
      const parts = await expectExactStretches(demo, grant.sessionId, done);
      expect(parts.map((p) => p.length > 16_000 * 0.8)).toEqual([true, true, true]);
      const seen = await platform(page);
      expect(seen.calls).toBe(2);
      // releaseStream: the reacquired stream was stopped with the capture (the app's first microphone feeds its own mix: the app's to stop).
      const tracks = await page.evaluate(() => (window as unknown as PlatformWatch).gum.streams.map((s) => s.getAudioTracks()[0]?.readyState));
      expect(tracks).toEqual(['live', 'ended']);
      expect(seen.rejections).toEqual([]);
      expect(seen.reported).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it('recovery.reacquire that answers something else than a stream, then null: no microphone opened, WEB_AUDIO_DEVICE_LOST at that attempt', async () => {
    const page = await browser.newPage();
    await page.addInitScript(watchPlatform);
    try {
      const grant = await openLab(page, lab);
      await page.evaluate(async ({ grant, raw }) => {
        const w = window as unknown as LabWindow & { asked: number[] };
        w.asked = [];
        const stream = await navigator.mediaDevices.getUserMedia({ audio: raw });
        w.run = await w.lab.run(grant, {
          stream,
          recovery: {
            nextDelayMs: () => 20,
            // A buggy app: undefined is a failed attempt (never a reason to open a microphone); null gives up.
            reacquire: async ({ attempt }) => {
              w.asked.push(attempt);
              return (attempt === 1 ? undefined : null) as unknown as MediaStream | null;
            },
          },
        });
      }, { grant, raw: RAW });
      await captureFor(page, 1);
      await endTrack(page);
      await pageUntil(page, 'failed', () => (window as unknown as LabWindow).run.events.some((e) => e.type === 'failed'));
      expect(await page.evaluate(() => (window as unknown as { asked: number[] }).asked)).toEqual([1, 2]);
      const failure = await page.evaluate(() => (window as unknown as LabWindow).run.capture.failure?.message);
      expect(failure).toContain('recovery.reacquire gave no usable one in 2 attempts');
      const done = await finishRun(page);
      expect(done.stop).toBe('WEB_AUDIO_DEVICE_LOST');
      await expectExactStretches(demo, grant.sessionId, done);
      expect(await platform(page)).toMatchObject({ calls: 1, openContexts: 0, rejections: [], reported: ['WEB_AUDIO_DEVICE_LOST'] });
    } finally {
      await page.close();
    }
  });
});

function decodeLength(base64: string): number {
  return Buffer.from(base64, 'base64').length / 4;
}
