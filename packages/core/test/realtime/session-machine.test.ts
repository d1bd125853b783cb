import { afterEach, describe, expect, it } from 'vitest';
import { RealtimeSocketSession } from '../../src/realtime/realtime-session.js';
import type { StateChange } from '../../src/realtime/session-state.js';
import { RealtimeError } from '../../src/errors/realtime-error.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { FakeSocket, ready, tick } from './fake-socket.js';

function make(extra: Partial<ConstructorParameters<typeof RealtimeSocketSession>[0]> = {}): { session: RealtimeSocketSession; changes: StateChange[]; debug: string[] } {
  const session = new RealtimeSocketSession({
    sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket', accessKey: 'k', token: 'rtt_t',
    WebSocket: FakeSocket, reconnect: { nextRetryDelayMs: () => 0 }, ...extra,
  });
  const changes: StateChange[] = [];
  const debug: string[] = [];
  session.on('state', (c) => changes.push(c));
  session.on('debug', (d) => debug.push(d.kind));
  return { session, changes, debug };
}

async function started(extra: Parameters<typeof make>[0] = {}) {
  const made = make(extra);
  const starting = made.session.start();
  await tick();
  FakeSocket.last.open();
  FakeSocket.last.receive(ready());
  await starting;
  return made;
}

describe('RealtimeSocketSession state machine (fake socket)', () => {
  afterEach(() => {
    FakeSocket.all = [];
  });

  it('authenticates with the header where it can, else with the token in the query', async () => {
    const { session } = await started();
    expect(FakeSocket.last.url).toBe('ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket?sessionId=rs_1');
    expect(FakeSocket.last.headers).toEqual({ accessKey: 'k' });
    session.close();
    FakeSocket.all = [];
    const browser = new RealtimeSocketSession({ sessionId: 'rs_2', socketUrl: 'ws://h/s', token: 'rtt_x', WebSocket: FakeSocket });
    void browser.start().catch(() => {});
    await tick();
    expect(FakeSocket.last.url).toBe('ws://h/s?sessionId=rs_2&token=rtt_x');
    expect(FakeSocket.last.headers).toBeUndefined();
    browser.close();
  });

  it('ignores garbage and unknown messages with a debug event, and answers pings', async () => {
    const { session, debug } = await started();
    FakeSocket.last.receive('{not json');
    FakeSocket.last.receive('[1,2]');
    FakeSocket.last.receive({ type: 'transcript.hologram', x: 1 });
    FakeSocket.last.receive({ type: 'audio.ack', epoch: 1, receivedSamples: 'twelve' });
    FakeSocket.last.receive({ type: 'ping', id: 7 });
    expect(debug).toEqual(['invalid-message', 'invalid-message', 'unknown-message', 'invalid-message']);
    expect(FakeSocket.last.json()).toEqual([{ type: 'pong', id: 7 }]);
    expect(session.state).toBe('streaming');
    session.close();
  });

  it('reconnects after a drop, drops what the old socket still says, and resends from the cursor', async () => {
    const { session, changes } = await started();
    session.writePcm16(new Int16Array(960));
    const first = FakeSocket.last;
    expect(first.frames()).toEqual([{ epoch: 1, start: 0, count: 320 }, { epoch: 1, start: 320, count: 320 }, { epoch: 1, start: 640, count: 320 }]);
    first.drop(1006);
    expect(session.state).toBe('reconnecting');
    await tick();
    await tick();
    const second = FakeSocket.last;
    expect(second).not.toBe(first);
    expect(first.listenerCount('message')).toBe(0); // the old transport removed its listeners
    second.open();
    second.receive(ready({ receivedSamples: '320' }));
    expect(second.frames()).toEqual([{ epoch: 1, start: 320, count: 320 }, { epoch: 1, start: 640, count: 320 }]);
    expect(changes.map((c) => c.to)).toEqual(['connecting', 'streaming', 'reconnecting', 'streaming']);
    expect(changes[2]?.reason).toBe('socket closed 1006');
    session.close();
  });

  it('rotates: rewinds to the ack, sends session.resume once, continues in the new epoch; stale partials are dropped', async () => {
    const { session, changes } = await started();
    const partials: string[] = [];
    session.on('partial', (p) => partials.push(p.text));
    const rotated: unknown[] = [];
    session.on('rotated', (r) => rotated.push(r));
    const socket = FakeSocket.last;
    session.writePcm16(new Int16Array(640));
    socket.receive({ type: 'audio.ack', epoch: 1, receivedSamples: '320' });
    socket.receive({ type: 'usage.updated', rotate: true, epoch: 1, usage: {} });
    expect(session.state).toBe('rotating');
    session.writePcm16(new Int16Array(320));
    socket.receive({ type: 'error', code: 'NOT_ACCEPTING', message: 'rotated', fatal: false });
    expect(socket.json().filter((m) => m['type'] === 'session.resume')).toEqual([{ type: 'session.resume', epoch: 1 }]);
    socket.receive({ type: 'session.resumed', epoch: 2, receivedSamples: '320' });
    expect(session.state).toBe('streaming');
    expect(socket.frames().slice(2)).toEqual([{ epoch: 2, start: 320, count: 320 }, { epoch: 2, start: 640, count: 320 }]);
    expect(rotated).toEqual([{ fromEpoch: 1, toEpoch: 2, atSample: 320 }]);
    socket.receive({ type: 'transcript.partial', epoch: 1, text: 'old' });
    socket.receive({ type: 'transcript.partial', epoch: 2, text: 'new' });
    expect(partials).toEqual(['new']);
    expect(changes.map((c) => c.to)).toEqual(['connecting', 'streaming', 'rotating', 'streaming']);
    session.close();
  });

  it('never reconnects after a final close code, and fails pending operations with a typed error', async () => {
    const { session } = await started();
    const finishing = session.finish({ timeoutMs: 5000 });
    FakeSocket.last.drop(4404);
    const error = await finishing.then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SESSION_NOT_FOUND');
    expect(session.state).toBe('failed');
    expect(FakeSocket.all.length).toBe(1);
  });

  it('gives up when the policy says so', async () => {
    const { session, changes } = await started({ reconnect: { nextRetryDelayMs: () => null } });
    FakeSocket.last.drop(1006);
    expect(session.state).toBe('failed');
    expect(changes.at(-1)?.reason).toBe('reconnect gave up: socket closed 1006');
  });

  it('pauses twice on one socket (the second pause is sent too), and a rotation after the pause went out sends no resume', async () => {
    const { session } = await started({ drainTimeoutMs: 0 });
    const socket = FakeSocket.last;
    const pauses = (): number => socket.json().filter((m) => m['type'] === 'session.pause').length;
    for (let round = 1; round <= 2; round++) {
      session.writePcm16(new Int16Array(400));
      const pausing = session.pause();
      await tick();
      await tick();
      expect(pauses()).toBe(round);
      const end = String(400 * round);
      expect(socket.json().filter((m) => m['type'] === 'session.pause').at(-1)).toEqual({ type: 'session.pause', capturedSamples: end });
      if (round === 2) {
        // A rotation announced after the pause left: the server pauses first; a resume would undo it.
        socket.receive({ type: 'usage.updated', rotate: true, epoch: session.epoch, usage: {} });
        expect(socket.json().filter((m) => m['type'] === 'session.resume')).toHaveLength(1);
      }
      socket.receive({ type: 'session.paused', epoch: session.epoch, receivedSamples: end, capturedSamples: end });
      await pausing;
      expect(session.state).toBe('paused');
      const resuming = session.resume();
      await tick();
      socket.receive({ type: 'session.resumed', epoch: session.epoch + 1, receivedSamples: end });
      await resuming;
    }
    expect(session.epoch).toBe(3);
    session.close();
  });

  it('a rotation after a declared gap rewinds to the server’s acknowledged cursor, not to the captured one', async () => {
    const { session } = await started({ bufferMs: 100 });
    const capacity = session.stats.capacitySamples;
    const first = FakeSocket.last;
    session.writePcm16(new Int16Array(640));
    first.receive({ type: 'audio.ack', epoch: 1, receivedSamples: '640' });
    first.drop(1006);
    // While the socket is down, more than the ring holds: the oldest 3200 unacknowledged samples go.
    for (let at = 0; at < capacity + 3200; at += 320) session.writePcm16(new Int16Array(Math.min(320, capacity + 3200 - at)));
    await tick();
    await tick();
    const second = FakeSocket.last;
    second.open();
    second.receive(ready({ receivedSamples: '640' }));
    expect(session.gaps).toEqual([[640, 3840]]); // captured 3840 onwards goes out as the server's 640 onwards
    second.receive({ type: 'audio.ack', epoch: 1, receivedSamples: '1600' });
    expect(session.stats.ackedSamples).toBe(4800);
    second.receive({ type: 'usage.updated', rotate: true, epoch: 1, usage: {} });
    expect(session.state).toBe('rotating');
    // Rewound to the ack: the server's 1600 is captured 4800 (the captured 4800 taken as a server
    // position would skip another 3200 samples).
    expect(session.stats.sentSamples).toBe(4800);
    expect(session.stats.queuedSamples).toBe(640 + capacity + 3200 - 4800);
    second.receive({ type: 'session.resumed', epoch: 2, receivedSamples: '1600' });
    expect(second.frames().filter((f) => f.epoch === 2)[0]).toEqual({ epoch: 2, start: 1600, count: 320 });
    session.close();
  });
});
