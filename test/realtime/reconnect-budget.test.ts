import { DefaultReconnectPolicy, RealtimeSocketSession, RealtimeError, isSoundCloneError, type SessionHealth } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, KEY, PREFIX, clientFor, feed, speech, startRealtimeServer } from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The reconnect policy over hours, against the reference server with a TCP proxy that cuts the socket:
 * a flapping link backs off and earns its budget back once stable; an expired socket token is replaced
 * from the credentials provider; a server-requested rotation never counts as a loss.
 */
describe('realtime session: reconnect budget, flapping, credentials', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  let socketUrl: string;
  /** The server's clock runs this far ahead: a socket token expires when it passes 10 minutes. */
  let shiftMs = 0;
  beforeAll(async () => {
    server = await startRealtimeServer({ clock: { now: () => Date.now() + shiftMs }, realtimeTiming: { rotateEverySamples: 16_000 } });
    proxy = await new ChaosProxy(server.port).listen();
    socketUrl = `ws://127.0.0.1:${proxy.port}${PREFIX}/stt/realtime/socket`;
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('a link that drops soon after every reconnect backs off further each time, says flapping, and recovers its budget once stable', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const session = new RealtimeSocketSession({
      sessionId: created.sessionId, accessKey: KEY, socketUrl, stableWindowMs: 1500,
      // random 0: outside flapping the delay is 0; while flapping it is half the ceiling, so the spacing is exact.
      reconnect: new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1600, random: () => 0 }),
    });
    const events = new EventCapture(session, ['reconnecting', 'reconnected', 'health']);
    const health: SessionHealth[] = [];
    session.on('health', (h) => health.push(h));
    await session.start();
    const spacing: number[] = [];
    for (let cut = 1; cut <= 5; cut++) {
      await sleep(200);
      const at = Date.now();
      proxy.cut();
      await events.waitFor('reconnected', (r) => r.attempt === cut);
      spacing.push(Date.now() - at);
    }
    const reconnecting = events.events.filter((e) => e.name === 'reconnecting').map((e) => e.payload as { attempt: number; delayMs: number; flapping?: boolean });
    expect(reconnecting.map((r) => r.attempt)).toEqual([1, 2, 3, 4, 5]);
    expect(reconnecting.map((r) => r.delayMs)).toEqual([0, 100, 200, 400, 800]);
    expect(reconnecting.map((r) => r.flapping)).toEqual([false, true, true, true, true]);
    // Spacing actually grows on the wire, not only in the reported delays: each waits at least its delay.
    reconnecting.forEach((r, i) => expect(spacing[i]).toBeGreaterThanOrEqual(r.delayMs));
    expect((spacing[4] as number) - (spacing[1] as number)).toBeGreaterThanOrEqual(600);
    expect(health.filter((h) => h.kind === 'connection' && h.state === 'flapping')).toHaveLength(4);
    // Stable for the window: healthy again, and the next loss starts a fresh budget.
    await events.waitFor('health', (h) => h.state === 'healthy' && /stable/.test(h.reason), 5000);
    proxy.cut();
    const fresh = await events.waitFor('reconnecting', (r) => r.attempt === 1 && reconnecting.length > 0);
    expect(fresh).toMatchObject({ attempt: 1, delayMs: 0, flapping: false });
    await events.waitFor('reconnected', (r) => r.attempt === 1 && events.events.filter((e) => e.name === 'reconnected').length === 6);
    await session.finish({ timeoutMs: 20_000 });
  }, 30_000);

  it('a socket token that expired is refreshed from the provider; without a provider it stays REALTIME_SOCKET_REFUSED', async () => {
    const client = clientFor(server);
    const created = await client.stt.realtime.create({});
    const stale = created.socket.token;
    const issued: string[] = [];
    // The page's backend: socketToken() (POST .../socket-token) with its key. The first answer is the page's old token, to see a refused one refreshed.
    const credentials = async (): Promise<{ token: string }> => {
      if (issued.length === 0) return issued.push(stale), { token: stale };
      const fresh = await client.stt.realtime.socketToken(created.sessionId);
      expect(Date.parse(fresh.expiresAt)).toBeGreaterThan(Date.now() + shiftMs);
      issued.push(fresh.token);
      return { token: fresh.token };
    };
    const session = new RealtimeSocketSession({ sessionId: created.sessionId, token: stale, socketUrl, credentials, reconnect: new DefaultReconnectPolicy({ baseMs: 50, maxMs: 200 }) });
    const events = new EventCapture(session, ['reconnecting', 'reconnected']);
    await session.start();
    const pcm = speech(3);
    await feed(session, pcm, 0, pcm.length / 2);
    shiftMs += 11 * 60_000; // the token's 10 minutes are over
    proxy.cut();
    await events.waitFor('reconnected');
    await feed(session, pcm, pcm.length / 2);
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(issued).toHaveLength(2); // the stale token (refused with 401), then a fresh one that connected
    expect(issued[1]).not.toBe(stale);
    const reasons = events.events.filter((e) => e.name === 'reconnecting').map((e) => (e.payload as { reason: string }).reason);
    expect(reasons.some((r) => /credentials refused/.test(r))).toBe(true);
    // The re-issue endpoint answers only for the owner's own sessions.
    const unknown = await fetch(`${server.url}${PREFIX}/stt/realtime/sessions/rs_unknown/socket-token`, { method: 'POST', headers: { accessKey: KEY } });
    expect(unknown.status).toBe(404);

    // No provider: the expired token ends the session with the typed refusal, as it always did.
    const other = await client.stt.realtime.create({});
    const plain = new RealtimeSocketSession({ sessionId: other.sessionId, token: other.socket.token, socketUrl, reconnect: new DefaultReconnectPolicy({ baseMs: 50, maxMs: 200 }) });
    await plain.start();
    shiftMs += 11 * 60_000;
    const ended = new Promise<void>((resolve) => plain.on('state', (c) => c.to === 'failed' && resolve()));
    proxy.cut();
    await ended;
    const error = await plain.finish().then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
  }, 30_000);

  it('server-requested rotations consume no reconnect budget', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const session = new RealtimeSocketSession({ sessionId: created.sessionId, accessKey: KEY, socketUrl, stableWindowMs: 60_000, reconnect: new DefaultReconnectPolicy({ baseMs: 100, maxMs: 1600, random: () => 0.999 }) });
    const events = new EventCapture(session, ['reconnecting', 'rotated', 'health']);
    await session.start();
    const pcm = speech(4);
    await feed(session, pcm);
    await events.waitFor('rotated', () => events.events.filter((e) => e.name === 'rotated').length >= 2);
    expect(events.events.filter((e) => e.name === 'reconnecting')).toHaveLength(0);
    // The first loss after rotations is the first attempt of a fresh budget, not a flapping one.
    proxy.cut();
    expect(await events.waitFor('reconnecting')).toMatchObject({ attempt: 1, delayMs: 99, flapping: false });
    expect(events.events.some((e) => e.name === 'health' && (e.payload as SessionHealth).state === 'flapping')).toBe(false);
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
  }, 30_000);
});
