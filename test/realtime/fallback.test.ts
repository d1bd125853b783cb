import type { RunningServer } from '@soundclone/server';
import { SoundClone, RealtimeError, isSoundCloneError } from '@soundclone/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

const SOCKET_PATH = '/stt/realtime/socket';

/**
 * pause(), finish() and close() while the socket is down, and the REST fallbacks that save the
 * result when the socket cannot: over real sockets to the reference server, whose upgrade is dropped
 * by its own fault injection (the network is down for sockets, REST still answers).
 */
describe('realtime session: socket down, REST fallbacks, close()', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterEach(() => {
    server.faults.clear();
    server.faults.socket.clear();
  });
  afterAll(() => server.close());

  const dropUpgrades = (target: RunningServer = server): void => {
    target.faults.inject({ method: 'GET', path: SOCKET_PATH, times: 1_000_000, action: { kind: 'dropBeforeProcessing' } });
  };

  it('pause() while the socket is down waits for it, then pauses with the exact capturedSamples', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 300 } });
    const events = new EventCapture(session);
    const pcm = speech(3, 41);
    await feed(session, pcm, 0, 20_000);
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    await feed(session, pcm, 20_000, 30_000); // buffered while down
    expect(session.state).toBe('reconnecting');
    await session.pause();
    const view = await client.stt.realtime.get(session.sessionId);
    expect(view).toMatchObject({ status: 'PAUSED' });
    expect(view.usage.capturedSamples).toBe(30_000n);
    expect(view.usage.receivedSamples).toBe(30_000n);
    // Queued: the pause waits for the new socket, then drains and pauses on it.
    expect(events.states()).toEqual(['reconnecting', 'streaming', 'pausing', 'paused']);
    await session.resume();
    await feed(session, pcm, 30_000);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('finish() while the socket is down and it comes back in time finishes over the socket with nothing lost', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 300 }, drainTimeoutMs: 5000 });
    const events = new EventCapture(session);
    const pcm = speech(2, 43);
    await feed(session, pcm, 0, 10_000);
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    await feed(session, pcm, 10_000);
    const result = await session.finish();
    expect(result.reason).toBe('finished');
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.all('gap')).toEqual([]);
  });

  it('finish() during a short outage keeps reconnecting (not only drainTimeoutMs) and finishes over the socket with nothing lost', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 250 }, drainTimeoutMs: 300 });
    const events = new EventCapture(session);
    const pcm = speech(2, 44);
    await feed(session, pcm, 0, 16_000);
    await events.waitForMessage('audio.ack', (a) => a.receivedSamples === 16_000);
    dropUpgrades();
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    await feed(session, pcm, 16_000); // held in the ring during the outage
    const started = Date.now();
    const finishing = session.finish();
    // An outage of 1.5 s: far beyond drainTimeoutMs, well inside the recovery window and finish's 60 s.
    const outage = setTimeout(() => server.faults.clear(), 1500);
    const result = await finishing.finally(() => clearTimeout(outage));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(result.reason).toBe('finished');
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.all('gap')).toEqual([]);
    expect(events.all('reconnecting').length).toBeGreaterThan(2);
  });

  it('finish() while the socket stays down finishes over REST once its deadline is restFinishReserveMs away, and declares the undelivered audio', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 100 }, drainTimeoutMs: 100, restFinishReserveMs: 2000 });
    const events = new EventCapture(session);
    const pcm = speech(2, 45);
    await feed(session, pcm, 0, 16_000);
    await events.waitForMessage('audio.ack', (a) => a.receivedSamples === 16_000);
    dropUpgrades();
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    await feed(session, pcm, 16_000); // never reaches the server
    const started = Date.now();
    const result = await session.finish({ timeoutMs: 3000 });
    // Kept reconnecting until 3000 - 2000 ms, not just drainTimeoutMs.
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(events.all('reconnecting').length).toBeGreaterThan(3);
    expect(result.reason).toBe('socket down near the finish deadline: finished over REST');
    expect(events.all('state').at(-1)).toMatchObject({ to: 'finished', reason: 'socket down near the finish deadline: finished over REST' });
    expect(events.all('gap')).toEqual([{ from: 16_000, to: pcm.length, serverSample: 16_000, cause: 'undelivered', epoch: 1 }]);
    // The server saved what it received and knows what it did not (spec: capturedSamples above received).
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.receivedSamples).toBe(16_000n);
    expect(result.session.status).toBe('PARTIAL');
    expect(result.notices.map((n) => n.code)).toContain('TRANSPORT_GAP');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm.subarray(0, 16_000));
    expect(session.stats.gapSamples).toBe(pcm.length - 16_000);
  });

  it('an aborted finish() stops its REST calls: no retry of the REST finish after the abort', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 100 }, drainTimeoutMs: 100, restFinishReserveMs: 60_000 });
    const events = new EventCapture(session);
    await feed(session, speech(1, 46));
    dropUpgrades();
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    // The REST finish is answered 503 with Retry-After 1 s: the client would try again after a second.
    const path = `/stt/realtime/sessions/${session.sessionId}/finish`;
    server.faults.inject({ method: 'POST', path, times: 10, action: { kind: 'status', status: 503, retryAfterSec: 1 } });
    const finishCalls = (): number => server.requests.filter((r) => r.method === 'POST' && r.path.endsWith(path)).length;
    const controller = new AbortController();
    const finishing = session.finish({ signal: controller.signal, timeoutMs: 20_000 }).then(() => undefined, (e: unknown) => e);
    for (let i = 0; i < 100 && finishCalls() === 0; i++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(finishCalls()).toBe(1);
    controller.abort();
    const error = await finishing;
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_ABORTED');
    expect(session.state).toBe('closed');
    // Without the signal the transport would retry after the 1 s Retry-After, and again a second later.
    await new Promise((resolve) => setTimeout(resolve, 2200));
    expect(finishCalls()).toBe(1);
    const view = await client.stt.realtime.get(session.sessionId);
    expect(view.status).not.toBe('COMPLETED');
  });

  it('finishes over REST when the reconnect policy gives up while finishing', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: { nextRetryDelayMs: (c) => (c.attempt < 2 ? 100 : null) }, drainTimeoutMs: 30_000 });
    const events = new EventCapture(session);
    const pcm = speech(1, 47);
    await feed(session, pcm);
    await events.waitForMessage('audio.ack', (a) => a.receivedSamples === pcm.length);
    dropUpgrades();
    server.faults.socket.closeSocket(session.sessionId, 4000);
    await events.waitFor('reconnecting');
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.reason).toMatch(/^reconnect gave up \(.+\): finished over REST$/);
    expect(result.session.status).toBe('COMPLETED'); // everything had arrived
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(events.all('gap')).toEqual([]);
  });

  it('the REST view carries connection.recoveryExpired, and the client finishes over REST on seeing it (no refused socket)', async () => {
    const short = await startRealtimeServer({ realtimeTiming: { recoveryWindowMs: 200 } });
    try {
      const client = clientFor(short);
      const session = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: (c) => (c.attempt === 0 ? 600 : null) } });
      const events = new EventCapture(session);
      const pcm = speech(1, 49);
      await feed(session, pcm);
      await events.waitForMessage('audio.ack', (a) => a.receivedSamples === pcm.length);
      expect((await client.stt.realtime.get(session.sessionId)).connection).toEqual({ attached: true, recoveryDeadline: null, recoveryExpired: false });
      short.faults.socket.closeSocket(session.sessionId, 4000);
      await events.waitFor('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, 350));
      const view = await client.stt.realtime.get(session.sessionId);
      expect(view.connection).toMatchObject({ attached: false, recoveryExpired: true });
      const result = await session.finish({ timeoutMs: 20_000 });
      expect(result.reason).toBe('recovery window expired: finished over REST');
      expect(events.all('recovery.expired')).toEqual([{ finishedOverRest: true }]);
      expect(result.session.status).toBe('COMPLETED');
      expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
      // The GET said it: no socket was tried after the window (a refused one would be logged as connected).
      expect(short.sockets.log.filter((e) => e.sessionId === session.sessionId && e.kind === 'connected').length).toBe(1);
    } finally {
      await short.close();
    }
  });

  it('a token-only session (no REST) whose window passed says it could not save the result', async () => {
    const short = await startRealtimeServer({ realtimeTiming: { recoveryWindowMs: 200 } });
    try {
      const created = await clientFor(short).stt.realtime.create({});
      const page = new SoundClone({ accessKey: 'not-a-real-key', baseUrl: short.url });
      const session = await page.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token, reconnect: { nextRetryDelayMs: () => 500 } });
      const events = new EventCapture(session);
      await feed(session, speech(1, 51));
      short.faults.socket.closeSocket(session.sessionId, 4000);
      const error = await session.finish({ timeoutMs: 20_000 }).then(() => undefined, (e: unknown) => e);
      expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_RECOVERY_WINDOW_EXPIRED');
      expect(events.all('recovery.expired')).toEqual([{ finishedOverRest: false }]);
      expect(session.state).toBe('failed');
    } finally {
      await short.close();
    }
  });

  it('close() ends in `closed` (not `failed`): pending operations reject with REALTIME_CLOSED, the server keeps the session', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    await feed(session, speech(1, 53));
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const pausing = session.pause().then(() => undefined, (e: unknown) => e);
    session.close();
    const error = await pausing;
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_CLOSED');
    expect(session.state).toBe('closed');
    expect(events.all('state').at(-1)).toMatchObject({ to: 'closed', reason: 'closed by the client' });
    await expect(session.finish()).rejects.toMatchObject({ code: 'REALTIME_CLOSED' });
    expect(session.write(new Float32Array(160))).toBe(0);
    let view = await client.stt.realtime.get(session.sessionId);
    for (let i = 0; i < 50 && view.connection?.attached === true; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      view = await client.stt.realtime.get(session.sessionId);
    }
    expect(view.status).not.toBe('COMPLETED');
    expect(view.connection).toMatchObject({ attached: false, recoveryExpired: false });
  });
});
