import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Resampler } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMedia } from '../src/media/decode.js';
import { MATROSKA_MAX_DEPTH, MATROSKA_MAX_ELEMENTS } from '../src/media/matroska.js';
import { collect, feedOf } from '../src/media/recognizer-feed.js';
import { LIMITS } from '@soundclone/core/internal';
import { SERVER_LIMITS } from '../src/protocol.js';
import { WAV_MAX_CHUNKS } from '../src/media/wav.js';
import { IDS, UNKNOWN_SIZE, el, file, pcmTrack, signedVint, simpleBlock, vint, EBML_HEADER } from './support/ebml.js';
import { KEY_A, KEY_B, idem, start, transcribe, type TestServer, serverForSuite } from './support/server.js';
import { pcm, wav, wavHeader } from './support/wav.js';

/**
 * Media that declares more than its bytes hold, or is built to make the server allocate far more than
 * it sent: every case is refused (or accepted at its true size) with a typed error, and the server keeps
 * answering. Memory itself is measured by scripts/measure-upload-memory.mjs, not asserted here.
 */

const mka = (type = 'audio/x-matroska') => ({ 'Content-Type': type });

async function stillAnswers(server: TestServer): Promise<void> {
  const r = await server.call('GET', '/stt/capabilities');
  expect(r.status).toBe(200);
  expect(r.body.code).toBe(1);
}

function refusedWith(r: { status: number; body: any }, status: number, errorCode: string, problem: string): void {
  expect(r.status).toBe(status);
  expect(r.body).toMatchObject({ code: -1, errorCode, details: { problem } });
}

/** A 16-bit WAV whose data chunk declares `declaredBytes` but holds `payload`. */
function wavDeclaring(rate: number, bits: number, payload: Uint8Array, declaredBytes = payload.length): Buffer {
  return Buffer.concat([wavHeader({ sampleRate: rate, channels: 1, bits, dataBytes: payload.length, declaredDataBytes: declaredBytes }), payload]);
}

describe('media that claims more than it holds', () => {
  const server = serverForSuite();

  it('prices a Matroska file by its 1,600 samples, not by a declared 32,000,000 ms duration', async () => {
    const f64 = Buffer.alloc(8);
    f64.writeDoubleBE(32_000_000);
    const bytes = file([...el(IDS.info, el(IDS.duration, [...f64])), ...el(IDS.tracks, pcmTrack(16_000)), ...el(IDS.cluster, simpleBlock(new Uint8Array(3200)))]);
    const up = await server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: mka() });
    expect(up.status).toBe(200);
    expect(up.body.data.media.durationMs).toBe('100');
    const caps = await server.call('GET', '/stt/capabilities');
    const task = await transcribe(server, { uploadId: up.body.data.uploadId });
    // Reserved: the whole minutes of 100 ms (one), at the published rate.
    expect(task.billing.reservedCharacters).toBe(caps.body.data.account.rate.ratePerMinute);
    expect(task.audioDurationMs).toBe('100');
    await stillAnswers(server);
  });

  it('refuses the 3,377-byte file that declares 1,600 samples at 0.05 Hz before decoding (415 RATE_OUT_OF_RANGE)', async () => {
    const bytes = file([...el(IDS.tracks, pcmTrack(0.05)), ...el(IDS.cluster, simpleBlock(new Uint8Array(3200)))]);
    expect(bytes.length).toBeLessThan(3400);
    const r = await server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: mka() });
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'RATE_OUT_OF_RANGE');
    expect(r.body.details).toMatchObject({ declaredRate: 0.05, minRate: 1000, maxRate: 384000 });
    await stillAnswers(server);
  });

  it('counts a WAV by the bytes present when its data chunk declares 2 GiB', async () => {
    const r = await server.call('POST', '/uploads', { body: new Uint8Array(wavDeclaring(16_000, 16, new Uint8Array(3200), 0x7fffffff)), headers: mka('audio/wav') });
    expect(r.status).toBe(200);
    expect(r.body.data.media.durationMs).toBe('100');
  });

  it('refuses a WAV whose block alignment contradicts its format (415 MALFORMED)', async () => {
    const bytes = wavDeclaring(16_000, 16, new Uint8Array(3200));
    bytes.writeUInt16LE(64, 32);
    refusedWith(await server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: mka('audio/wav') }), 415, 'UNSUPPORTED_TYPE', 'MALFORMED');
    await stillAnswers(server);
  });

  it(`refuses a WAV with more than ${WAV_MAX_CHUNKS} chunks before its data (415 TOO_MANY_ELEMENTS)`, async () => {
    const fmt = wavDeclaring(16_000, 16, new Uint8Array(0)).subarray(0, 36);
    const junk = Buffer.alloc(8 * WAV_MAX_CHUNKS);
    for (let i = 0; i < WAV_MAX_CHUNKS; i++) junk.write('junk', i * 8, 'ascii');
    const r = await server.call('POST', '/uploads', { body: new Uint8Array(Buffer.concat([fmt, junk, Buffer.from('data\x00\x00\x00\x00', 'latin1')])), headers: mka('audio/wav') });
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'TOO_MANY_ELEMENTS');
    expect(r.body.details.maxChunks).toBe(WAV_MAX_CHUNKS);
    await stillAnswers(server);
  });

  it(`refuses audio longer than ${SERVER_LIMITS.mediaMaxDurationMs} ms with 413 DURATION_TOO_LONG, and accepts exactly the limit`, async () => {
    // 1 kHz 8-bit mono: one byte a millisecond, the cheapest way to say 4 hours.
    const limit = SERVER_LIMITS.mediaMaxDurationMs;
    const at = await server.call('POST', '/uploads', { body: new Uint8Array(wavDeclaring(1000, 8, new Uint8Array(limit).fill(128))), headers: mka('audio/wav') });
    expect(at.status).toBe(200);
    await server.call('DELETE', `/uploads/${at.body.data.uploadId}`);
    const past = await server.call('POST', '/uploads', { body: new Uint8Array(wavDeclaring(1000, 8, new Uint8Array(limit + 1).fill(128))), headers: mka('audio/wav') });
    refusedWith(past, 413, 'PAYLOAD_TOO_LARGE', 'DURATION_TOO_LONG');
    expect(past.body.details).toMatchObject({ durationMs: limit + 1, maxDurationMs: limit });
    await stillAnswers(server);
  });
});

describe('Matroska lacing, nesting and element counts', () => {
  const server = serverForSuite();

  const send = (bytes: Buffer | Uint8Array) => server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: mka() });
  const withBlocks = (blocks: number[]) => file([...el(IDS.tracks, pcmTrack(16_000)), ...el(IDS.cluster, blocks)]);
  const EBML_LACING = 0x86;
  const XIPH_LACING = 0x82;

  it('refuses 8 EBML-laced blocks whose 256 lace sizes swing by ±1 MiB (415 LACE_OVERRUN)', async () => {
    const MiB = 1024 * 1024;
    const lace = [255, ...vint(MiB, 4)];
    for (let i = 1; i < 255; i++) lace.push(...signedVint(i % 2 === 1 ? -MiB : MiB, 4));
    const block = simpleBlock(new Uint8Array(512), EBML_LACING, lace);
    const bytes = withBlocks(Array.from({ length: 8 }, () => block).flat());
    expect(bytes.length).toBeLessThan(16 * 1024);
    const r = await send(bytes);
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'LACE_OVERRUN');
    expect(r.body.details.blockBytes).toBe(512);
    await stillAnswers(server);
  });

  it('refuses an EBML lace whose size difference makes a frame negative', async () => {
    const lace = [2, ...vint(10), ...signedVint(-1024 * 1024, 4)];
    const r = await send(withBlocks(simpleBlock(new Uint8Array(64), EBML_LACING, lace)));
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'LACE_OVERRUN');
    expect(r.body.message).toMatch(/declares a frame of -\d+ bytes/);
  });

  it('refuses a Xiph lace whose sizes run past the block', async () => {
    const lace = [3, 255, 255, 255, 255];
    refusedWith(await send(withBlocks(simpleBlock(new Uint8Array(0), XIPH_LACING, lace))), 415, 'UNSUPPORTED_TYPE', 'LACE_OVERRUN');
    await stillAnswers(server);
  });

  it('accepts an EBML lace whose sizes fit, at the duration its payload holds', async () => {
    const lace = [2, ...vint(1000), ...signedVint(-500, 2)];
    const r = await send(withBlocks(simpleBlock(new Uint8Array(3200), EBML_LACING, lace)));
    expect(r.status).toBe(200);
    expect(r.body.data.media.durationMs).toBe('100');
  });

  it(`refuses 20,000 nested sized Segments (415 NESTING_TOO_DEEP, at most ${MATROSKA_MAX_DEPTH} levels)`, async () => {
    const levels = 20_000;
    const header = 12; // 4-byte id, 8-byte size
    const bytes = Buffer.alloc(EBML_HEADER.length + levels * header);
    Buffer.from(EBML_HEADER).copy(bytes);
    for (let i = 0; i < levels; i++) {
      const at = EBML_HEADER.length + i * header;
      Buffer.from([...IDS.segment, ...vint((levels - 1 - i) * header, 8)]).copy(bytes, at);
    }
    const r = await send(bytes);
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'NESTING_TOO_DEEP');
    expect(r.body.details.maxDepth).toBe(MATROSKA_MAX_DEPTH);
    await stillAnswers(server);
  });

  it('reads 200,000 unknown-size Segments as siblings, not 200,000 levels: no audio, 415 NO_AUDIO', async () => {
    const one = [...IDS.segment, ...UNKNOWN_SIZE];
    const bytes = Buffer.alloc(EBML_HEADER.length + 200_000 * one.length);
    Buffer.from(EBML_HEADER).copy(bytes);
    for (let i = 0; i < 200_000; i++) Buffer.from(one).copy(bytes, EBML_HEADER.length + i * one.length);
    refusedWith(await send(bytes), 415, 'UNSUPPORTED_TYPE', 'NO_AUDIO');
    await stillAnswers(server);
  });

  it('reads live-style unknown-size Clusters one after another', async () => {
    const cluster = [...IDS.cluster, ...UNKNOWN_SIZE, ...simpleBlock(new Uint8Array(1600))];
    const bytes = Buffer.from([...EBML_HEADER, ...IDS.segment, ...UNKNOWN_SIZE, ...el(IDS.tracks, pcmTrack(16_000)), ...cluster, ...cluster, ...cluster]);
    const r = await send(bytes);
    expect(r.status).toBe(200);
    expect(r.body.data.media.durationMs).toBe('150');
  });

  it(`refuses more than ${MATROSKA_MAX_ELEMENTS} elements (415 TOO_MANY_ELEMENTS)`, async () => {
    const count = MATROSKA_MAX_ELEMENTS + 1;
    const voids = Buffer.alloc(count * 2);
    for (let i = 0; i < count; i++) {
      voids[i * 2] = IDS.void[0];
      voids[i * 2 + 1] = 0x80;
    }
    const bytes = Buffer.concat([Buffer.from([...EBML_HEADER, ...IDS.segment, ...vint(voids.length, 8)]), voids]);
    const r = await send(bytes);
    refusedWith(r, 415, 'UNSUPPORTED_TYPE', 'TOO_MANY_ELEMENTS');
    expect(r.body.details.maxElements).toBe(MATROSKA_MAX_ELEMENTS);
    await stillAnswers(server);
  });

  it('refuses an element that runs past its parent (415 MALFORMED)', async () => {
    const bytes = file([...el(IDS.tracks, pcmTrack(16_000)), ...IDS.cluster, ...vint(1 << 20, 4), ...simpleBlock(new Uint8Array(100))]);
    refusedWith(await send(bytes), 415, 'UNSUPPORTED_TYPE', 'MALFORMED');
  });
});

describe('stored uploads and the storage quota', () => {
  const QUOTA = 8 * 1024 * 1024;
  const FIVE_MIB_WAV = wav([pcm([{ tone: 220, ms: 1000 }, { silence: 500 }], 16_000)].map((c) => {
    const long = new Float32Array((5 * 1024 * 1024 - 44) / 2);
    for (let i = 0; i < long.length; i += c.length) long.set(c.subarray(0, Math.min(c.length, long.length - i)), i);
    return long;
  }));
  let server: TestServer;
  let slow: TestServer;
  let host: Server;
  let hostPort = 0;
  beforeAll(async () => {
    server = await start({ uploadQuotaBytes: QUOTA });
    host = createServer((_, res) => res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(FIVE_MIB_WAV));
    await new Promise<void>((resolve) => host.listen(0, '127.0.0.1', resolve));
    hostPort = (host.address() as AddressInfo).port;
    slow = await start({ uploadQuotaBytes: QUOTA, allowMediaHosts: [`127.0.0.1:${hostPort}`], taskTiming: { queueMs: 1, processingMs: 1500, reconcilingMs: 1 } });
  });
  afterAll(async () => {
    await server.close();
    await slow.close();
    await new Promise((resolve) => host.close(resolve));
  });

  const put = (s: TestServer, bytes: Uint8Array<ArrayBuffer>, key = KEY_A) => s.call('POST', '/uploads', { key, body: bytes, headers: { 'Content-Type': 'audio/wav' } });
  const storage = async (s: TestServer, key = KEY_A) => (await s.call('GET', '/stt/capabilities', { key })).body.data.account.storage;

  it('keeps an upload as its bytes, never as decoded Float32', async () => {
    const r = await put(server, new Uint8Array(FIVE_MIB_WAV));
    expect(r.status).toBe(200);
    const account = server.services.accounts.all[0]!;
    const kept = (await server.services.uploads.get(account, r.body.data.uploadId))!;
    const track = kept.media.tracks[0]!;
    expect(track.source.bytes).not.toBeInstanceOf(Float32Array);
    expect(track.source.bytes.byteLength).toBe(FIVE_MIB_WAV.length - 44);
    expect(kept.media.heldBytes).toBeLessThanOrEqual(kept.sizeBytes);
    expect(await storage(server)).toEqual({ usedBytes: String(FIVE_MIB_WAV.length), quotaBytes: String(QUOTA) });
    await server.call('DELETE', `/uploads/${r.body.data.uploadId}`);
  });

  it('publishes the media limits in capabilities', async () => {
    const media = (await server.call('GET', '/stt/capabilities')).body.data.media;
    expect(media).toEqual({
      maxBytes: String(LIMITS.uploadMaxBytes), maxDurationMs: String(SERVER_LIMITS.mediaMaxDurationMs), sampleRateHz: { minimum: 1000, maximum: 384_000 },
      maxChannels: 32, wav: { maxChunks: WAV_MAX_CHUNKS }, matroska: { maxDepth: MATROSKA_MAX_DEPTH, maxElements: MATROSKA_MAX_ELEMENTS, maxTracks: 64 },
    });
  });

  it('refuses an upload past the quota with 413 STORAGE_QUOTA_EXCEEDED, per account, until one is deleted', async () => {
    const first = await put(server, new Uint8Array(FIVE_MIB_WAV));
    expect(first.status).toBe(200);
    const second = await put(server, new Uint8Array(FIVE_MIB_WAV));
    expect(second.status).toBe(413);
    expect(second.body).toMatchObject({
      code: -1, errorCode: 'STORAGE_QUOTA_EXCEEDED',
      details: { usedBytes: String(FIVE_MIB_WAV.length), requestedBytes: String(FIVE_MIB_WAV.length), quotaBytes: String(QUOTA) },
    });
    // Another account has its own quota.
    const other = await put(server, new Uint8Array(FIVE_MIB_WAV), KEY_B);
    expect(other.status).toBe(200);
    expect((await server.call('DELETE', `/uploads/${first.body.data.uploadId}`, { key: KEY_B })).status).toBe(404);

    const deleted = await server.call('DELETE', `/uploads/${first.body.data.uploadId}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ uploadId: first.body.data.uploadId, storage: { usedBytes: '0', quotaBytes: String(QUOTA) } });
    expect((await server.call('DELETE', `/uploads/${first.body.data.uploadId}`)).status).toBe(404);
    const again = await put(server, new Uint8Array(FIVE_MIB_WAV));
    expect(again.status).toBe(200);
    await server.call('DELETE', `/uploads/${again.body.data.uploadId}`);
    await server.call('DELETE', `/uploads/${other.body.data.uploadId}`, { key: KEY_B });
    await stillAnswers(server);
  });

  it('refuses a 100 MiB WAV past the quota from its declared length, then serves the next request', async () => {
    const big = new Uint8Array(new ArrayBuffer(100 * 1024 * 1024));
    big.set(wavDeclaring(16_000, 16, new Uint8Array(0), big.length - 44));
    const r = await put(server, big);
    expect(r.status).toBe(413);
    expect(r.body.errorCode).toBe('STORAGE_QUOTA_EXCEEDED');
    expect(await storage(server)).toEqual({ usedBytes: '0', quotaBytes: String(QUOTA) });
    await stillAnswers(server);
  });

  it('finishes a transcription whose upload was deleted while it ran', async () => {
    const up = await put(slow, new Uint8Array(FIVE_MIB_WAV));
    const created = await slow.call('POST', '/stt/transcriptions', { json: { uploadId: up.body.data.uploadId }, headers: { 'Idempotency-Key': idem() } });
    expect(created.status).toBe(200);
    expect((await slow.call('DELETE', `/uploads/${up.body.data.uploadId}`)).status).toBe(200);
    expect(await storage(slow)).toEqual({ usedBytes: '0', quotaBytes: String(QUOTA) });
    await slow.services.tasks.waitForTerminal(created.body.data.transcriptionId, 20_000);
    const done = await slow.call('GET', `/stt/transcriptions/${created.body.data.transcriptionId}`);
    expect(done.body.data.status).toBe('COMPLETED');
  });

  it('counts media fetched from a mediaUrl until its task ends', async () => {
    const created = await slow.call('POST', '/stt/transcriptions', { json: { mediaUrl: `http://127.0.0.1:${hostPort}/five.wav` }, headers: { 'Idempotency-Key': idem() } });
    expect(created.status).toBe(200);
    expect(await storage(slow)).toEqual({ usedBytes: String(FIVE_MIB_WAV.length), quotaBytes: String(QUOTA) });
    const refused = await put(slow, new Uint8Array(FIVE_MIB_WAV));
    expect(refused.body.errorCode).toBe('STORAGE_QUOTA_EXCEEDED');
    await slow.services.tasks.waitForTerminal(created.body.data.transcriptionId, 20_000);
    // Released in the same turn as the terminal status or just after it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(await storage(slow)).toEqual({ usedBytes: '0', quotaBytes: String(QUOTA) });
    await stillAnswers(slow);
  });
});

describe('decoding a kept track block by block', () => {
  /** Stereo 16-bit WAV of `frames` frames at `rate` with different content per channel. */
  function stereo(rate: number, frames: number) {
    const left = Float32Array.from({ length: frames }, (_, i) => 0.5 * Math.sin(i / 7));
    const right = Float32Array.from({ length: frames }, (_, i) => 0.25 * Math.cos(i / 3));
    return decodeMedia(wav([left, right], rate), 'audio/wav').tracks[0]!;
  }
  function whole(track: ReturnType<typeof stereo>, select: number | 'mix'): Float32Array {
    const out = new Float32Array(track.frames);
    track.source.readInto(0, track.frames, select, out);
    return out;
  }

  it('gives 16 kHz audio through unchanged across block boundaries', () => {
    const track = stereo(16_000, 40_000);
    for (const select of [0, 1, 'mix'] as const) expect(collect(feedOf(track, select))).toEqual(whole(track, select));
  });

  it('resamples 44.1 kHz in blocks exactly as one call over the whole channel', () => {
    const track = stereo(44_100, 100_000);
    const input = whole(track, 'mix');
    const resampler = new Resampler({ inputRate: 44_100, outputRate: 16_000 });
    const out = new Float32Array(resampler.maxOutputFor(input.length) + resampler.pendingFlush + resampler.latencyFrames);
    let n = resampler.process(input, out);
    n += resampler.flush(out, n);
    const feed = feedOf(track, 'mix');
    expect(feed.samples).toBe(n);
    expect(collect(feed)).toEqual(out.subarray(0, n));
  });

  it('interpolates a rate the resampler does not take in blocks exactly as over the whole channel', () => {
    const rate = 12_345;
    const track = stereo(rate, 60_000);
    const input = whole(track, 1);
    const length = Math.floor((input.length * 16_000) / rate);
    const expected = new Float32Array(length);
    const step = rate / 16_000;
    for (let i = 0; i < length; i++) {
      const i0 = Math.floor(i * step);
      const a = input[i0] ?? 0;
      const b = input[i0 + 1] ?? a;
      expected[i] = a + (b - a) * (i * step - i0);
    }
    expect(collect(feedOf(track, 1))).toEqual(expected);
  });
});
