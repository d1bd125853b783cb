import { describe, expect, it } from 'vitest';
import { AudioOutbox } from '../../src/realtime/audio/outbox.js';
import { FramePump } from '../../src/realtime/audio/frame-pump.js';
import { SocketTransport } from '../../src/realtime/socket/transport.js';
import { FakeSocket } from './fake-socket.js';

const ignore = { onOpen: () => {}, onText: () => {}, onClose: () => {}, onError: () => {} };

/** A pump on a real outbox, its sockets scripted, its clock in the test's hands. */
function setup(drainTimeoutMs = 100) {
  let now = 1_000;
  const outbox = new AudioOutbox({ sampleRate: 16_000, channels: 1, bufferMs: 5_000 });
  const pump = new FramePump(outbox, { maxInFlightSamples: 32_000, drainTimeoutMs }, () => now);
  let id = 0;
  const socket = (): { ws: FakeSocket; t: SocketTransport } => {
    const ws = new FakeSocket('ws://127.0.0.1:1/s');
    ws.open();
    return { ws, t: new SocketTransport(++id, ws, ignore) };
  };
  return { outbox, pump, socket, advance: (ms: number) => void (now += ms) };
}

describe('FramePump: told the socket, state and epoch; returns what went out', () => {
  it('reports the first frame once; plain frames give the one shared empty result', () => {
    const { outbox, pump, socket } = setup();
    const { ws, t } = socket();
    outbox.writePcm16(new Int16Array(640));
    const first = pump.pump({ socket: t, state: 'streaming', epoch: 3 });
    expect(first).toEqual({ firstFrame: { startSample: 0, epoch: 3 } });
    expect(ws.frames()).toEqual([{ epoch: 3, start: 0, count: 320 }, { epoch: 3, start: 320, count: 320 }]);
    outbox.writePcm16(new Int16Array(320));
    const plain = pump.pump({ socket: t, state: 'streaming', epoch: 3 });
    expect(plain).toEqual({});
    expect(pump.pump({ socket: t, state: 'streaming', epoch: 3 })).toBe(plain);
    expect(ws.frames()).toHaveLength(3);
  });

  it('sends nothing without a ready socket, in a state that does not send, or once halted', () => {
    const { outbox, pump, socket } = setup();
    const { ws, t } = socket();
    outbox.writePcm16(new Int16Array(320));
    expect(pump.pump({ socket: undefined, state: 'streaming', epoch: 1 })).toEqual({});
    for (const state of ['connecting', 'reconnecting', 'rotating', 'paused'] as const) pump.pump({ socket: t, state, epoch: 1 });
    pump.halt();
    pump.pump({ socket: t, state: 'streaming', epoch: 1 });
    expect(pump.resume(t, 1)).toBe(false);
    expect(ws.sent).toEqual([]);
  });

  it('a drain says when to pump again; the control message goes at the deadline unacknowledged, once per socket', () => {
    const { outbox, pump, socket, advance } = setup(100);
    const first = socket();
    outbox.writePcm16(new Int16Array(320));
    pump.pump({ socket: first.t, state: 'streaming', epoch: 1 });
    expect(pump.startDrain()).toBe(101);
    expect(pump.pump({ socket: first.t, state: 'finishing', epoch: 1 })).toEqual({}); // not acknowledged, deadline ahead
    advance(101);
    expect(pump.pump({ socket: first.t, state: 'finishing', epoch: 1 })).toEqual({ control: 'session.finish' });
    expect(pump.pump({ socket: first.t, state: 'finishing', epoch: 1 })).toEqual({});
    expect(first.ws.json()).toEqual([{ type: 'session.finish', capturedSamples: '320' }]);
    expect(pump.sent.finishSentOn(first.t.id)).toBe(true);
    // A new socket owes the finish again, after a fresh wait; acknowledged, it goes at once.
    const second = socket();
    expect(pump.newSocket(true)).toBe(101);
    expect(pump.newSocket(false)).toBeUndefined();
    outbox.acknowledge(320);
    expect(pump.pump({ socket: second.t, state: 'finishing', epoch: 1 })).toEqual({ control: 'session.finish' });
    expect(second.ws.json()).toEqual([{ type: 'session.finish', capturedSamples: '320' }]);
  });

  it('tells how long until the drain deadline, so a pump woken early by its timer knows to wait the rest', () => {
    const { outbox, pump, socket, advance } = setup(100);
    const { t } = socket();
    outbox.writePcm16(new Int16Array(320));
    pump.pump({ socket: t, state: 'streaming', epoch: 1 });
    expect(pump.drainLeftMs()).toBe(0); // no drain yet
    pump.startDrain();
    advance(60); // the timer ran 40 ms early by this clock
    expect(pump.pump({ socket: t, state: 'finishing', epoch: 1 })).toEqual({});
    expect(pump.drainLeftMs()).toBe(40);
    advance(41);
    expect(pump.drainLeftMs()).toBe(0);
    expect(pump.pump({ socket: t, state: 'finishing', epoch: 1 })).toEqual({ control: 'session.finish' });
  });

  it('a pause waits for a rotation in progress: nothing goes while a resume is unanswered on the socket', () => {
    const { outbox, pump, socket } = setup(100);
    const { ws, t } = socket();
    outbox.writePcm16(new Int16Array(320));
    expect(pump.resume(t, 1)).toBe(true);
    expect(pump.resume(t, 1)).toBe(false); // once per socket
    pump.startDrain();
    expect(pump.pump({ socket: t, state: 'pausing', epoch: 1 })).toEqual({});
    pump.resumeAnswered();
    const result = pump.pump({ socket: t, state: 'pausing', epoch: 2 });
    expect(result.firstFrame).toEqual({ startSample: 0, epoch: 2 });
    expect(ws.json()).toEqual([{ type: 'session.resume', epoch: 1 }]);
  });

  it('finishing past the drain wait, every frame still owed goes out past the in-flight window, the finish after them; pausing keeps the window', () => {
    for (const state of ['finishing', 'pausing'] as const) {
      const { outbox, pump, socket, advance } = setup(100);
      const { ws, t } = socket();
      outbox.writePcm16(new Int16Array(80_000)); // 5 s: 2.5 windows, nothing acknowledged
      pump.pump({ socket: t, state: 'streaming', epoch: 1 });
      expect(outbox.inFlight).toBe(32_000);
      pump.startDrain();
      pump.pump({ socket: t, state, epoch: 1 });
      const sentSamples = (): number => ws.frames().reduce((n, f) => n + f.count, 0);
      expect(sentSamples()).toBe(32_000); // before the deadline the window paces, finishing too
      expect(ws.json()).toEqual([]);
      advance(101);
      pump.pump({ socket: t, state, epoch: 1 });
      expect(sentSamples()).toBe(state === 'finishing' ? 80_000 : 32_000);
      expect(ws.json()).toEqual([{ type: state === 'finishing' ? 'session.finish' : 'session.pause', capturedSamples: '80000' }]);
      // On the wire, the control message follows the last frame.
      expect(typeof ws.sent.at(-1)).toBe('string');
    }
  });
});
