import { DefaultReconnectPolicy, RealtimeError, isSoundCloneError, type RealtimeSocketSession, type SessionHealth } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, PREFIX, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes 20 ms blocks at the pace of a live capture (real time), as a microphone would. */
async function writeLive(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  const t0 = performance.now();
  for (let at = 0, i = 1; at < pcm.length; at += 320, i++) {
    session.writePcm16(pcm.subarray(at, Math.min(pcm.length, at + 320)));
    const wait = t0 + i * 20 - performance.now();
    if (wait > 0) await sleep(wait);
  }
}

/**
 * A budget of one retry and a stable window longer than a socket lives: any recycle taken for a loss
 * would exhaust it on the second one, and two in a row would be flapping.
 */
const tight = { reconnect: new DefaultReconnectPolicy({ baseMs: 50, maxMs: 200, maxAttempts: 1 }), stableWindowMs: 3000 } as const;

const LIFETIME_MS = 1000;

/**
 * Socket lifetime limits (docs/protocol.md "Socket lifetime") against the reference server recycling
 * every socket after a second: the session hands over to the next socket with nothing lost or doubled,
 * outside the reconnect budget and flapping detection; an ordinary cut at the same rate is not so lucky.
 */
describe('realtime session: socket recycling', () => {
  let recycling: RunningServer;
  beforeAll(async () => {
    recycling = await startRealtimeServer({ realtimeTiming: { socketLifetimeMs: LIFETIME_MS } });
  });
  afterAll(async () => {
    await recycling.close();
  });

  it('hands over to a standby socket on socket.recycle: every sample once, reported as recycled, budget untouched', async () => {
    const session = await clientFor(recycling).stt.realtime.connect({ ...tight });
    const events = new EventCapture(session, ['reconnecting', 'reconnected', 'health', 'state', 'gap']);
    const pcm = speech(7, 3);
    expect(pcm.length).toBeGreaterThan(16_000 * 8);
    await writeLive(session, pcm);
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(recycling, session.sessionId)).toEqual(pcm);
    expect(session.gaps).toEqual([]);
    expect(events.all('gap')).toEqual([]);

    const log = recycling.sockets.log.filter((e) => e.sessionId === session.sessionId);
    const notices = log.filter((e) => e.kind === 'recycle-notice').length;
    expect(notices).toBeGreaterThanOrEqual(6);
    // Make-before-break: every socket was replaced on its notice, none ran into the limit.
    expect(log.filter((e) => e.kind === 'recycled')).toEqual([]);
    expect(events.all('reconnecting')).toEqual([]);
    const reconnected = events.all('reconnected');
    expect(reconnected.length).toBeGreaterThanOrEqual(6);
    expect(reconnected.every((r) => r.attempt === 0)).toBe(true);
    expect(events.states()).not.toContain('reconnecting');
    const health = session.health;
    expect(health.reconnects).toBe(reconnected.length);
    expect(health.lastReconnect).toMatchObject({ cause: 'recycled', durationMs: expect.any(Number) as unknown });
    expect(events.all('health').some((h: SessionHealth) => h.state === 'flapping')).toBe(false);
    expect(events.all('health').some((h: SessionHealth) => h.kind === 'reconnected' && h.lastReconnect?.cause === 'recycled')).toBe(true);
  }, 40_000);

  it('when the standby cannot connect, the socket closed 4002 at the limit reconnects at once: still nothing lost, budget untouched', async () => {
    const session = await clientFor(recycling).stt.realtime.connect({ ...tight });
    const events = new EventCapture(session, ['reconnecting', 'reconnected', 'health', 'debug']);
    // Each standby's upgrade is refused (a 503 from a busy front end): only the cut at the limit is left.
    session.on('message', (m) => {
      if (m.type === 'socket.recycle') recycling.faults.inject({ method: 'GET', path: '/stt/realtime/socket', action: { kind: 'status', status: 503 } });
    });
    const pcm = speech(7, 5);
    await writeLive(session, pcm);
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(recycling, session.sessionId)).toEqual(pcm);
    expect(session.gaps).toEqual([]);

    const cuts = recycling.sockets.log.filter((e) => e.sessionId === session.sessionId && e.kind === 'recycled').length;
    expect(cuts).toBeGreaterThanOrEqual(5);
    expect(events.all('debug').filter((d) => d.kind === 'standby-lost').length).toBeGreaterThanOrEqual(cuts);
    const reconnecting = events.all('reconnecting');
    expect(reconnecting.length).toBe(cuts);
    for (const r of reconnecting) expect(r).toMatchObject({ attempt: 0, delayMs: 0, reason: 'recycled', closeCode: 4002, recycled: true, flapping: false });
    expect(events.all('reconnected').every((r) => r.attempt === 0)).toBe(true);
    expect(session.health.lastReconnect).toMatchObject({ cause: 'recycled', closeCode: 4002 });
    expect(events.all('health').some((h: SessionHealth) => h.state === 'flapping')).toBe(false);
  }, 40_000);
});

describe('realtime session: what does use the budget', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  let socketUrl: string;
  beforeAll(async () => {
    server = await startRealtimeServer({ realtimeTiming: { rotateEverySamples: 4000 } });
    proxy = await new ChaosProxy(server.port).listen();
    socketUrl = `ws://127.0.0.1:${proxy.port}${PREFIX}/stt/realtime/socket`;
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('ordinary cuts at the recycling rate exhaust the same policy (the recycle tests above can fail)', async () => {
    const session = await clientFor(server).stt.realtime.connect({ ...tight, socketUrl });
    const events = new EventCapture(session, ['reconnecting', 'reconnected', 'health']);
    const failed = new Promise<void>((resolve) => session.on('state', (c) => c.to === 'failed' && resolve()));
    let cuts = 0;
    while (cuts < 5) {
      await sleep(LIFETIME_MS);
      if (session.state === 'failed') break;
      if (proxy.cut() > 0) cuts++;
    }
    await failed;
    expect(cuts).toBe(2); // the first cut takes the one retry; the second, within the stable window, finds none
    const error: unknown = await session.finish().then(() => undefined, (caught: unknown) => caught);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_RECONNECT_EXHAUSTED');
    expect(events.all('reconnecting').map((r) => r.attempt)).toEqual([1]);
  }, 20_000);

  it('many server rotations under maxAttempts: 1 take nothing from the budget: a real cut afterwards still gets its retry', async () => {
    const session = await clientFor(server).stt.realtime.connect({ ...tight, stableWindowMs: 60_000, socketUrl });
    const events = new EventCapture(session, ['reconnecting', 'reconnected', 'rotated', 'health']);
    const pcm = speech(6, 7);
    const half = Math.floor(pcm.length / 2 / 320) * 320;
    await feed(session, pcm, 0, half);
    await events.waitFor('rotated', () => events.all('rotated').length >= 10, 15_000);
    expect(events.all('reconnecting')).toEqual([]);
    proxy.cut();
    expect(await events.waitFor('reconnecting')).toMatchObject({ attempt: 1, flapping: false });
    await events.waitFor('reconnected', (r) => r.attempt === 1);
    await feed(session, pcm, half);
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.all('health').some((h: SessionHealth) => h.state === 'flapping')).toBe(false);
  }, 40_000);
});
