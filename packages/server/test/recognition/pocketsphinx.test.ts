import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PocketSphinxRecognizer, RecognizerError, chooseRecognizer, startServer, type StreamEvent } from '../../src/index.js';
import { shapeWords } from '../../src/recognition/pocketsphinx/pocketsphinx-stream.js';
import { CLIP_0870, CLIP_0880, CLIP_0930, concat, readClip, wer } from './support.js';

type Segment = Extract<StreamEvent, { type: 'segment' }>;

/** Pushes PCM in 20 ms blocks, as the socket does, and collects what came out. */
function run(recognizer: PocketSphinxRecognizer, pcm: Int16Array, blocks = 320): { events: StreamEvent[]; segments: Segment[] } {
  const stream = recognizer.openStream({ maxSpeakers: 1 });
  const events: StreamEvent[] = [];
  for (let at = 0; at < pcm.length; at += blocks) events.push(...stream.push(pcm.subarray(at, at + blocks)));
  events.push(...stream.flush());
  stream.close?.();
  return { events, segments: events.filter((e): e is Segment => e.type === 'segment') };
}

const textOf = (segments: Segment[]): string => segments.flatMap((s) => s.segment.words.map((w) => w.text)).join(' ');

describe('PocketSphinx recognizer', () => {
  let recognizer: PocketSphinxRecognizer;
  beforeAll(() => {
    recognizer = new PocketSphinxRecognizer();
  });
  afterAll(() => recognizer.close());

  it('streams partials while speech goes on, then commits a segment with timed words and no language', () => {
    const { events, segments } = run(recognizer, readClip(CLIP_0870.path));
    const firstSegment = events.findIndex((e) => e.type === 'segment');
    const partials = events.slice(0, firstSegment).filter((e) => e.type === 'partial' && e.text !== '');
    expect(partials.length).toBeGreaterThan(1);
    expect(segments.length).toBeGreaterThanOrEqual(1);
    // Measured 0.23 (5 of 22 words: "mister" comes out as the dictionary's "mr").
    expect(wer(CLIP_0870.text, textOf(segments))).toBeLessThanOrEqual(0.35);
    for (const { segment, languageCode, languageProbability } of segments) {
      expect(languageCode).toBeNull();
      expect(languageProbability).toBeNull();
      expect(segment.startMs).toBe(segment.words[0]!.startMs);
      expect(segment.endMs).toBe(segment.words[segment.words.length - 1]!.endMs);
      for (const word of segment.words) {
        expect(word.text).not.toMatch(/[<[+(]/);
        expect(word.speakerIndex).toBe(0);
      }
    }
  });

  it('gives stream-absolute word times: a 1.5 s lead-in of digital silence shifts them by 1.5 s and spoils nothing', () => {
    const clip = readClip(CLIP_0880.path);
    const plain = run(recognizer, clip).segments;
    const led = run(recognizer, concat(new Int16Array(24_000), clip)).segments;
    const plainWords = plain.flatMap((s) => s.segment.words);
    const ledWords = led.flatMap((s) => s.segment.words);
    // Before the cepstral mean was protected from noise-only utterances this came out as "you push up".
    expect(wer(CLIP_0880.text, textOf(led))).toBeLessThanOrEqual(wer(CLIP_0880.text, textOf(plain)) + 0.15);
    const shift = ledWords[0]!.startMs - plainWords[0]!.startMs;
    expect(Math.abs(shift - 1500)).toBeLessThanOrEqual(60);
  });

  it('reuses decoders: a second stream on a recycled decoder hears exactly what the first did', () => {
    const clip = readClip(CLIP_0930.path);
    const first = run(recognizer, clip).segments;
    const second = run(recognizer, clip).segments;
    expect(second.map((s) => s.segment)).toEqual(first.map((s) => s.segment));
    expect(recognizer.decoders).toBeLessThanOrEqual(2);
  });

  it('decodes a clip the same alone and interleaved with other streams: words, times and confidences', async () => {
    const clip = readClip(CLIP_0870.path);
    const other = readClip(CLIP_0930.path);
    const alone = run(recognizer, clip).segments;
    expect(alone.length).toBeGreaterThan(0);
    // Three neighbours at once: a live stream of other speech, short streams opening and closing
    // (a recycled decoder is reset), and a batch transcription (its normalisation pass) in between.
    const stream = recognizer.openStream({ maxSpeakers: 1 });
    const neighbour = recognizer.openStream({ maxSpeakers: 1 });
    const batch = recognizer.recognize({ channels: [Float32Array.from(other, (v) => v / 32768)], maxSpeakers: 1 });
    const events: StreamEvent[] = [];
    for (let at = 0, block = 0; at < clip.length; at += 320, block++) {
      events.push(...stream.push(clip.subarray(at, at + 320)));
      neighbour.push(other.subarray(at % other.length, (at % other.length) + 320));
      if (block % 50 === 0) {
        const brief = recognizer.openStream({ maxSpeakers: 1 });
        brief.push(other.subarray(0, 3200));
        brief.close?.();
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    events.push(...stream.flush());
    stream.close?.();
    neighbour.close?.();
    expect((await batch).channels[0]!.segments.length).toBeGreaterThan(0);
    const interleaved = events.filter((e): e is Segment => e.type === 'segment');
    expect(interleaved.map((s) => s.segment)).toEqual(alone.map((s) => s.segment));
  });

  it('commits on flush in the middle of speech and goes on after it; a closed stream ignores audio', () => {
    const clip = readClip(CLIP_0930.path);
    const stream = recognizer.openStream({ maxSpeakers: 1 });
    const half = Math.floor(clip.length / 2);
    stream.push(clip.subarray(0, half));
    const committed = stream.flush().filter((e): e is Segment => e.type === 'segment');
    expect(committed).toHaveLength(1);
    expect(stream.partial).toBe('');
    const rest = [...stream.push(clip.subarray(half)), ...stream.flush()].filter((e): e is Segment => e.type === 'segment');
    expect(rest.length).toBeGreaterThanOrEqual(1);
    expect(rest[0]!.segment.startMs).toBeGreaterThanOrEqual(committed[0]!.segment.endMs);
    stream.close?.();
    stream.close?.();
    expect(stream.push(clip)).toEqual([]);
    expect(stream.flush()).toEqual([]);
  });

  it('hears no words in two seconds of noise before speech (batch, primed normalisation)', async () => {
    const noise = new Int16Array(16_000 * 2);
    for (let i = 0; i < noise.length; i++) noise[i] = Math.round(Math.sin(i * 0.37) * 3000 + ((Math.imul(i, 2654435761) >>> 20) % 4000) - 2000);
    const audio = Float32Array.from(concat(noise, readClip(CLIP_0930.path)), (v) => v / 32768);
    const result = await recognizer.recognize({ channels: [audio], maxSpeakers: 1 });
    const words = result.channels[0]!.segments.flatMap((s) => s.words);
    expect(words[0]!.startMs).toBeGreaterThanOrEqual(1900);
    // One short clip: 3 of 8 words wrong measured; the bound only says the speech was still heard.
    expect(wer(CLIP_0930.text, words.map((w) => w.text).join(' '))).toBeLessThanOrEqual(0.5);
    expect(result.channels[0]!.languageCode).toBeNull();
    expect(result.channels[0]!.languageConfidence).toBeNull();
    expect(result.durationMs).toBe(Math.round((audio.length * 1000) / 16_000));
  });

  it('maps decoder segments to words: markers and silences dropped, noise fillers as sound events only when asked', () => {
    const raw: Array<[string, number, number, number]> = [
      ['<s>', 0, 100, 1], ['to(2)', 100.4, 250, 0.456], ['<sil>', 250, 300, 1], ['[NOISE]', 300, 500, 0.9], ['uh', 500, 600, 0.7], ['man', 600, 900, 1.0000001],
    ];
    expect(shapeWords(raw, { maxSpeakers: 1 })).toEqual([
      { text: 'to', startMs: 100, endMs: 250, confidence: 0.46, speakerIndex: 0 },
      { text: 'uh', startMs: 500, endMs: 600, confidence: 0.7, speakerIndex: 0 },
      { text: 'man', startMs: 600, endMs: 900, confidence: 1, speakerIndex: 0 },
    ]);
    expect(shapeWords(raw, { maxSpeakers: 4, includeSoundEvents: true, removeDisfluencies: true }).map((w) => w.text)).toEqual(['to', '[sound]', 'man']);
  });
});

describe('choosing the recognizer', () => {
  const empty = mkdtempSync(join(tmpdir(), 'no-model-'));

  it('startServer defaults to the deterministic recognizer, so tests see the same words as before', async () => {
    const server = await startServer({ accessKeys: ['k'] });
    expect(server.recognizer).toEqual({ id: 'energy-v1' });
    await server.close();
  });

  it('auto picks PocketSphinx when it is installed', () => {
    const chosen = chooseRecognizer('auto');
    expect(chosen.recognizer.id).toBe('pocketsphinx-en-us');
    expect(chosen.notice).toBeUndefined();
    chosen.recognizer.close?.();
  });

  it('auto falls back to the deterministic recognizer with a one-line notice naming what is missing', () => {
    const chosen = chooseRecognizer('auto', { modelDir: empty });
    expect(chosen.recognizer.id).toBe('energy-v1');
    expect(chosen.notice).toMatch(/^recognizer: using the deterministic recognizer.*pocketsphinx-en-us/);
    expect(chosen.notice).not.toContain('\n');
  });

  it('an explicit pocketsphinx request that cannot run is a typed error, from startServer too', async () => {
    expect(() => chooseRecognizer('pocketsphinx', { modelDir: empty })).toThrow(RecognizerError);
    const error = await startServer({ accessKeys: ['k'], recognizer: 'pocketsphinx', pocketsphinx: { modelDir: empty } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RecognizerError);
    expect(error).toMatchObject({ code: 'RECOGNIZER_UNAVAILABLE' });
    expect((error as Error).message).toContain(empty);
  });

  it('an unknown recognizer name is a typed error', () => {
    expect(() => chooseRecognizer('whisper')).toThrow(expect.objectContaining({ name: 'RecognizerError', code: 'RECOGNIZER_UNKNOWN' }));
  });
});
