import type { RunningServer } from '@soundclone/server';
import { ValidationError, isSoundCloneError, type RealtimeSessionEvents, type RealtimeSocketSession, type ServerMessage } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, clientFor, speech, startRealtimeServer, storedAudio } from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const EVENTS: Array<keyof RealtimeSessionEvents> = ['state', 'health', 'gap', 'reconnecting', 'reconnected', 'message'];
const SOCKET_PATH = '/sound_clone/api/v1/stt/realtime/socket';
/** A mobile uplink of ~190 kbit/s: below the 256 kbit/s of 16 kHz PCM16, so the in-flight window (2 s) fills and waits on the link. */
const SLOW_UPLINK = 24_000;

/** Writes 20 ms blocks of 16 kHz PCM on the wall clock, as a live capture does; `at(second)` when each second starts. */
async function streamRealTime(session: RealtimeSocketSession, pcm: Int16Array, at: (second: number) => void = () => {}): Promise<void> {
  const started = Date.now();
  for (let i = 0, offset = 0; offset < pcm.length; i++, offset += 320) {
    if (offset % 16_000 === 0) at(offset / 16_000);
    session.writePcm16(pcm.subarray(offset, offset + 320));
    const due = started + (i + 1) * 20 - Date.now();
    if (due > 0) await sleep(due);
  }
}

/** The pongs that answered the ack watchdog's probes (ids `ack-N`; the round-trip pings are `rtt-N`). */
function probePongs(events: EventCapture): ServerMessage[] {
  return events.all('message').filter((m) => m.type === 'pong' && String(m.id).startsWith('ack-'));
}

/**
 * Half-open detection on a slow but alive link (ChaosProxy.throttle): a `ping` probe queued behind the
 * in-flight window takes as long as that backlog to come back, so the probe's deadline waits for it
 * (docs/protocol.md "Heartbeat and half-open sockets"); a socket that is really half-open is still
 * replaced. Outcomes are asserted (reconnects, states, the stored audio), never times.
 */
describe('realtime session: half-open detection on a slow link', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  /**
   * Streams 7 s of speech through a proxy whose uplink is throttled, and at second 4 (the window full,
   * about 2 s of audio queued on the link) the server withholds its acks for 3 s: the acks stop while the
   * link keeps carrying audio, so only the probe's pong can prove the socket alive, and it comes back
   * behind the queue.
   */
  async function slowLinkAckStall(ackWatch: { maxBacklogWaitMs?: number } | undefined, seed: number) {
    const proxy = await new ChaosProxy(server.port).listen();
    try {
      proxy.throttle(SLOW_UPLINK, 'up');
      const session = await clientFor(server).stt.realtime.connect({ socketUrl: `ws://127.0.0.1:${proxy.port}${SOCKET_PATH}`, ...(ackWatch === undefined ? {} : { ackWatch }) });
      const events = new EventCapture(session, EVENTS);
      const pcm = speech(6, seed).subarray(0, 16_000 * 7);
      let unackedAtStall = 0;
      await streamRealTime(session, pcm, (second) => {
        if (second !== 4) return;
        unackedAtStall = session.stats.unackedSamples;
        const rule = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
        setTimeout(() => rule.remove(), 3000);
      });
      const result = await session.finish({ timeoutMs: 60_000 });
      const stored = await storedAudio(server, session.sessionId);
      return { session, events, result, stored, pcm, unackedAtStall };
    } finally {
      await proxy.close();
    }
  }

  it('a probe queued behind the in-flight window on a slow link is waited for: no reconnect, COMPLETED, the exact audio', async () => {
    const { session, events, result, stored, pcm, unackedAtStall } = await slowLinkAckStall(undefined, 201);
    // When the acks stopped, more than a second of this link's traffic was queued ahead of where the
    // probe would go: longer than probeTimeoutMs alone waits.
    expect(unackedAtStall * 2).toBeGreaterThan(SLOW_UPLINK);
    expect(events.all('health').some((h) => h.state === 'degraded')).toBe(true);
    expect(probePongs(events).length).toBeGreaterThanOrEqual(1);
    expect(events.all('reconnecting')).toEqual([]);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(session.gaps).toEqual([]);
    expect(stored).toEqual(pcm);
  }, 60_000);

  it('the same link with maxBacklogWaitMs 0 (the deadline ignores the backlog) drops the alive socket; nothing is lost either way', async () => {
    const { session, events, result, stored, pcm } = await slowLinkAckStall({ maxBacklogWaitMs: 0 }, 203);
    const reasons = events.all('reconnecting').map((r) => r.reason);
    expect(reasons.length).toBeGreaterThanOrEqual(1);
    expect(reasons[0]).toMatch(/probe unanswered/);
    expect(result.session.status).toBe('COMPLETED');
    expect(session.gaps).toEqual([]);
    expect(stored).toEqual(pcm);
  }, 60_000);

  it('a half-open socket on the slow link is still replaced: one reconnect, COMPLETED, the exact audio', async () => {
    const proxy = await new ChaosProxy(server.port).listen();
    try {
      proxy.throttle(SLOW_UPLINK, 'up');
      const session = await clientFor(server).stt.realtime.connect({ socketUrl: `ws://127.0.0.1:${proxy.port}${SOCKET_PATH}` });
      const events = new EventCapture(session, EVENTS);
      const pcm = speech(6, 205).subarray(0, 16_000 * 6);
      await streamRealTime(session, pcm, (second) => {
        if (second === 3) proxy.halfOpen();
      });
      const result = await session.finish({ timeoutMs: 60_000 });
      expect(events.all('reconnecting').map((r) => r.reason)).toEqual([expect.stringMatching(/probe unanswered/)]);
      expect(events.all('reconnected')).toHaveLength(1);
      expect(result.session.status).toBe('COMPLETED');
      expect(session.gaps).toEqual([]);
      expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('ackWatch false: no probe and no degraded health; a half-open socket is left to the heartbeat, which replaces it', async () => {
    const proxy = await new ChaosProxy(server.port).listen();
    try {
      const session = await clientFor(server).stt.realtime.connect({ socketUrl: `ws://127.0.0.1:${proxy.port}${SOCKET_PATH}`, ackWatch: false, heartbeatTimeoutMs: 2500 });
      const events = new EventCapture(session, EVENTS);
      const pcm = speech(4, 207).subarray(0, 16_000 * 4);
      await streamRealTime(session, pcm, (second) => {
        if (second === 1) proxy.halfOpen();
      });
      const result = await session.finish({ timeoutMs: 30_000 });
      expect(events.all('reconnecting').map((r) => r.reason)).toEqual(['heartbeat timeout']);
      expect(probePongs(events)).toEqual([]);
      expect(events.all('health').filter((h) => h.kind === 'connection' && h.state === 'degraded')).toEqual([]);
      expect(result.session.status).toBe('COMPLETED');
      expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('an invalid ackWatch is a ValidationError listing every field, before any session is created', async () => {
    const client = clientFor(server);
    const requestsBefore = server.requests.length;
    const caught = await client.stt.realtime.connect({ ackWatch: { probeTimeoutMs: -1, probeAfterMs: Number.NaN, probeEvery: 5 } as never }).catch((e: unknown) => e);
    expect(isSoundCloneError(caught, ValidationError)).toBe(true);
    const fields = (caught as { violations: Array<{ field: string }> }).violations.map((v) => v.field).sort();
    expect(fields).toEqual(['ackWatch.probeAfterMs', 'ackWatch.probeEvery', 'ackWatch.probeTimeoutMs']);
    const notAnObject = await client.stt.realtime.connect({ ackWatch: true as never }).catch((e: unknown) => e);
    expect(isSoundCloneError(notAnObject, ValidationError) && notAnObject.violations.map((v) => v.field)).toEqual(['ackWatch']);
    // Refused before the REST create: nothing reached the server.
    expect(server.requests.length).toBe(requestsBefore);
  });
});
