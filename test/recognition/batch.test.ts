import { SoundClone } from '@soundclone/core';
import { startServer, type RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cards, librivox, normalize, report, wer, type Clip } from './support.js';

/**
 * Batch transcription with real recognition: the LibriVox clips and the spoken card commands from
 * pocketsphinx-testdata go through the SDK's upload and transcription calls to the reference server
 * running PocketSphinx, and the words are scored against the transcriptions that ship with them.
 * Measured: LibriVox WER 0.28 (71 words), cards 0.05 (21 words, "four" heard as "for"). Batch knows
 * the whole recording, so normalisation starts from its own statistics (see PocketSphinxStream.prime).
 */
const KEY = 'key-recognition';

describe('batch transcription with PocketSphinx', () => {
  let server: RunningServer;
  let client: SoundClone;
  beforeAll(async () => {
    server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], recognizer: 'pocketsphinx', taskTiming: { queueMs: 1, processingMs: 1, reconcilingMs: 1 } });
    client = new SoundClone({ accessKey: KEY, baseUrl: server.url });
  });
  afterAll(() => server.close());

  async function transcribe(clip: Clip) {
    const { uploadId } = await client.uploads.create(clip.path);
    const created = await client.stt.transcriptions.create({ uploadId, title: clip.id });
    return client.stt.transcriptions.wait(created.transcriptionId, { pollIntervalMs: 50, timeoutMs: 50_000 });
  }

  it('reports the recognizer it runs', () => {
    expect(server.recognizer).toEqual({ id: 'pocketsphinx-en-us' });
  });

  it('transcribes the LibriVox clips within the word error bound, with honest timings and no invented language', async () => {
    const clips = librivox();
    expect(clips).toHaveLength(5);
    const results = [];
    for (const clip of clips) results.push({ clip, task: await transcribe(clip) });
    const pairs = results.map(({ clip, task }) => ({ reference: clip.words, hypothesis: normalize(task.transcript?.text ?? '') }));
    const rate = wer(pairs);
    report('batch LibriVox', rate, pairs.flatMap((p) => p.hypothesis));
    expect(rate, `LibriVox WER ${rate.toFixed(3)}: ${pairs.map((p) => p.hypothesis.join(' ')).join(' | ')}`).toBeLessThanOrEqual(0.4);
    for (const { task } of results) {
      expect(task.status).toBe('COMPLETED');
      // PocketSphinx detects no language: the spec wants null, never a guess or the hint.
      expect(task.detectedLanguage).toBeNull();
      const transcript = task.transcript!;
      expect(transcript.languageCode).toBeNull();
      const tokens = transcript.segments.flatMap((s) => s.tokens.filter((t) => t.type === 'word'));
      expect(tokens.length).toBeGreaterThan(3);
      let previousEnd = 0;
      for (const token of tokens) {
        // Every word is timed (alignment from the decoder's frames).
        expect(token.startMs).not.toBeNull();
        expect(token.endMs).not.toBeNull();
        expect(token.startMs!).toBeGreaterThanOrEqual(previousEnd);
        expect(token.endMs!).toBeGreaterThan(token.startMs!);
        expect(token.confidence).toBeGreaterThanOrEqual(0);
        expect(token.confidence).toBeLessThanOrEqual(1);
        previousEnd = token.endMs!;
      }
      expect(previousEnd).toBeLessThanOrEqual(Number(task.audioDurationMs));
      for (const segment of transcript.segments) {
        expect(segment.startMs).toBe(segment.tokens[0]!.startMs);
        expect(segment.endMs).toBe(segment.tokens[segment.tokens.length - 1]!.endMs);
      }
    }
    // Posteriors, not a constant: the lattice gives sure words ~1 and doubtful ones far less.
    const confidences = results.flatMap(({ task }) => task.transcript!.segments.flatMap((s) => s.tokens.map((t) => t.confidence)));
    expect(Math.min(...confidences)).toBeLessThan(0.5);
    expect(Math.max(...confidences)).toBeGreaterThan(0.9);
  });

  it('transcribes the short card commands within the word error bound', async () => {
    const clips = cards();
    expect(clips).toHaveLength(5);
    const pairs = [];
    for (const clip of clips) pairs.push({ reference: clip.words, hypothesis: normalize((await transcribe(clip)).transcript?.text ?? '') });
    const rate = wer(pairs);
    report('batch cards', rate, pairs.flatMap((p) => p.hypothesis));
    expect(rate, `cards WER ${rate.toFixed(3)}: ${pairs.map((p) => p.hypothesis.join(' ')).join(' | ')}`).toBeLessThanOrEqual(0.2);
  });
});
