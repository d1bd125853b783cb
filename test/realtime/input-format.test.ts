import type { RunningServer } from '@soundclone/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { encodeStream } from './offline-encode.js';
import { EventCapture, clientFor, startRealtimeServer, storedAudio } from './support.js';

/** Float32 tone with seeded noise, interleaved over `channels`. */
function tone(rate: number, frames: number, hz: number, channels = 1, seed = 1): Float32Array {
  const out = new Float32Array(frames * channels);
  for (let i = 0; i < frames; i++) {
    const noise = (((Math.imul(i + seed * 7919, 2654435761) >>> 16) % 64) - 32) / 32768;
    const v = 0.4 * Math.sin((2 * Math.PI * hz * i) / rate) + noise;
    for (let c = 0; c < channels; c++) out[i * channels + c] = v;
  }
  return out;
}

/** What a stream of its own gives: the reference for each segment. */
function offline(rate: number, x: Float32Array, channels = 1): Int16Array {
  return encodeStream(x, rate, { channels, kernel: 'js' });
}

describe('realtime session: the input format changes at a discontinuity', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer({ socket: { heartbeatIntervalMs: 50, heartbeatTimeoutMs: 2000 } });
  });
  afterEach(() => server.faults.socket.clear());
  afterAll(() => server.close());

  it('a device back at 44.1 kHz stereo continues the same session: the server gets each stretch exactly, across a reconnect', async () => {
    const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000 });
    const events = new EventCapture(session);
    session.setInputFormat({ sampleRate: 48_000, kernel: 'js' });
    const a = tone(48_000, 48_000 * 2 + 7, 440);
    const b = tone(44_100, 44_100 * 2 + 13, 300, 2, 2);
    for (let at = 0; at < a.length; at += 480) session.write(a.subarray(at, at + 480));
    // Writing into an open segment at another rate is refused: the resampler holds 48 kHz input.
    expect(() => session.setInputFormat({ sampleRate: 44_100, channels: 2, kernel: 'js' })).toThrow(expect.objectContaining({ code: 'REALTIME_INVALID_STATE' }));
    session.markDiscontinuity();
    session.setInputFormat({ sampleRate: 44_100, channels: 2, kernel: 'js' });
    // Acks withheld and the socket closed: what was sent before the change is resent from the kept ring.
    const rule = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const split = 2 * 22_001; // a whole number of stereo frames
    for (let at = 0; at < split; at += 882) session.write(b.subarray(at, Math.min(at + 882, split)));
    await new Promise((resolve) => setTimeout(resolve, 50));
    rule.remove();
    server.faults.socket.closeSocket(session.sessionId, 4000, 'injected');
    await events.waitFor('reconnected');
    for (let at = split; at < b.length; at += 882) session.write(b.subarray(at, at + 882));
    const result = await session.finish();
    const expected = new Int16Array([...offline(48_000, a), ...offline(44_100, b, 2)]);
    expect(expected.length).toBe(32_002 + 32_004); // floor(96007 / 3) + floor(88213 · 160 / 441)
    expect(result.session.usage.capturedSamples).toBe(BigInt(expected.length));
    expect(result.session.usage.receivedSamples).toBe(BigInt(expected.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(expected);
    expect(events.all('gap')).toEqual([]);
  });
});
