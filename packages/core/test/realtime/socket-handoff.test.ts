import { afterEach, describe, expect, it } from 'vitest';
import { RealtimeSocketSession } from '../../src/realtime/realtime-session.js';
import { RealtimeError } from '../../src/errors/realtime-error.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { DefaultReconnectPolicy } from '../../src/realtime/recovery/reconnect-policy.js';
import { FakeSocket, ready, tick } from './fake-socket.js';

/**
 * The handoff across the server's socket recycling, with the orderings a real network can produce but
 * a loopback test rarely shows (the old socket's 4001 before the standby's session.ready). The
 * end-to-end runs against the reference server are test/realtime/recycle.test.ts.
 */
async function started() {
  const session = new RealtimeSocketSession({
    sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket', accessKey: 'k',
    WebSocket: FakeSocket, reconnect: new DefaultReconnectPolicy({ maxAttempts: 1, baseMs: 0, maxMs: 0 }), stableWindowMs: 60_000,
  });
  const states: string[] = [];
  const debug: string[] = [];
  const reconnecting: unknown[] = [];
  const reconnected: number[] = [];
  session.on('state', (c) => states.push(c.to));
  session.on('debug', (d) => debug.push(d.kind));
  session.on('reconnecting', (r) => reconnecting.push(r));
  session.on('reconnected', (r) => reconnected.push(r.attempt));
  const starting = session.start();
  await tick();
  FakeSocket.last.open();
  FakeSocket.last.receive(ready());
  await starting;
  return { session, states, debug, reconnecting, reconnected };
}

describe('socket handoff on socket.recycle (fake socket)', () => {
  afterEach(() => {
    FakeSocket.all = [];
  });

  it('opens a standby on the notice, keeps sending on the old socket, and hands over on the standby’s ready', async () => {
    const { session, states, reconnected } = await started();
    const old = FakeSocket.last;
    session.writePcm16(new Int16Array(640));
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    expect(FakeSocket.all).toHaveLength(2);
    const standby = FakeSocket.last;
    standby.open();
    session.writePcm16(new Int16Array(320)); // still on the old socket: the standby is not ready
    expect(old.frames().map((f) => f.start)).toEqual([0, 320, 640]);
    expect(standby.frames()).toEqual([]);
    standby.receive(ready({ receivedSamples: '320' }));
    expect(old.readyState).toBe(3); // let go by us
    expect(standby.frames().map((f) => f.start)).toEqual([320, 640]); // in flight on the old one: resent
    expect(states).toEqual(['connecting', 'streaming']);
    expect(reconnected).toEqual([0]);
    expect(session.health.lastReconnect).toMatchObject({ cause: 'recycled', durationMs: expect.any(Number) as unknown });
    old.receive({ type: 'audio.ack', epoch: 1, receivedSamples: '960' }); // from the old socket: dropped
    expect(session.stats.unackedSamples).toBe(640);
    session.close();
  });

  it('the old socket’s 4001 before the standby’s ready is the handoff, not REPLACED', async () => {
    const { session, states, reconnecting } = await started();
    const old = FakeSocket.last;
    session.writePcm16(new Int16Array(320));
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    const standby = FakeSocket.last;
    standby.open();
    old.drop(4001);
    expect(session.state).toBe('streaming');
    session.writePcm16(new Int16Array(320)); // waits for the standby's ready
    expect(standby.frames()).toEqual([]);
    standby.receive(ready({ receivedSamples: '0' }));
    expect(standby.frames().map((f) => f.start)).toEqual([0, 320]);
    expect(states).toEqual(['connecting', 'streaming']);
    expect(reconnecting).toEqual([]);
    session.close();
  });

  it('a standby that cannot connect is forgotten; the 4002 at the limit reconnects at once outside the budget', async () => {
    const { session, states, debug, reconnecting, reconnected } = await started();
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    FakeSocket.last.drop(1006);
    expect(debug).toContain('standby-lost');
    expect(session.state).toBe('streaming');
    old.drop(4002);
    expect(reconnecting).toEqual([expect.objectContaining({ attempt: 0, delayMs: 0, recycled: true, closeCode: 4002, reason: 'recycled' })]);
    await tick();
    await tick();
    FakeSocket.last.open();
    FakeSocket.last.receive(ready());
    expect(states).toEqual(['connecting', 'streaming', 'reconnecting', 'streaming']);
    expect(reconnected).toEqual([0]);
    // maxAttempts 1 is still whole: a real loss now gets its retry.
    FakeSocket.last.drop(1006);
    expect(reconnecting.at(-1)).toMatchObject({ attempt: 1 });
    session.close();
  });

  it('without a standby, 4001 is still a takeover by another socket (REPLACED)', async () => {
    const { session } = await started();
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    FakeSocket.last.drop(1006); // the standby failed
    old.drop(4001);
    expect(session.state).toBe('failed');
    const error: unknown = await session.finish().then(() => undefined, (caught: unknown) => caught);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SESSION_REPLACED');
  });

  it('any other loss of the current socket drops the standby and is recovered as usual', async () => {
    const { session, reconnecting } = await started();
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    const standby = FakeSocket.last;
    old.drop(1006);
    expect(standby.readyState).toBe(3);
    expect(standby.listenerCount('message')).toBe(0);
    expect(reconnecting).toEqual([expect.objectContaining({ attempt: 1, closeCode: 1006 })]);
    session.close();
  });

  it('asks the credentials provider before the standby opens (a socket token may have expired)', async () => {
    let asked = 0;
    const session = new RealtimeSocketSession({
      sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket', token: 'rtt_first',
      WebSocket: FakeSocket, credentials: async () => ({ token: `rtt_fresh${++asked}` }),
    });
    const starting = session.start();
    await tick();
    FakeSocket.last.open();
    FakeSocket.last.receive(ready());
    await starting;
    expect(FakeSocket.last.url).toContain('token=rtt_first');
    FakeSocket.last.receive({ type: 'socket.recycle', closeInMs: 250 });
    FakeSocket.last.receive({ type: 'socket.recycle', closeInMs: 200 }); // repeated: still one standby
    await tick();
    expect(FakeSocket.all).toHaveLength(2);
    expect(FakeSocket.last.url).toContain('token=rtt_fresh');
    session.close();
  });

  it('teardown closes a standby still connecting', async () => {
    const { session } = await started();
    FakeSocket.last.receive({ type: 'socket.recycle', closeInMs: 250 });
    const standby = FakeSocket.last;
    session.close();
    expect(standby.readyState).toBe(3);
    expect(standby.listenerCount('message')).toBe(0);
  });

  it('a standby that answers an error before its refusing close is not promoted: the current socket carries on', async () => {
    const { session, debug } = await started();
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    const standby = FakeSocket.last;
    standby.open();
    standby.receive({ type: 'error', errorCode: 'SESSION_NOT_FOUND', message: 'unknown session', fatal: true });
    standby.drop(4404);
    expect(old.readyState).toBe(1); // still ours
    expect(session.state).toBe('streaming');
    session.writePcm16(new Int16Array(320));
    expect(old.frames().map((f) => f.start)).toEqual([0]);
    expect(debug).toContain('standby-message');
    session.close();
  });

  it('a standby not ready within the notice’s time is dropped by us; the session stays on the current socket', async () => {
    const { session, debug } = await started();
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 1000 });
    const standby = FakeSocket.last;
    standby.open(); // connected, but never says session.ready
    await new Promise((resolve) => setTimeout(resolve, 1100));
    expect(standby.readyState).toBe(3);
    expect(debug).toContain('standby-late');
    expect(session.state).toBe('streaming');
    session.writePcm16(new Int16Array(320));
    expect(old.frames().map((f) => f.start)).toEqual([0]);
    session.close();
  });

  it('no standby when the socket that got the notice was replaced while the credentials provider ran', async () => {
    let release: (() => void) | undefined;
    const session = new RealtimeSocketSession({
      sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket', accessKey: 'k', WebSocket: FakeSocket,
      reconnect: new DefaultReconnectPolicy({ maxAttempts: 3, baseMs: 0, maxMs: 0 }), stableWindowMs: 60_000,
      credentials: () => new Promise((resolve) => (release = () => resolve({ apiKey: 'k2' }))),
    });
    const starting = session.start();
    await tick();
    FakeSocket.last.open();
    FakeSocket.last.receive(ready());
    await starting;
    const old = FakeSocket.last;
    old.receive({ type: 'socket.recycle', closeInMs: 250 });
    const slow = release!;
    old.drop(1006); // lost while the provider is asked for the standby's credentials
    await tick();
    release!(); // the reconnect's own provider call
    await tick();
    await tick();
    const replacement = FakeSocket.last;
    replacement.open();
    replacement.receive(ready());
    const sockets = FakeSocket.all.length;
    slow(); // the standby's provider call answers now: the socket it was for is gone
    await tick();
    await tick();
    expect(FakeSocket.all.length).toBe(sockets);
    expect(session.state).toBe('streaming');
    session.close();
  });
});
