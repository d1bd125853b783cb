import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { expectExactStretches, finishRun, openLab, pageUntil, platform, startLabRig, watchPlatform, type LabServer, type LabWindow } from './lab.ts';
import { closeRig } from './rig.ts';
import { speechWav } from './support.ts';

/**
 * setDevice() and stop() racing, in real Chromium with its two fake microphones: stop() while the new
 * device is being opened, stop() while the old graph is being cut (the moment the new graph's worklet
 * node exists), and setDevice() after stop(). Each time: setDevice() settles with a typed outcome,
 * stop() resolves, no track or AudioContext of the capture is left running, nothing is written to
 * the session after stop() resolved, the session holds exactly what was handed on, and nothing is
 * left unhandled. getUserMedia, AudioContext and AudioWorkletNode are watched (passed through).
 */
const wav = speechWav();
let demo: DemoServer;
let lab: LabServer;
let browser: Browser;

beforeAll(async () => void ({ demo, lab, browser } = await startLabRig('fake-mic-races.wav', wav.pcm)));
afterAll(() => closeRig({ demo, lab, browser }));

/** Calls `onNode` (once) right after each AudioWorkletNode is made: the new graph exists, the cut comes next. */
function watchNodes(): void {
  const w = window as unknown as { onNode?: () => void };
  const Native = window.AudioWorkletNode;
  window.AudioWorkletNode = class extends Native {
    constructor(...args: ConstructorParameters<typeof AudioWorkletNode>) {
      super(...args);
      const hook = w.onNode;
      w.onNode = undefined;
      hook?.();
    }
  };
}

describe('web-audio: setDevice() and stop() racing (Chromium)', () => {
  for (const window of ['stop while opening', 'stop while cutting', 'setDevice after stop'] as const) {
    it(`${window}: typed outcomes, nothing left running, nothing written after stop(), the session exact`, async () => {
      const page = await browser.newPage();
      await page.addInitScript(watchPlatform);
      await page.addInitScript(watchNodes);
      try {
        const grant = await openLab(page, lab);
        await page.evaluate(async (grant) => {
          const w = window as unknown as LabWindow;
          w.run = await w.lab.run(grant, {});
        }, grant);
        await pageUntil(page, 'audio', () => (window as unknown as LabWindow).run.capture.stats.capturedFrames > 44_100);
        const outcome = await page.evaluate(async (which) => {
          const w = window as unknown as LabWindow & { onNode?: () => void };
          const c = w.run.capture;
          const current = c.health.device?.id;
          const other = (await navigator.mediaDevices.enumerateDevices()).find((d) => d.kind === 'audioinput' && d.deviceId !== 'default' && d.deviceId !== current)?.deviceId ?? '';
          let stopping: Promise<string> | undefined;
          const stop = (): Promise<string> => (stopping = c.stop().then(() => 'ok', (e: { code?: string }) => e.code ?? String(e)).finally(() => (w.run.stopped = true)));
          let switching: Promise<string>;
          if (which === 'stop while opening') {
            switching = c.setDevice(other).then(() => 'switched', (e: { code?: string }) => e.code ?? String(e));
            void stop();
          } else if (which === 'stop while cutting') {
            // The new graph's node is made as its build ends; the cut of the old graph starts right after.
            w.onNode = () => setTimeout(() => void stop(), 0);
            switching = c.setDevice(other).then(() => 'switched', (e: { code?: string }) => e.code ?? String(e));
          } else {
            void stop();
            switching = c.setDevice(other).then(() => 'switched', (e: { code?: string }) => e.code ?? String(e));
          }
          const [setDevice, stopped] = await Promise.all([switching, (async () => {
            while (stopping === undefined) await new Promise((r) => setTimeout(r, 5));
            return stopping;
          })()]);
          return { setDevice, stopped, other };
        }, window);
        expect(outcome.other).not.toBe('');
        expect(outcome).toMatchObject({ setDevice: 'WEB_AUDIO_STOPPED', stopped: 'ok' });
        const message = await page.evaluate(() => (window as unknown as LabWindow).run.capture.setDevice('x').catch((e: Error) => e.message));
        expect(message).toContain('after stop()');
        // Settled: no track or context of the capture's left running (the page opened none of its own).
        await new Promise((r) => setTimeout(r, 300));
        const seen = await platform(page);
        expect(seen).toMatchObject({ liveTracks: 0, openContexts: 0, rejections: [], reported: [] });
        expect(seen.calls).toBe(window === 'setDevice after stop' ? 1 : 2);
        const done = await finishRun(page);
        expect(done.stop).toBe('ok');
        expect(await page.evaluate(() => (window as unknown as LabWindow).run.writesAfterStop)).toBe(0);
        // The old device's audio only, one stretch: the switch never took over.
        expect(done.gaps).toEqual([]);
        await expectExactStretches(demo, grant.sessionId, done);
        const books = await page.evaluate(() => {
          const r = (window as unknown as LabWindow).run.capture.result!;
          return { frames: r.worklet.frames, captured: r.capturedFrames, dropped: r.droppedFrames, exact: r.worklet.exact };
        });
        // Every frame the worklets counted reached the page (the cut graph's totals included).
        expect(books.frames).toBe(books.captured + books.dropped);
        expect(books.exact).toBe(true);
      } finally {
        await page.close();
      }
    });
  }
});
