import type { RunningServer } from '@soundclone/server';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/** Socket loss, half-open paths, withheld acks and rotation: nothing lost, nothing duplicated. */
describe('realtime session: recovery', () => {
  let server: RunningServer;
  beforeAll(async () => {
    // Fast heartbeats so a half-open socket is noticed in well under a second.
    server = await startRealtimeServer({ socket: { heartbeatIntervalMs: 50, heartbeatTimeoutMs: 2000 } });
  });
  afterEach(() => server.faults.socket.clear());
  afterAll(() => server.close());

  it('a forced socket close mid-stream loses nothing: stored audio is bit-identical, lines once', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const events = new EventCapture(session);
    const pcm = speech(6, 3);
    const half = Math.floor(pcm.length / 2 / 320) * 320 + 77;
    await feed(session, pcm, 0, half);
    expect(server.faults.socket.closeSocket(session.sessionId, 4000, 'injected')).toBe(true);
    await feed(session, pcm, half);
    await events.waitFor('reconnected');
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    const ids = events.all('line').map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(result.session.lines.map((l) => l.id));
    expect(events.states()).toContain('reconnecting');
    expect(events.all('gap')).toEqual([]);
  });

  it('resends exactly the unacknowledged samples after a close while acks were withheld', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const events = new EventCapture(session);
    const rule = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const pcm = speech(3, 5);
    await feed(session, pcm, 0, 16_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.stats.ackedSamples).toBe(0);
    expect(session.stats.bufferedSamples).toBe(16_000);
    rule.remove();
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnected');
    await feed(session, pcm, 16_000);
    await session.finish();
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('detects a half-open socket by heartbeat and resumes on a new one', async () => {
    const session = await clientFor(server).stt.realtime.connect({ heartbeatTimeoutMs: 300 });
    const events = new EventCapture(session);
    const pcm = speech(3, 9);
    await feed(session, pcm, 0, 20_000);
    server.faults.socket.halfOpen(session.sessionId);
    await feed(session, pcm, 20_000);
    const lost = await events.waitFor('reconnecting');
    expect(lost.reason).toBe('heartbeat timeout');
    await events.waitFor('reconnected');
    await session.finish();
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('follows rotations into new epochs with no gap and no duplicate', async () => {
    const rotating = await startRealtimeServer({ realtimeTiming: { rotateEverySamples: 12_000 } });
    try {
      const session = await clientFor(rotating).stt.realtime.connect({});
      const events = new EventCapture(session);
      const pcm = speech(5, 11);
      await feed(session, pcm);
      const result = await session.finish();
      const rotations = events.all('rotated');
      expect(rotations.length).toBeGreaterThanOrEqual(3);
      rotations.forEach((r, i) => expect(r).toMatchObject({ fromEpoch: i + 1, toEpoch: i + 2 }));
      expect(result.session.epoch).toBe(rotations.length + 1);
      expect(result.session.status).toBe('COMPLETED');
      expect(await storedAudio(rotating, session.sessionId)).toEqual(pcm);
      const ids = events.all('line').map((l) => l.id);
      expect(new Set(ids).size).toBe(ids.length);
    } finally {
      await rotating.close();
    }
  });

  it('declares a gap when the ring overflowed during an outage: no invented samples, TRANSPORT_GAP at finish', async () => {
    const session = await clientFor(server).stt.realtime.connect({ bufferMs: 500, reconnect: { nextRetryDelayMs: () => 400 } });
    const events = new EventCapture(session);
    const pcm = speech(3, 15);
    await feed(session, pcm, 0, 16_000);
    await events.waitForMessage('audio.ack', (a) => a.receivedSamples === 16_000);
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    await feed(session, pcm, 16_000, 48_000); // far more than 500 ms of ring while the socket is down
    const gap = await events.waitFor('gap');
    expect(gap).toMatchObject({ from: 16_000, to: 48_000 - session.stats.capacitySamples, serverSample: 16_000, cause: 'overflow' });
    await feed(session, pcm, 48_000);
    const result = await session.finish();
    // A 500 ms ring may also overflow while the rest is fed in bursts: every gap is reported, and the
    // stored audio is the captured audio with exactly the reported ranges left out (never zeros).
    const gaps = events.all('gap');
    const lost = gaps.reduce((n, g) => n + g.to - g.from, 0);
    const kept: number[] = [];
    let at = 0;
    for (const g of gaps) {
      kept.push(...pcm.subarray(at, g.from));
      at = g.to;
    }
    kept.push(...pcm.subarray(at));
    expect(await storedAudio(server, session.sessionId)).toEqual(Int16Array.from(kept));
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length - lost));
    expect(result.session.status).toBe('PARTIAL');
    expect(result.notices.map((n) => n.code)).toContain('TRANSPORT_GAP');
    expect(session.stats.gapSamples).toBe(lost);
    expect(session.gaps.reduce((n, [a, b]) => n + b - a, 0)).toBe(lost);
    expect(session.stats.overflowSamples).toBeGreaterThanOrEqual(gap.to - gap.from);
  });

  it('after the recovery window passed, finishes over REST so the result is saved, and says so', async () => {
    const short = await startRealtimeServer({ realtimeTiming: { recoveryWindowMs: 200 } });
    try {
      // Stay away longer than the window: one retry after 500 ms.
      const session = await clientFor(short).stt.realtime.connect({ reconnect: { nextRetryDelayMs: (c) => (c.attempt === 0 ? 500 : null) } });
      const events = new EventCapture(session);
      const pcm = speech(2, 13);
      await feed(session, pcm);
      await new Promise((resolve) => setTimeout(resolve, 200));
      short.faults.socket.closeSocket(session.sessionId, 4000);
      const result = await session.finish({ timeoutMs: 20_000 });
      expect(result.reason).toBe('recovery window expired: finished over REST');
      expect(events.all('recovery.expired')).toEqual([{ finishedOverRest: true }]);
      expect(events.all('state').at(-1)).toMatchObject({ to: 'finished', reason: 'recovery window expired: finished over REST' });
      expect(['COMPLETED', 'PARTIAL']).toContain(result.session.status);
    } finally {
      await short.close();
    }
  });

  it('with the default policy, an outage longer than the window still ends with the result saved', async () => {
    const short = await startRealtimeServer({ realtimeTiming: { recoveryWindowMs: 300 } });
    try {
      const session = await clientFor(short).stt.realtime.connect({});
      const events = new EventCapture(session);
      await feed(session, speech(1, 17));
      // Every socket upgrade fails for a while (the network is down), longer than the window.
      short.faults.inject({ method: 'GET', path: '/stt/realtime/socket', times: 1_000_000, action: { kind: 'dropBeforeProcessing' } });
      short.faults.socket.closeSocket(session.sessionId, 4000);
      await new Promise((resolve) => setTimeout(resolve, 800));
      short.faults.clear();
      const result = await session.finish({ timeoutMs: 20_000 });
      expect(result.reason).toBe('recovery window expired: finished over REST');
      expect(events.all('recovery.expired')).toEqual([{ finishedOverRest: true }]);
      expect(events.all('reconnecting').length).toBeGreaterThan(1);
    } finally {
      await short.close();
    }
  });
});
