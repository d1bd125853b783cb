import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Page } from 'playwright-core';
import { SoundClone } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import type { DemoStartOptions, DemoStopResult, DemoSnapshot } from '../../packages/web-audio/demo/page/main.ts';
import { snapshot, startKeepingInput, stopDemo } from './demo-page.ts';
import { closeRig, startDemoRig, storedAudio } from './rig.ts';
import { WAV_RATE, speechWav } from './support.ts';

/**
 * The voice gate in the capture worklet, in real Chromium: the fake microphone plays three "lines" of
 * tone bursts after a 4 s lead-in (the first 2 s of a capture may read as speech: see checkGated),
 * with 2.5 s pauses; the demo page captures it ungated, then gated through the shared ring and through
 * transferred batches, into sessions on the reference server. Checked against the ungated run: the
 * same lines, with silence skipped (declared, not sent), no gap, billed for the audio only, speech
 * edges where the lines are; a socket cut in the middle of a skip loses nothing; a mute mid-utterance
 * ends it; and a server that does not list skip-frames gets the silence as audio.
 */
const PAUSES = [2500, 2500, 1500] as const;
// First words whose recogniser features sit mid-bucket (support.ts), so lines can be compared run to run.
const LEAD_MS = 4000;
const wav = speechWav({ leadMs: LEAD_MS, pausesMs: PAUSES, firstWords: [[200, 200, 0.355], [500, 400, 0.355], [600, 400, 0.355]] });
const wavSeconds = wav.pcm.length / WAV_RATE;
/** Where each line starts and how long it lasts in the WAV, ms (its first word, 110 ms, then 300 ms of "bob"). */
const LINES = [{ at: LEAD_MS, ms: 610 }, { at: LEAD_MS + 610 + 2500, ms: 810 }, { at: LEAD_MS + 610 + 2500 + 810 + 2500, ms: 810 }];
let demo: DemoServer;
let browser: Awaited<ReturnType<typeof startDemoRig>>['browser'];

beforeAll(async () => void ({ demo, browser } = await startDemoRig('fake-mic-gate.wav', wav.pcm)));
afterAll(() => closeRig({ demo, browser }));

interface Run {
  readonly result: DemoStopResult;
  readonly during: DemoSnapshot[];
  readonly after: DemoSnapshot;
  readonly sessionId: string;
}

/** Captures the whole WAV with `options`; `act` runs on every poll with the snapshot (a fault mid-skip). */
async function capture(options: DemoStartOptions, act: (s: DemoSnapshot, page: Page) => void | Promise<void> = () => undefined, url = '/'): Promise<Run> {
  const page: Page = await browser.newPage();
  try {
    const { started, errors } = await startKeepingInput(page, `${demo.url}${url}`, options);
    const during: DemoSnapshot[] = [];
    const until = Date.now() + 30_000;
    for (;;) {
      const s = await snapshot(page);
      during.push(s);
      await act(s, page);
      if ((s.stats?.capturedFrames ?? 0) / started.sampleRate >= wavSeconds - 0.1 || Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const result = await stopDemo(page);
    const after = await snapshot(page);
    expect(errors).toEqual([]);
    return { result, during, after, sessionId: demo.sessions.at(-1) as string };
  } finally {
    await page.close();
  }
}

/** What every gated run must show, against the ungated one. */
async function checkGated(run: Run, plain: Run, transport: 'shared' | 'transfer'): Promise<void> {
  const { result, after } = run;
  const c = result.capture;
  expect(c.transport).toBe(transport);
  // The books: every frame the worklet saw went to the session, as audio or as skipped time.
  expect(c.worklet.exact).toBe(true);
  expect(c.worklet.frames).toBe(c.capturedFrames);
  expect(c.encodedFrames).toBe(c.capturedFrames);
  expect(c.skippedFrames).toBeGreaterThan(0);
  // Skipped: most of each 2.5 s pause (all but the pre-roll, the hangover and the 20 ms grid).
  const skipped = result.sessionStats.skippedSamples;
  expect(skipped / 16_000).toBeGreaterThan(2 * (2.5 - 0.4 - 0.3 - 0.1));
  // Sent in full and declared in full: the server received every captured sample, no transport gap.
  expect(result.finish.status).toBe('COMPLETED');
  expect(result.finish.notices).not.toContain('TRANSPORT_GAP');
  expect(result.finish.receivedSamples).toBe(result.finish.capturedSamples);
  expect(Number(result.finish.capturedSamples)).toBe(c.sentSamples);
  // The same lines as the ungated run.
  expect(result.finish.lines).toEqual(plain.result.finish.lines);
  expect(result.finish.lines.length).toBe(3);
  // Billed for the audio only.
  const client = new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl, maxRetries: 0 });
  const view = await client.stt.realtime.get(run.sessionId);
  const task = await client.stt.transcriptions.get(view.transcriptionId);
  expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((Number(result.finish.receivedSamples) - skipped) / 16)));
  // The skipped stretches are zeros in the stored audio, the rest is audio (the noise floor is never 0).
  const stored = await storedAudio(demo, run.sessionId);
  expect(stored.length).toBe(Number(result.finish.receivedSamples));
  let zeros = 0;
  for (const v of stored) if (v === 0) zeros++;
  expect(zeros).toBeGreaterThanOrEqual(skipped);
  // Speech edges: one utterance per line, each as long as its line, spaced as the lines are.
  const starts = after.gate.speech.filter((e) => e.event === 'speech.start').map((e) => e.sample);
  const ends = after.gate.speech.filter((e) => e.event === 'speech.end').map((e) => e.sample);
  if (process.env['SHOW_GATE']) process.stdout.write(`${transport}: ${JSON.stringify(after.gate.speech)} skipped ${skipped} lines ${JSON.stringify(result.finish.lines)}\n`);
  // The capture opens on digital silence (Chromium's source node gives zeros until the device's first
  // buffer): the default engine's noise floor (the minimum over 2 s) stays at its absolute floor
  // (-80 dBFS) until those zeros leave its window, so the WAV's -63 dBFS hiss may read as speech for up
  // to 2 s at the start. That utterance, when there is one, is the only one before the first line.
  const early = starts.length - 3;
  expect(early === 0 || early === 1, JSON.stringify(after.gate.speech)).toBe(true);
  if (early === 1) {
    expect(starts[0]! / 16).toBeLessThan(200);
    expect(ends[0]! / 16).toBeLessThanOrEqual(2100);
  }
  const lineStarts = starts.slice(early);
  const lineEnds = ends.slice(early);
  expect(lineEnds.length).toBe(3);
  for (let k = 0; k < 3; k++) {
    const ms = (lineEnds[k]! - lineStarts[k]!) / 16;
    expect(Math.abs(ms - LINES[k]!.ms), `line ${k}: ${ms} ms`).toBeLessThanOrEqual(60);
    if (k > 0) expect(Math.abs((lineStarts[k]! - lineStarts[k - 1]!) / 16 - (LINES[k]!.at - LINES[k - 1]!.at)), `start ${k}`).toBeLessThanOrEqual(80);
  }
  // The first line's pre-roll was sent: its start is not in skipped time (the stored audio is not zero there).
  const onset = lineStarts[0]!;
  const before = stored.subarray(onset - 16 * 200, onset);
  expect(before.filter((v) => v === 0).length, 'the 200 ms before the first onset were sent').toBeLessThan(before.length / 4);
  // The page showed it: speech while a line played, silence after, and the share saved.
  expect(run.during.some((s) => s.gate.activity === 'speech')).toBe(true);
  expect(after.gate.activity).toBe('silence');
  expect(after.gate.saved).toMatch(/^saved \d+ %$/);
  expect(Number(/\d+/.exec(after.gate.saved)![0])).toBe(Math.round((skipped / Number(result.finish.capturedSamples)) * 100));
}

describe('the capture worklet\'s voice gate in Chromium', () => {
  let plain: Run;
  beforeAll(async () => {
    plain = await capture({});
    expect(plain.result.finish.lines.length).toBe(3);
    expect(plain.result.sessionStats.skippedSamples).toBe(0);
    expect(plain.after.gate).toMatchObject({ on: false, activity: '', saved: '' });
  }, 60_000);

  it('shared ring (isolated page, 44.1 kHz): the same lines as ungated, silence skipped, billed for audio only; a socket cut in the middle of a skip loses nothing', async () => {
    let cut = false;
    const run = await capture({ gate: true, transport: 'shared' }, (s) => {
      // In the pause after the first line: its utterance ended, skips are going out.
      if (cut || s.gate.speech.filter((e) => e.event === 'speech.end').length < 1 || (s.stats?.skippedFrames ?? 0) === 0) return;
      cut = true;
      expect((demo.server as RunningServer).faults.socket.closeSocket(s.sessionId as string, 4000, 'test: cut mid-skip')).toBe(true);
    });
    expect(cut).toBe(true);
    expect(run.after.reconnects).toBe(1);
    await checkGated(run, plain, 'shared');
  }, 60_000);

  it('a server that does not list skip-frames: the worklet still gates, the session sends the skipped stretches as digital silence; same lines, nothing lost, all billed', async () => {
    const hidden = (demo.server as RunningServer).faults.socket.inject({ kind: 'hideFeatures' });
    let run: Run;
    try {
      run = await capture({ gate: true, transport: 'transfer' });
    } finally {
      hidden.remove();
    }
    const { result, after } = run;
    expect(result.capture.skippedFrames).toBeGreaterThan(0); // the worklet sent less to the page
    expect(result.sessionStats.skippedSamples).toBe(0); // and the session declared no skipped time
    expect(result.finish.status).toBe('COMPLETED');
    expect(result.finish.notices).not.toContain('TRANSPORT_GAP');
    expect(result.finish.receivedSamples).toBe(result.finish.capturedSamples);
    expect(result.finish.lines).toEqual(plain.result.finish.lines);
    const client = new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl, maxRetries: 0 });
    const task = await client.stt.transcriptions.get((await client.stt.realtime.get(run.sessionId)).transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil(Number(result.finish.receivedSamples) / 16)));
    // The stretches the worklet did not send are digital silence in the stored audio (the noise floor never is).
    const stored = await storedAudio(demo, run.sessionId);
    let zeros = 0;
    for (const v of stored) if (v === 0) zeros++;
    expect(zeros * 48_000 / 16_000).toBeGreaterThan(result.capture.skippedFrames * 0.9);
    // The speech events and the page's indicator work as with the feature; nothing was saved.
    expect(after.gate.speech.filter((e) => e.event === 'speech.start').length).toBeGreaterThanOrEqual(3);
    expect(after.gate.saved).toBe('saved 0 %');
  }, 60_000);

  it('mute in the middle of an utterance ends it for the session; its end is not repeated after unmute; the books balance', async () => {
    let step = 0;
    const run = await capture({ gate: true, transport: 'transfer' }, async (s, page) => {
      const starts = s.gate.speech.filter((e) => e.event === 'speech.start').length;
      const call = (c: 'mute' | 'unmute') => page.evaluate((name) => (window as unknown as { demo: Record<string, () => void> }).demo[name]!(), c);
      // While the second line is spoken (its start seen, the gate showing speech): mute, then unmute a second later.
      if (step === 0 && starts >= 2 && s.gate.activity === 'speech') {
        await call('mute');
        step = 1;
        setTimeout(() => void call('unmute').then(() => (step = 2)), 1000);
      }
    });
    expect(step).toBe(2);
    const { result, after } = run;
    const c = result.capture;
    expect(c.mutedFrames).toBeGreaterThan(0);
    expect(c.encodedFrames + c.mutedFrames + c.pausedFrames).toBe(c.capturedFrames);
    expect(c.worklet.exact).toBe(true);
    expect(result.finish.status).toBe('COMPLETED');
    expect(result.finish.notices).not.toContain('TRANSPORT_GAP');
    expect(result.finish.receivedSamples).toBe(result.finish.capturedSamples);
    // Every start has one end after it, in order: the muted utterance ended at the mute.
    const kinds = after.gate.speech.map((e) => e.event);
    for (let i = 0; i < kinds.length; i++) expect(kinds[i], JSON.stringify(after.gate.speech)).toBe(i % 2 === 0 ? 'speech.start' : 'speech.end');
    expect(kinds.length % 2).toBe(0);
    const samples = after.gate.speech.map((e) => e.sample);
    for (let i = 1; i < samples.length; i++) expect(samples[i]!).toBeGreaterThanOrEqual(samples[i - 1]!);
  }, 60_000);

  it('transferred batches (no isolation, 48 kHz context): the same', async () => {
    const run = await capture({ gate: true, transport: 'transfer', sampleRate: 48_000 }, undefined, '/?coi=0');
    await checkGated(run, plain, 'transfer');
  }, 60_000);
});
