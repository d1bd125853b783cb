import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { mulberry32 } from '@soundclone/core/internal';
import type { RunningServer } from '@soundclone/server';
import {
  BUNDLED_SAMPLE, Pcm16Chunker, rawPcmSource, stdinSource, transcribeLive, wavFileSource, type AudioBlock, type AudioSource, type CaptionEvent,
} from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, encodeOffline, sampleSamples, startRetainingServer, storedAudio, wavBytes, writeWav } from './support/audio.js';

/** Seeded noise plus tones: every sample value matters for the comparisons. */
function signal(frames: number, channels: number, rate: number, seed = 3): Float32Array {
  const out = new Float32Array(frames * channels);
  const random = mulberry32(seed);
  for (let i = 0; i < frames; i++) {
    for (let c = 0; c < channels; c++) {
      out[i * channels + c] = 0.4 * Math.sin((2 * Math.PI * (300 + 200 * c) * i) / rate) + (random() - 0.5) * 0.1;
    }
  }
  return out;
}

/** Records the blocks a source hands out, unchanged (a tee, not a stand-in). */
function tee(source: AudioSource, seen: AudioBlock[]): AudioSource {
  return Object.assign(Object.create(source) as AudioSource, {
    async *[Symbol.asyncIterator]() {
      for await (const block of source) {
        seen.push(block.slice());
        yield block;
      }
    },
    stop: () => source.stop(),
  });
}

describe('file sources into a realtime session', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    server = await startRetainingServer();
    dir = mkdtempSync(join(tmpdir(), 'node-mic-files-'));
  });
  afterAll(async () => {
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the bundled sample (16 kHz mono WAV), as fast as the session takes: stored bit for bit, exact counts, lines and captions$', async () => {
    const expected = sampleSamples();
    expect(expected.length).toBe(246_240);
    const source = await wavFileSource(BUNDLED_SAMPLE.path);
    const live = await transcribeLive(clientFor(server), source, { pace: 'fast' });
    const events: CaptionEvent[] = [];
    live.captions$.subscribe((e) => events.push(e));
    const lines: string[] = [];
    live.lines$.subscribe((l) => lines.push(l.id));
    const result = await live.done;
    expect(live.frames).toBe(expected.length);
    expect(result.session.usage.receivedSamples).toBe(BigInt(expected.length));
    expect(result.session.usage.capturedSamples).toBe(BigInt(expected.length));
    expect(await storedAudio(server, live.session.sessionId)).toEqual(expected);
    expect(lines.length).toBeGreaterThan(0);
    expect(result.lines.map((l) => l.id)).toEqual(lines);
    expect(events.filter((e) => e.kind === 'line').length).toBe(lines.length);
    expect(events.some((e) => e.kind === 'partial')).toBe(true);
  });

  it('a 48 kHz stereo float WAV: opened at 48 kHz, downmixed and resampled once by the core, exactly as its FrameEncoder does', async () => {
    const rate = 48_000;
    const frames = rate * 2 + 123;
    const samples = signal(frames, 2, rate);
    const path = join(dir, 'stereo48.wav');
    writeFileSync(path, wavBytes(samples, rate, 2));
    const seen: AudioBlock[] = [];
    const source = await wavFileSource(path);
    expect(source.format).toEqual({ sampleRate: 48_000, channels: 2, encoding: 'float32' });
    const live = await transcribeLive(clientFor(server), tee(source, seen), { pace: 'fast' });
    const result = await live.done;
    const sent = seen.map((b) => b as Float32Array);
    expect(sent.reduce((n, b) => n + b.length, 0)).toBe(samples.length);
    const expected = await encodeOffline(sent, rate, 2);
    expect(expected.length).toBe(Math.round(frames / 3));
    expect(result.session.usage.receivedSamples).toBe(BigInt(expected.length));
    expect(await storedAudio(server, live.session.sessionId)).toEqual(expected);
  });

  it('a 22.05 kHz 16-bit WAV goes through the core resampler from its integer samples', async () => {
    const rate = 22_050;
    const ints = Int16Array.from(signal(rate, 1, rate, 9), (v) => Math.round(v * 32767));
    const path = writeWav(join(dir, 'mono22.wav'), ints, rate);
    const seen: AudioBlock[] = [];
    const live = await transcribeLive(clientFor(server), tee(await wavFileSource(path), seen), { pace: 'fast' });
    await live.done;
    expect(seen.every((b) => b instanceof Int16Array)).toBe(true);
    expect(Int16Array.from(seen.flatMap((b) => [...b]))).toEqual(ints);
    const expected = await encodeOffline(seen.map((b) => Float32Array.from(b, (v) => v / 32768)), rate, 1);
    expect(await storedAudio(server, live.session.sessionId)).toEqual(expected);
  });

  it('raw PCM from a stream in odd-sized chunks, paced in real time', async () => {
    const pcm = sampleSamples().slice(0, 16_000);
    const bytes = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    const chunks = [bytes.subarray(0, 3), bytes.subarray(3, 1001), bytes.subarray(1001, 20_000), bytes.subarray(20_000)];
    const source = rawPcmSource(Readable.from(chunks));
    const started = performance.now();
    const live = await transcribeLive(clientFor(server), source, { pace: 'realtime' });
    await live.done;
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(900); // 1 s of audio is not sent faster than 1 s
    expect(await storedAudio(server, live.session.sessionId)).toEqual(pcm);
  });

  it('stdin: a WAV piped in is recognised by its header; raw PCM with type raw', async () => {
    const pcm = sampleSamples().slice(16_000, 40_000);
    const wavIn = new PassThrough();
    wavIn.end(Buffer.from(wavBytes(pcm, 16_000, 1)));
    const wav = await stdinSource({ stream: wavIn });
    expect(wav.format).toEqual({ sampleRate: 16_000, channels: 1, encoding: 'pcm16' });
    let live = await transcribeLive(clientFor(server), wav, { pace: 'fast' });
    await live.done;
    expect(await storedAudio(server, live.session.sessionId)).toEqual(pcm);

    const rawIn = new PassThrough();
    rawIn.end(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength));
    live = await transcribeLive(clientFor(server), await stdinSource({ stream: rawIn, type: 'raw' }), { pace: 'fast' });
    const result = await live.done;
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, live.session.sessionId)).toEqual(pcm);
  });

  it('stop() in the middle: the session finishes with exactly the frames handed out', async () => {
    const live = await transcribeLive(clientFor(server), await wavFileSource(BUNDLED_SAMPLE.path), { pace: 'realtime' });
    await new Promise((r) => setTimeout(r, 700));
    const result = await live.stop();
    expect(live.frames).toBeGreaterThan(8_000);
    expect(live.frames).toBeLessThan(100_000);
    const stored = await storedAudio(server, live.session.sessionId);
    expect(result.session.usage.receivedSamples).toBe(BigInt(live.frames));
    expect(stored).toEqual(sampleSamples().slice(0, live.frames));
  });

  it('typed errors for audio that cannot be read', async () => {
    await expect(wavFileSource(join(dir, 'missing.wav'))).rejects.toMatchObject({ name: 'AudioSourceError', code: 'SOURCE_READ_FAILED' });
    await expect(wavFileSource(new TextEncoder().encode('not a wave file at all'))).rejects.toMatchObject({ code: 'SOURCE_UNSUPPORTED_FORMAT' });
    await expect(wavFileSource(wavBytes(new Int16Array(100), 12_345, 1))).rejects.toMatchObject({ code: 'SOURCE_UNSUPPORTED_FORMAT', message: expect.stringContaining('12345 Hz') });
    expect(() => rawPcmSource(Readable.from([]), { channels: 0 })).toThrow(expect.objectContaining({ code: 'SOURCE_UNSUPPORTED_FORMAT' }));
    const odd = rawPcmSource(Readable.from([Buffer.from([1, 2, 3])]));
    await expect((async () => {
      for await (const _ of odd) void _;
    })()).rejects.toMatchObject({ code: 'SOURCE_READ_FAILED' });
  });

  it('Pcm16Chunker keeps split samples and frames whole', () => {
    const chunker = new Pcm16Chunker(2);
    const values = Int16Array.from({ length: 12 }, (_, i) => (i - 6) * 1000 - 1);
    const bytes = new Uint8Array(values.buffer);
    const out: number[] = [];
    for (const [a, b] of [[0, 1], [1, 6], [6, 7], [7, 24]] as const) out.push(...chunker.push(bytes.subarray(a, b)));
    expect(out).toEqual([...values]);
    expect(chunker.pendingBytes).toBe(0);
    // A chunk that completes no frame allocates nothing: it waits, and the same empty array comes back.
    const none = chunker.push(bytes.subarray(0, 3));
    expect(none.length).toBe(0);
    expect(chunker.push(new Uint8Array(0))).toBe(none);
    expect(chunker.pendingBytes).toBe(3);
  });
});
