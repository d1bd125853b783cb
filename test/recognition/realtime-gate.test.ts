import { SoundClone } from '@soundclone/core';
import { startServer, type RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { joinedAt, librivox, normalize, wer, writeBlocks } from './support.js';

/**
 * The voice gate in front of PocketSphinx: LibriVox clips with 4 s of silence between them, written at
 * 16 kHz with and without the gate. The gated session sends the clips and declares the silences
 * skipped: the decoder hears the clips only, its utterances end at each skip, and its word times come
 * back in capture time (each word inside its clip), charged for the audio only.
 */
const KEY = 'key-recognition-gate';
const RATE = 16_000;

describe('realtime PocketSphinx behind the voice gate', () => {
  let server: RunningServer;
  let client: SoundClone;
  beforeAll(async () => {
    server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], recognizer: 'pocketsphinx' });
    client = new SoundClone({ accessKey: KEY, baseUrl: server.url });
  });
  afterAll(() => server.close());

  it('same words within the error bound, word times inside their clips, charged for the audio only', async () => {
    const clips = librivox().filter((c) => /-(0880|0890|0930)$/.test(c.id));
    expect(clips).toHaveLength(3);
    const silence = new Float32Array(RATE * 4);
    const parts: Float32Array[] = [silence];
    const spans: Array<[number, number]> = [];
    let at = silence.length;
    for (const clip of clips) {
      const audio = joinedAt([clip], RATE);
      parts.push(audio, silence);
      spans.push([at, at + audio.length]);
      at += audio.length + silence.length;
    }
    const audio = new Float32Array(at);
    let offset = 0;
    for (const part of parts) {
      audio.set(part, offset);
      offset += part.length;
    }
    const reference = clips.flatMap((c) => c.words);
    const run = async (gate: boolean) => {
      const session = await client.stt.realtime.connect({ options: { includeAlignment: true }, gate });
      await writeBlocks(session, audio, RATE);
      const result = await session.finish({ timeoutMs: 50_000 });
      return { session, result, rate: wer([{ reference, hypothesis: normalize(result.lines.map((l) => l.text).join(' ')) }]) };
    };
    const plain = await run(false);
    const gated = await run(true);
    expect(gated.result.session.status).toBe('COMPLETED');
    expect(gated.result.session.usage.receivedSamples).toBe(BigInt(audio.length));
    expect(gated.rate, `gated WER ${gated.rate.toFixed(3)}, ungated ${plain.rate.toFixed(3)}`).toBeLessThanOrEqual(plain.rate + 0.1);
    const words = gated.result.lines.flatMap((l) => l.words as Array<{ text: string; startMs: number; endMs: number }>);
    expect(words.length).toBeGreaterThan(10);
    for (const word of words) {
      const inside = spans.some(([a, b]) => word.startMs * 16 >= a - RATE / 2 && word.endMs * 16 <= b + RATE / 2);
      expect(inside, `${word.text} ${word.startMs}-${word.endMs} ms is in no clip (${JSON.stringify(spans.map(([a, b]) => [a / 16, b / 16]))})`).toBe(true);
    }
    const skipped = gated.session.stats.skippedSamples;
    expect(skipped).toBeGreaterThan(3 * 3 * RATE);
    const task = await client.stt.transcriptions.get(gated.result.session.transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((audio.length - skipped) / 16)));
  }, 120_000);
});
