import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { CaptureGap } from '@soundclone/core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import type { DemoApi, DemoSnapshot, DemoStartOptions, DemoStopResult } from '../../packages/web-audio/demo/page/main.ts';
import { snapshot, startKeepingInput, stopDemo } from './demo-page.ts';
import { closeRig, startDemoRig, storedAudio } from './rig.ts';
import { ARTIFACTS, WAV_RATE, align, decodeFloat32, encodeLikeThePage, launchChromium, speechWav, stretchesLikeThePage } from './support.ts';

/**
 * Device loss and recovery in real Chromium: the demo page captures the fake microphone into one
 * realtime session on the reference server while the test takes the device away in the ways Chromium
 * lets it (closing and suspending the AudioContext, revoking the microphone permission through the
 * DevTools protocol, a second fake device for setDevice()). Where Chromium cannot produce a condition,
 * the platform call substituted is named at the place it is made. After every run: the server holds
 * exactly each stretch of captured audio resampled on its own (the audio on each side of a gap, nothing
 * in between), each gap sits at its exact session sample, the session's capturedSamples agree, and
 * every stretch after a recovery is the fake microphone's audio (the file restarts with each
 * getUserMedia). Detection and recovery times are printed, not asserted.
 */
const wav = speechWav();
let demo: DemoServer;
let browser: Browser;
let wavPath: string;

beforeAll(async () => void ({ demo, browser, wavPath } = await startDemoRig('fake-mic-recovery.wav', wav.pcm)));
afterAll(() => closeRig({ demo, browser }));

type Win = { demo: DemoApi };

/** Waits until the capture has delivered `frames` more frames than at the call (bounded). */
async function captureFor(page: Page, seconds: number): Promise<void> {
  const start = (await snapshot(page)).stats?.capturedFrames ?? 0;
  const until = Date.now() + 15_000;
  for (;;) {
    const s = await snapshot(page);
    const rate = s.stats?.sampleRate ?? 44_100;
    if ((s.stats?.capturedFrames ?? 0) - start >= seconds * rate || Date.now() > until) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits for an event of `type` after `after` events were seen (bounded); returns the events then. */
async function waitForEvent(page: Page, type: string, after: number, timeoutMs = 15_000): Promise<DemoSnapshot['events']> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const events = (await snapshot(page)).events;
    if (events.slice(after).some((e) => e.type === type) || Date.now() > until) return events;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The capture's clock (ms since startCapture) when the test acted, so detection can be timed. */
const actAt = (page: Page, action: string): Promise<number> =>
  page.evaluate(async (a) => {
    const c = (window as unknown as Win).demo.current();
    if (c === undefined) throw new Error('no capture');
    const at = c.health.atMs;
    if (a === 'end-track') {
      // Substituted: Chromium cannot unplug its fake device. track.stop() is what the browser does to
      // the track when the device goes, but per spec it fires no 'ended' for a stop() by the page, so
      // the test dispatches the 'ended' the browser would have fired.
      const track = c.stream.getAudioTracks()[0] as MediaStreamTrack;
      track.stop();
      track.dispatchEvent(new Event('ended'));
    } else if (a === 'close-context') {
      await c.context.close(); // real: the context closes, its statechange fires
    } else if (a === 'suspend-context') {
      await c.context.suspend(); // real: the audio thread stops; the capture resumes its own context
    } else if (a === 'device-removed') {
      // Substituted: the fake device list never changes in Chromium; enumerateDevices() is made to
      // leave the capturing device out (once), and devicechange fired, as when it is unplugged in a
      // browser that does not end its track.
      const id = c.health.device?.id;
      const native = navigator.mediaDevices.enumerateDevices.bind(navigator.mediaDevices);
      navigator.mediaDevices.enumerateDevices = async () => {
        navigator.mediaDevices.enumerateDevices = native;
        return (await native()).filter((d) => d.deviceId !== id);
      };
      navigator.mediaDevices.dispatchEvent(new Event('devicechange'));
    } else if (a === 'mute-track') {
      // Substituted: Chromium's fake device is never muted by the OS; the track's 'mute' and 'unmute'
      // events are what the browser fires then.
      const track = c.stream.getAudioTracks()[0] as MediaStreamTrack;
      track.dispatchEvent(new Event('mute'));
      const reason = c.health.reason;
      track.dispatchEvent(new Event('unmute'));
      return reason === 'track muted' ? at : -1;
    } else if (a === 'devicechange') {
      // Substituted: the fake device list never changes in Chromium; the event is what the browser
      // fires when a device is plugged in. The capturing device is still listed: nothing is lost.
      navigator.mediaDevices.dispatchEvent(new Event('devicechange'));
    }
    return at;
  }, action);

const timings: string[] = [];

/** Checks the server got exactly each stretch resampled on its own, the gaps at their exact samples. */
async function verifyExact(result: DemoStopResult, sessionId: string, kernel: string, gaps: CaptureGap[], closedContext: boolean): Promise<Int16Array[]> {
  const input = decodeFloat32(result.input as string);
  const c = result.capture;
  // Every frame a worklet saw reached the page, over every device's graph.
  // A graph whose AudioContext was closed under it cannot confirm its count (its worklet is gone), so
  // `exact` is false then; the frames counted are those that reached the page.
  expect(c.worklet.exact).toBe(!closedContext);
  expect(c.worklet.frames).toBe(c.capturedFrames + c.worklet.dropped);
  expect(input.length).toBe(c.encodedFrames);
  expect(result.rates).toHaveLength(result.segments.length + 1);
  const { parts, expected, cuts } = stretchesLikeThePage(input, result.segments, result.rates, kernel as 'wasm');
  const stored = await storedAudio(demo, sessionId);
  expect(stored.length).toBe(expected.length);
  expect(Buffer.from(stored.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
  expect(Number(result.finish.capturedSamples)).toBe(expected.length);
  expect(Number(result.finish.receivedSamples)).toBe(expected.length);
  expect(c.sentSamples).toBe(expected.length);
  // Each gap's atSample is a segment boundary, in order: exactly where the audio before it ends.
  let from = 0;
  for (const gap of gaps) {
    const k = cuts.indexOf(gap.atSample, from);
    expect(k, `gap at ${gap.atSample} among cuts ${cuts.join(',')}`).toBeGreaterThanOrEqual(0);
    from = k + 1;
    // The capture timeline: the gap's length is the clock's, placed after every earlier gap.
    expect(gap.to - gap.from).toBe(Math.max(0, Math.round((gap.toMs - gap.fromMs) * 16)));
  }
  expect(result.finish.notices).not.toContain('TRANSPORT_GAP');
  return parts;
}

/** A stretch after a recovery is the fake microphone's file again (it restarts with each getUserMedia). */
function expectMicrophoneAudio(part: Int16Array, label: string): void {
  const reference = Float32Array.from(encodeLikeThePage(wav.samples, WAV_RATE, 'wasm'), (v) => v / 32768);
  const captured = Float32Array.from(part, (v) => v / 32768);
  const match = align(captured, reference, 16_000);
  expect(match.envelope, `${label}: ${JSON.stringify(match)}`).toBeGreaterThan(0.9);
}

async function start(page: Page, options: DemoStartOptions = {}): Promise<{ sampleRate: number; kernel: string }> {
  return (await startKeepingInput(page, `${demo.url}/`, options)).started;
}

describe('web-audio capture recovery in Chromium', () => {
  afterAll(() => {
    process.stdout.write(`capture recovery timings (detection: action to the capture's event; recovery: detection to the next device's first frame):\n  ${timings.join('\n  ')}\n`);
  });

  it('a lost track, a closed and a suspended AudioContext, device-list changes, a muted track and setDevice(): one session goes on, every gap exact', async () => {
    const page = await browser.newPage();
    try {
      const started = await start(page);
      await captureFor(page, 1.2);

      // 1. The track ends (device unplugged): the same device is opened again.
      let seen = (await snapshot(page)).events.length;
      let at = await actAt(page, 'end-track');
      let events = await waitForEvent(page, 'recovered', seen);
      const lost = events.slice(seen).find((e) => e.type === 'device-lost') as Extract<DemoSnapshot['events'][number], { type: 'device-lost' }>;
      const recovered = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(lost).toMatchObject({ cause: 'device-lost', detail: 'track-ended' });
      expect(recovered).toMatchObject({ cause: 'device-lost' });
      timings.push(`track ended: detected ${Math.round(lost.atMs - at)} ms, recovered ${recovered.afterMs} ms after`);
      await captureFor(page, 1.3);

      // 2. The AudioContext is closed: a new graph with a new context of the capture's own.
      seen = events.length;
      at = await actAt(page, 'close-context');
      events = await waitForEvent(page, 'recovered', seen);
      const closed = events.slice(seen).find((e) => e.type === 'device-lost') as Extract<DemoSnapshot['events'][number], { type: 'device-lost' }>;
      const back = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(closed).toMatchObject({ detail: 'context-closed' });
      timings.push(`context closed: detected ${Math.round(closed.atMs - at)} ms, recovered ${back.afterMs} ms after`);
      await captureFor(page, 1.3);

      // 3. The AudioContext is suspended: the capture resumes its own context; a gap of cause 'suspended'.
      seen = events.length;
      at = await actAt(page, 'suspend-context');
      events = await waitForEvent(page, 'recovered', seen);
      const suspended = events.slice(seen).find((e) => e.type === 'suspended');
      const resumed = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(suspended).toBeDefined();
      expect(resumed).toMatchObject({ cause: 'suspended' });
      timings.push(`context suspended: detected ${Math.round((suspended as { atMs: number }).atMs - at)} ms, resumed ${resumed.afterMs} ms after`);
      await captureFor(page, 0.8);

      // 4. A device-list change that keeps the capturing device: reported, nothing lost.
      seen = events.length;
      await actAt(page, 'devicechange');
      events = await waitForEvent(page, 'devices-changed', seen);
      expect(events.slice(seen).find((e) => e.type === 'devices-changed')).toMatchObject({ present: true });
      expect(events.slice(seen).some((e) => e.type === 'device-lost')).toBe(false);

      // 5. The capturing device leaves the device list: lost, and opened again (it is still there).
      seen = events.length;
      at = await actAt(page, 'device-removed');
      events = await waitForEvent(page, 'recovered', seen);
      const removed = events.slice(seen).find((e) => e.type === 'device-lost') as Extract<DemoSnapshot['events'][number], { type: 'device-lost' }>;
      const reopened = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(events.slice(seen).find((e) => e.type === 'devices-changed')).toMatchObject({ present: false });
      expect(removed).toMatchObject({ detail: 'device-removed' });
      timings.push(`device left the list: detected ${Math.round(removed.atMs - at)} ms, recovered ${reopened.afterMs} ms after`);
      await captureFor(page, 1.3);

      // 6. The track muted and unmuted by the system: reported, nothing cut.
      seen = events.length;
      expect(await actAt(page, 'mute-track')).toBeGreaterThanOrEqual(0); // the health said 'track muted' meanwhile
      events = await waitForEvent(page, 'track-unmuted', seen);
      expect(events.slice(seen).map((e) => e.type)).toEqual(['track-muted', 'track-unmuted']);

      // 7. setDevice(): the second fake microphone, through the same path.
      const other = await page.evaluate(async () => {
        const c = (window as unknown as Win).demo.current()!;
        const current = c.health.device?.id;
        const inputs = (await navigator.mediaDevices.enumerateDevices()).filter((d) => d.kind === 'audioinput' && d.deviceId !== 'default' && d.deviceId !== current);
        return inputs[0]?.deviceId ?? '';
      });
      expect(other).not.toBe('');
      // A device that cannot be opened: setDevice() rejects with the typed error, the capture goes on as it was.
      const refused = await page.evaluate(() => (window as unknown as Win).demo.current()!.setDevice('no-such-microphone').then(() => 'resolved', (e: { code?: string }) => e.code ?? 'error'));
      expect(refused).toBe('WEB_AUDIO_DEVICE_NOT_FOUND');
      expect((await snapshot(page)).health).toMatchObject({ state: 'running', gaps: 4 });
      seen = (await snapshot(page)).events.length;
      const t0 = await page.evaluate(async (id) => {
        const c = (window as unknown as Win).demo.current()!;
        const at = c.health.atMs;
        await c.setDevice(id);
        return at;
      }, other);
      events = await waitForEvent(page, 'recovered', seen);
      const changed = events.slice(seen).find((e) => e.type === 'device-changed') as Extract<DemoSnapshot['events'][number], { type: 'device-changed' }>;
      const switched = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(changed.to.id).toBe(other);
      expect(switched).toMatchObject({ cause: 'device-changed' });
      timings.push(`setDevice: first frame of the new device ${Math.round(switched.atMs - t0)} ms after the call`);
      await captureFor(page, 1.5);

      const live = await snapshot(page);
      expect(live.health).toMatchObject({ state: 'running', gaps: 5, recoveries: 4 });
      expect(live.health?.timeToFirstAudioMs).toBeGreaterThan(0);
      expect(live.healthText).toContain('kHz');
      const gaps = events.filter((e): e is Extract<DemoSnapshot['events'][number], { type: 'gap' }> => e.type === 'gap').map((e) => e.gap);
      expect(gaps.map((g) => g.cause)).toEqual(['device-lost', 'device-lost', 'suspended', 'device-lost', 'device-changed']);
      expect(live.health?.gapSamples).toBe(gaps.reduce((n, g) => n + g.to - g.from, 0));
      timings.push(`gaps (ms missing): ${gaps.map((g) => `${g.cause} ${Math.round(g.toMs - g.fromMs)}`).join(', ')}`);

      const result = await stopDemo(page);
      const parts = await verifyExact(result, live.sessionId as string, started.kernel, gaps, true);
      expect(result.finish.status).toBe('COMPLETED');
      // The stretches after each device (re)open are the fake microphone's file again.
      expect(parts).toHaveLength(result.segments.length + 1);
      let checked = 0;
      parts.forEach((part, k) => {
        const startSample = parts.slice(0, k).reduce((n, p) => n + p.length, 0);
        const gap = gaps.find((g) => g.atSample === startSample);
        if (k > 0 && gap !== undefined && gap.cause !== 'suspended' && part.length > 16_000) {
          expectMicrophoneAudio(part, `after the ${gap.cause} gap at ${startSample}`);
          checked++;
        }
      });
      expect(checked).toBeGreaterThanOrEqual(4); // after the lost track, the closed context, the removed device and the switch
    } finally {
      await page.close();
    }
  });

  it('the device comes back at another rate: the session resamples from the new rate on, exact on both sides', async () => {
    const page = await browser.newPage();
    // Substituted: Chromium's fake device always runs at one rate, so the device "now running at
    // 48 kHz" (a headset that switched profile) is an AudioContext made without a rate after the first
    // one, running at 48 kHz: what the capture's next graph gets from a device whose rate changed.
    await page.addInitScript(() => {
      const Native = window.AudioContext;
      let made = 0;
      window.AudioContext = class extends Native {
        constructor(options: AudioContextOptions = {}) {
          super(options.sampleRate === undefined && made++ > 0 ? { ...options, sampleRate: 48_000 } : options);
        }
      };
    });
    try {
      const started = await start(page);
      expect(started.sampleRate).toBe(44_100);
      await captureFor(page, 1.2);
      const seen = (await snapshot(page)).events.length;
      const at = await actAt(page, 'end-track');
      const events = await waitForEvent(page, 'recovered', seen);
      const changed = events.slice(seen).find((e) => e.type === 'rate-changed');
      const recovered = events.slice(seen).find((e) => e.type === 'recovered') as Extract<DemoSnapshot['events'][number], { type: 'recovered' }>;
      expect(changed).toMatchObject({ fromRate: 44_100, toRate: 48_000 });
      timings.push(`rate change 44.1 -> 48 kHz on recovery: recovered ${recovered.afterMs} ms after detection (${Math.round(recovered.atMs - at)} ms after the track ended)`);
      await captureFor(page, 1.5);
      const live = await snapshot(page);
      expect(live.health?.device).toMatchObject({ sampleRate: 48_000 });
      expect(live.healthText).toContain('48.0 kHz');
      const gaps = events.filter((e): e is Extract<DemoSnapshot['events'][number], { type: 'gap' }> => e.type === 'gap').map((e) => e.gap);
      const result = await stopDemo(page);
      expect(result.rates).toEqual([44_100, 48_000]);
      const parts = await verifyExact(result, live.sessionId as string, started.kernel, gaps, false);
      expect(parts).toHaveLength(2);
      expectMicrophoneAudio(parts[1] as Int16Array, 'after the rate change');
    } finally {
      await page.close();
    }
  });

  it('the microphone permission revoked and no device back: bounded retries, then WEB_AUDIO_DEVICE_LOST; the audio before is exact', async () => {
    // A browser that does not grant every prompt: the page's microphone comes from its context's
    // permission, which the test then revokes for real (Playwright clears it through the DevTools
    // protocol): Chromium ends the live track and refuses getUserMedia from then on. No substitution.
    const strict = await launchChromium(wavPath, { autoAccept: false });
    const context = await strict.newContext({ permissions: ['microphone'] });
    const page = await context.newPage();
    try {
      const started = await start(page, { recoveryAttempts: 3 });
      await captureFor(page, 1.5);
      const seen = (await snapshot(page)).events.length;
      const at = await page.evaluate(() => (window as unknown as Win).demo.current()!.health.atMs);
      await context.clearPermissions();
      // What the visitor reads while the capture retries: polled until it gives up.
      const shown = new Set<string>();
      let events: DemoSnapshot['events'] = [];
      for (const until = Date.now() + 15_000; Date.now() < until; await new Promise((r) => setTimeout(r, 20))) {
        const now = await snapshot(page);
        if (now.healthText.endsWith('reconnecting to default') && !shown.has(now.healthText)) {
          // What the visitor sees while the capture looks for a microphone.
          const png = await page.screenshot({ path: join(ARTIFACTS, 'capture-reconnecting.png') });
          expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
        }
        shown.add(now.healthText);
        events = now.events;
        if (events.slice(seen).some((e) => e.type === 'failed')) break;
      }
      expect([...shown].some((t) => t.endsWith('device lost — reconnecting to default')), [...shown].join(' | ')).toBe(true);
      const lost = events.slice(seen).find((e) => e.type === 'device-lost') as { atMs: number; detail: string };
      const failed = events.slice(seen).find((e) => e.type === 'failed') as { code: string; atMs: number };
      expect(lost).toMatchObject({ detail: 'track-ended' });
      expect(failed).toMatchObject({ code: 'WEB_AUDIO_DEVICE_LOST' });
      expect(events.slice(seen).some((e) => e.type === 'recovered')).toBe(false);
      timings.push(`permission revoked: detected ${Math.round(lost.atMs - at)} ms (the test's clock read to Chromium ending the track), gave up after 3 attempts ${Math.round(failed.atMs - lost.atMs)} ms later`);
      const s = await snapshot(page);
      expect(s.captureState).toBe('stopped');
      expect(s.healthText).toContain('no microphone came back');
      expect(s.message).toContain('The microphone was lost');
      // The capture stopped by itself; the demo still finishes the session with what came before the loss.
      const result = await stopDemo(page);
      expect(result.failure).toBe('WEB_AUDIO_DEVICE_LOST');
      expect(result.finish.status).toBe('COMPLETED');
      const parts = await verifyExact(result, s.sessionId as string, started.kernel, [], false);
      expect(parts).toHaveLength(1);
      expect(s.health).toMatchObject({ state: 'failed', recoveries: 0 });
    } finally {
      await page.close();
      await strict.close();
    }
  });
});
