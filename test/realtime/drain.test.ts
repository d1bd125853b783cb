import type { RunningServer } from '@soundclone/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/**
 * The drain before session.pause / session.finish: bounded by drainTimeoutMs even when the in-flight
 * window is full and no acknowledgement comes, and never losing audio (a finish sends the rest past the
 * window before its message, a pause keeps it for the next epoch); the resampler's tail of a Float32
 * session goes out with a pause as with a finish.
 */
describe('realtime session: draining before pause and finish', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterEach(() => server.faults.clear());
  afterAll(() => server.close());

  it('finish() with the window full and no acks sends the rest past the window, then the finish at drainTimeoutMs: nothing lost', async () => {
    const session = await clientFor(server).stt.realtime.connect({ drainTimeoutMs: 600 });
    const events = new EventCapture(session, ['gap', 'reconnecting']);
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const pcm = speech(4, 81).subarray(0, 80_000); // about 5 s: more than the 2 s in-flight window
    await feed(session, pcm);
    expect(session.stats.queuedSamples).toBeGreaterThan(0);
    const started = Date.now();
    const result = await session.finish({ timeoutMs: 8000 });
    expect(Date.now() - started).toBeLessThan(5000);
    // The socket is alive (the server withholds acks but reads): every frame went out before the
    // finish on the ordered socket, so the server settles with all of it.
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(result.session.status).toBe('COMPLETED');
    expect(result.notices.map((n) => n.code)).not.toContain('TRANSPORT_GAP');
    expect(events.all('gap')).toEqual([]);
    expect(events.all('reconnecting')).toEqual([]);
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('pause() goes ahead at drainTimeoutMs the same way; the rest goes out in the next epoch after resume()', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ drainTimeoutMs: 600 });
    const events = new EventCapture(session);
    const rule = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const pcm = speech(6, 83);
    const cut = 80_000;
    await feed(session, pcm, 0, cut);
    const started = Date.now();
    await session.pause({ timeoutMs: 8000 });
    expect(Date.now() - started).toBeLessThan(5000);
    const view = await client.stt.realtime.get(session.sessionId);
    expect(view.status).toBe('PAUSED');
    expect(view.usage.receivedSamples).toBe(32_000n);
    expect(view.usage.capturedSamples).toBe(BigInt(cut));
    rule.remove();
    await session.resume();
    await feed(session, pcm, cut);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.all('gap')).toEqual([]);
  });

  it('Float32 input: pause() sends the resampler’s tail in the paused epoch, so pause-then-finish loses nothing', async () => {
    const block = new Float32Array(960);
    for (let i = 0; i < block.length; i++) block[i] = 0.3 * Math.sin(i / 7);
    const received: bigint[] = [];
    for (const pauseFirst of [false, true]) {
      const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000 });
      for (let i = 0; i < 100; i++) session.write(block); // 96,000 inputs: exactly 32,000 at 16 kHz
      if (pauseFirst) {
        await session.pause();
        expect(session.stats.producedSamples).toBe(32_000);
      }
      const result = await session.finish();
      received.push(result.session.usage.receivedSamples);
      expect(result.session.usage.capturedSamples).toBe(result.session.usage.receivedSamples);
    }
    expect(received).toEqual([32_000n, 32_000n]);
  });

  it('Float32 input across pause and resume: each segment gets its exact count, nothing more and nothing lost', async () => {
    const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000 });
    const block = new Float32Array(480).fill(0.2); // 160 samples at 16 kHz per block
    for (let i = 0; i < 100; i++) session.write(block.subarray(0, 479)); // 47,900 inputs: 15,966 outputs
    await session.pause();
    expect(session.stats.producedSamples).toBe(Math.floor(47_900 / 3));
    await session.resume();
    for (let i = 0; i < 50; i++) session.write(block); // 24,000 inputs: 8,000 outputs
    const result = await session.finish();
    const expected = Math.floor(47_900 / 3) + 8000;
    expect(result.session.usage.receivedSamples).toBe(BigInt(expected));
    expect(result.session.usage.capturedSamples).toBe(BigInt(expected));
    expect((await storedAudio(server, session.sessionId)).length).toBe(expected);
  });
});
