import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { openMicrophone, transcribeLive, wavFileSource, type AudioSource, type LiveTranscription } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, indexOfSamples, sampleSamples, startRetainingServer, storedAudio, writeWav } from './support/audio.js';
import { startFakeMic, usePulse, type FakeMic } from './support/fake-mic.js';

/**
 * transcribeLive's `gate` option: a file and the system microphone (a private PulseAudio daemon, paplay
 * "speaking" into it), with a sentence of the bundled sample spoken twice between long silences. The
 * silence is declared skipped, not sent; the lines are those of the ungated run; the server bills the
 * audio only and reports no gap.
 */
const RATE = 16_000;
/** "he was not an ill disposed young man": the second sentence of the bundled sample, 2.99 s. */
const clip = sampleSamples().slice(113_600, 113_600 + 47_840);
/** Silence, the sentence, a pause, the sentence again, silence: where each sentence starts. */
const AT = [1.5 * RATE, 1.5 * RATE + clip.length + 3 * RATE];
const speech = new Int16Array(AT[1]! + clip.length + 2 * RATE);
speech.set(clip, AT[0]);
speech.set(clip, AT[1]);

let server: RunningServer;
let dir: string;
let path: string;
beforeAll(async () => {
  server = await startRetainingServer();
  dir = mkdtempSync(join(tmpdir(), 'node-mic-gate-'));
  path = writeWav(join(dir, 'speech.wav'), speech, RATE);
});
afterAll(async () => {
  await server?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** Runs a source through transcribeLive, recording the session's speech events. */
async function run(source: AudioSource, gate: boolean, during?: (live: LiveTranscription) => Promise<void>) {
  const live = await transcribeLive(clientFor(server), source, { pace: 'fast', gate });
  const edges: Array<[string, number]> = [];
  live.session.on('speech.start', (e) => edges.push(['speech.start', e.sample]));
  live.session.on('speech.end', (e) => edges.push(['speech.end', e.sample]));
  let gaps = 0;
  live.session.on('gap', () => (gaps += 1));
  if (during !== undefined) await during(live);
  const result = await live.done;
  const task = await clientFor(server).stt.transcriptions.get(result.session.transcriptionId);
  return { live, result, edges, gaps, skipped: live.session.stats.skippedSamples, billedMs: Number(task.billing.billableDurationMs), stored: await storedAudio(server, live.session.sessionId) };
}

describe('node-mic: the voice gate', () => {
  it('file source: the lines of the ungated run, the silences skipped, billed for the audio only, speech edges at the sentences', async () => {
    const plain = await run(await wavFileSource(path), false);
    const gated = await run(await wavFileSource(path), true);
    expect(plain.skipped).toBe(0);
    expect(gated.result.lines.map((l) => [l.text, l.startMs, l.endMs])).toEqual(plain.result.lines.map((l) => [l.text, l.startMs, l.endMs]));
    expect(gated.result.lines.length).toBeGreaterThan(0);
    expect(gated.gaps).toBe(0);
    expect(gated.result.session.usage.capturedSamples).toBe(BigInt(speech.length));
    expect(gated.result.session.usage.receivedSamples).toBe(BigInt(speech.length));
    // Most of 1.5 + 3 + 2 s of silence skipped (less the pre-roll and hangover around each sentence).
    expect(gated.skipped).toBeGreaterThan(4 * RATE);
    expect(gated.live.session.health.savedShare).toBeCloseTo(gated.skipped / speech.length, 6);
    expect(gated.billedMs).toBe(Math.ceil((speech.length - gated.skipped) / 16));
    expect(plain.billedMs).toBe(speech.length / 16);
    // Sent: each sentence, bit for bit, where it was captured.
    for (const at of AT) expect(Array.from(gated.stored.subarray(at, at + clip.length))).toEqual(Array.from(clip));
    // One utterance per sentence at most (a pause inside one is shorter than commitAfterMs); the first
    // starts within 20 ms of its first loud sample.
    const starts = gated.edges.filter(([e]) => e === 'speech.start').map(([, s]) => s);
    const ends = gated.edges.filter(([e]) => e === 'speech.end').map(([, s]) => s);
    expect(starts.length).toBe(2);
    expect(ends.length).toBe(2);
    for (const [k, at] of AT.entries()) {
      expect(starts[k]!).toBeGreaterThanOrEqual(at);
      expect(starts[k]!).toBeLessThan(at + RATE / 2);
      expect(ends[k]!).toBeGreaterThan(at + clip.length - RATE / 2);
      expect(ends[k]!).toBeLessThanOrEqual(at + clip.length);
    }
  }, 60_000);

  describe('from a fake PulseAudio microphone', () => {
    let mic: FakeMic;
    let undo: () => void;
    beforeAll(async () => {
      mic = await startFakeMic({ rate: RATE });
      undo = usePulse(mic.env);
    });
    afterAll(async () => {
      undo?.();
      await mic?.stop();
    });

    it('parec at 16 kHz: the silence around the sentences skipped, each sentence sent bit for bit, no gap, billed for the audio only', async () => {
      const gated = await run(await openMicrophone({ backend: 'parec' }), true, async (live) => {
        await new Promise((r) => setTimeout(r, 300));
        await mic.play(path);
        await new Promise((r) => setTimeout(r, 500));
        await live.source.stop();
      });
      const captured = Number(gated.result.session.usage.capturedSamples);
      expect(captured).toBe(gated.live.frames);
      expect(gated.result.session.usage.receivedSamples).toBe(BigInt(captured));
      expect(gated.gaps).toBe(0);
      expect(gated.skipped).toBeGreaterThan(4 * RATE);
      expect(gated.billedMs).toBe(Math.ceil((captured - gated.skipped) / 16));
      expect(gated.result.lines.length).toBeGreaterThan(0);
      expect(gated.edges.filter(([e]) => e === 'speech.start').length).toBe(2);
      // The first sentence, whole and exact, in the stored audio; the skipped stretches are zeros.
      const at = indexOfSamples(gated.stored, clip);
      expect(at).toBeGreaterThan(0);
      let zeros = 0;
      for (const v of gated.stored) if (v === 0) zeros++;
      expect(zeros).toBeGreaterThanOrEqual(gated.skipped);
    }, 60_000);
  });
});
