import { SoundClone } from '@soundclone/core';
import { sessionStreams } from '@soundclone/core/rx';
import { startServer, type RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cards, joinedAt, librivox, normalize, report, wer, writeBlocks, type Clip } from './support.js';

/**
 * Live captions of real speech: recorded clips resampled up to 44.1 or 48 kHz (by sox), written as
 * Float32 into a realtime session of the SDK (whose encode path brings them down to 16 kHz PCM16),
 * streamed over a real socket to the reference server running PocketSphinx. The committed lines are
 * scored against the known text. Audio goes faster than real time. Measured: 44.1 kHz LibriVox WER
 * 0.23 (30 words), 48 kHz cards 0.38 (21 words: live normalisation adapts from the model's generic
 * statistics, which costs the first short commands; batch gets 0.05 on the same recordings).
 */
const KEY = 'key-recognition-rt';

describe('realtime captions with PocketSphinx through the SDK encode path', () => {
  let server: RunningServer;
  let client: SoundClone;
  beforeAll(async () => {
    server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], recognizer: 'pocketsphinx' });
    client = new SoundClone({ accessKey: KEY, baseUrl: server.url });
  });
  afterAll(() => server.close());

  async function caption(clips: readonly Clip[], rate: number) {
    const audio = joinedAt(clips, rate);
    const session = await client.stt.realtime.connect({ sampleRate: rate, options: { includeAlignment: true, includeDetectedLanguage: true } });
    const partials: string[] = [];
    const lineIds: string[] = [];
    const streams = sessionStreams(session);
    const partialSub = streams.partials$.subscribe((p) => partials.push(p.text));
    const lineSub = streams.lines$.subscribe((line) => lineIds.push(line.id));
    await writeBlocks(session, audio, rate);
    const result = await session.finish({ timeoutMs: 50_000 });
    partialSub.unsubscribe();
    lineSub.unsubscribe();
    const reference = clips.flatMap((c) => c.words);
    const hypothesis = normalize(result.lines.map((l) => l.text).join(' '));
    const measured = wer([{ reference, hypothesis }]);
    report(`realtime ${rate} Hz`, measured, hypothesis);
    return { audio, result, partials, lineIds, reference, hypothesis, rate: measured };
  }

  it('captions LibriVox speech written at 44.1 kHz within the word error bound, lines with word timings', async () => {
    const clips = librivox().filter((c) => /-(0880|0890|0930)$/.test(c.id));
    expect(clips).toHaveLength(3);
    const run = await caption(clips, 44_100);
    expect(run.rate, `44.1 kHz WER ${run.rate.toFixed(3)}: ${run.hypothesis.join(' ')}`).toBeLessThanOrEqual(0.4);
    expect(run.result.session.status).toBe('COMPLETED');
    // Every sample of the 44.1 kHz input arrived as 16 kHz audio (within one resampler block).
    const expected = Math.round((run.audio.length * 16_000) / 44_100);
    expect(Math.abs(Number(run.result.session.usage.receivedSamples) - expected)).toBeLessThanOrEqual(16);
    // Pauses between the recordings end segments: more than one line, each once.
    expect(run.result.lines.length).toBeGreaterThanOrEqual(2);
    expect(run.lineIds).toEqual(run.result.lines.map((l) => l.id));
    // Partial hypotheses arrived while speech went on.
    expect(run.partials.filter((p) => p !== '').length).toBeGreaterThan(0);
    let previousEnd = 0;
    for (const line of run.result.lines) {
      // Alignment comes from the decoder's word times; the model detects no language, so none is reported.
      expect(line.languageCode).toBeNull();
      expect(line.languageProbability).toBeNull();
      const words = line.words as Array<{ text: string; startMs: number; endMs: number; confidence: number }>;
      expect(words.map((w) => w.text).join(' ')).toBe(line.text);
      for (const word of words) {
        expect(word.startMs).toBeGreaterThanOrEqual(previousEnd);
        expect(word.endMs).toBeGreaterThan(word.startMs);
        previousEnd = word.endMs;
      }
    }
    expect(previousEnd).toBeLessThanOrEqual((Number(run.result.session.usage.receivedSamples) * 1000) / 16_000);
  });

  it('captions the spoken card commands written at 48 kHz within the word error bound', async () => {
    const clips = cards();
    const run = await caption(clips, 48_000);
    expect(run.rate, `48 kHz WER ${run.rate.toFixed(3)}: ${run.hypothesis.join(' ')}`).toBeLessThanOrEqual(0.5);
    expect(run.result.session.status).toBe('COMPLETED');
    const expected = Math.round((run.audio.length * 16_000) / 48_000);
    expect(Math.abs(Number(run.result.session.usage.receivedSamples) - expected)).toBeLessThanOrEqual(16);
    expect(run.result.lines.length).toBeGreaterThanOrEqual(2);
  });
});
