import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { expectExactStretches, finishRun, openLab, pageUntil, platform, startLabRig, watchPlatform, type LabServer, type LabWindow } from './lab.ts';
import { closeRig } from './rig.ts';
import { speechWav } from './support.ts';

/**
 * A session that refuses a graph replacement, in real Chromium with its two fake microphones: it
 * refuses the new graph's rate (setInputFormat() throws at the install, for a setDevice() and for a
 * lost device's replacement), or it refuses the cut (markDiscontinuity() throws once, as the old
 * graph is cut for a setDevice()). Substituted: the refusal, as a custom CaptureSession may refuse
 * (the real session refuses setInputFormat() only inside a segment, which a capture never leaves open
 * at a cut); everything else is the real session. Each time the capture fails by itself with
 * WEB_AUDIO_CAPTURE_FAILED: one 'failed' event, reported once (reportError), capture.failure and
 * stop()'s rejection, a setDevice() under way rejected with it; no track or AudioContext of the
 * capture's is left running (the new device's included), nothing is unhandled, and the session holds
 * exactly what was handed on before the failure.
 */
const wav = speechWav();
let demo: DemoServer;
let lab: LabServer;
let browser: Browser;

beforeAll(async () => void ({ demo, lab, browser } = await startLabRig('fake-mic-session-refuses.wav', wav.pcm)));
afterAll(() => closeRig({ demo, lab, browser }));

const CASES = [
  { name: 'setDevice(), the new rate refused', refuses: 'rate', by: 'setDevice' },
  { name: "a lost device's replacement, the new rate refused", refuses: 'rate', by: 'loss' },
  { name: 'setDevice(), the cut refused', refuses: 'cut', by: 'setDevice' },
] as const;

describe('web-audio: a session that refuses a graph replacement (Chromium)', () => {
  for (const c of CASES) {
    it(`${c.name}: one 'failed' event, reported once, stopped, the new device released`, async () => {
      const page = await browser.newPage();
      await page.addInitScript(watchPlatform);
      try {
        const grant = await openLab(page, lab);
        await page.evaluate(async (grant) => {
          const w = window as unknown as LabWindow;
          w.run = await w.lab.run(grant, { recovery: { nextDelayMs: () => 0 } });
        }, grant);
        await pageUntil(page, 'audio', () => (window as unknown as LabWindow).run.capture.stats.capturedFrames > 44_100);
        const other = await page.evaluate(async ({ refuses, by }) => {
          const w = window as unknown as LabWindow & { switching?: Promise<string> };
          const capture = w.run.capture;
          const session = w.run.session;
          if (refuses === 'rate') {
            session.setInputFormat = () => {
              throw new Error('this session takes no other format');
            };
          } else {
            const native = session.markDiscontinuity.bind(session);
            session.markDiscontinuity = () => {
              session.markDiscontinuity = native; // the cut is refused, nothing after it
              throw new Error('this session refuses the cut');
            };
          }
          if (by === 'loss') {
            await capture.context.close(); // real: the context closes; the recovery opens the microphone again
            return 'none';
          }
          const current = capture.health.device?.id;
          const other = (await navigator.mediaDevices.enumerateDevices()).find((d) => d.kind === 'audioinput' && d.deviceId !== 'default' && d.deviceId !== current)?.deviceId ?? '';
          w.switching = capture.setDevice(other).then(() => 'switched', (e: { code?: string }) => e.code ?? String(e));
          return other;
        }, c);
        expect(other).not.toBe('');
        await pageUntil(page, 'failed', () => (window as unknown as LabWindow).run.events.some((e) => e.type === 'failed'), 8000);
        await pageUntil(page, 'stopped', () => (window as unknown as LabWindow).run.capture.state === 'stopped', 8000);
        // A setDevice() under way rejects with the capture's failure.
        const setDevice = await page.evaluate(() => (window as unknown as { switching?: Promise<string> }).switching ?? 'none');
        expect(setDevice).toBe(c.by === 'loss' ? 'none' : 'WEB_AUDIO_CAPTURE_FAILED');
        // Settled: a second report or event would have come by now.
        await new Promise((r) => setTimeout(r, 300));
        const state = await page.evaluate(() => {
          const run = (window as unknown as LabWindow).run;
          return { events: run.events.map((e) => e.type), failed: run.events.filter((e) => e.type === 'failed').map((e) => e['error']), failure: run.capture.failure?.code, health: run.capture.health.state };
        });
        expect(state).toEqual({
          events: c.by === 'loss' ? ['device-lost', 'failed'] : ['failed'],
          failed: ['WEB_AUDIO_CAPTURE_FAILED'],
          failure: 'WEB_AUDIO_CAPTURE_FAILED',
          health: 'failed',
        });
        // The new device opened (a second getUserMedia) and did not take over: its track and context are released too.
        expect(await platform(page)).toEqual({ calls: 2, liveTracks: 0, openContexts: 0, rejections: [], reported: ['WEB_AUDIO_CAPTURE_FAILED'] });
        const done = await finishRun(page);
        expect(done.stop).toBe('WEB_AUDIO_CAPTURE_FAILED');
        expect(await page.evaluate(() => (window as unknown as LabWindow).run.writesAfterStop)).toBe(0);
        // The old device's audio only, one stretch: the new graph never delivered.
        expect(done.gaps).toEqual([]);
        // A refused cut left the resampler's tail in the session until finish() flushed it: the
        // result, made at stop(), lacks those few samples and nothing else.
        const tail = Number(done.capturedSamples) - done.sentSamples;
        if (c.refuses === 'cut') expect(tail > 0 && tail < 100, `a resampler tail, ${tail} samples`).toBe(true);
        else expect(tail).toBe(0);
        await expectExactStretches(demo, grant.sessionId, { ...done, sentSamples: done.sentSamples + tail });
      } finally {
        await page.close();
      }
    });
  }
});
