import { getEventListeners } from 'node:events';
import { DefaultReconnectPolicy, type RealtimeSocketSession } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { clientFor, speech, startRealtimeServer, storedAudio } from './support.js';

const RATE = 16_000;
const BLOCK = 320;
const MINUTES = 6;
const CUT_EVERY = 30 * RATE;
/** The writer keeps at most this much audio in the session's ring (as a capture would at 1×: bounded). */
const MAX_BUFFERED = 8 * RATE;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** What a leak per reconnect would make grow: counted, not timed. */
interface Counts {
  readonly sessionListeners: number;
  readonly abortListeners: number;
  readonly processListeners: number;
  /** Node's live handles by kind in this process (client, proxy and server share it). */
  readonly handles: Readonly<Record<string, number>>;
  readonly serverSockets: number;
  readonly serverSessionListeners: number;
  readonly attachedSockets: number;
}

function counts(session: RealtimeSocketSession, signal: AbortSignal, server: RunningServer): Counts {
  const handles: Record<string, number> = {};
  for (const kind of process.getActiveResourcesInfo()) handles[kind] = (handles[kind] ?? 0) + 1;
  const served = server.services.realtime.byId(session.sessionId);
  return {
    sessionListeners: session.eventNames().reduce((n, name) => n + session.listenerCount(name), 0),
    abortListeners: getEventListeners(signal, 'abort').length,
    processListeners: process.eventNames().reduce((n, name) => n + process.listenerCount(name), 0),
    handles,
    serverSockets: server.sockets.size,
    serverSessionListeners: served?.audio.listenerCount ?? -1,
    attachedSockets: served?.attachedSockets ?? -1,
  };
}

/**
 * The hour-long session of the bench (bench/src/lab/long-session/), shortened to six minutes of audio
 * streamed as fast as the session takes it: a network cut every 30 s of audio through a ChaosProxy and a
 * server rotation every minute. Every sample arrives once and in place, each cut is one reconnect, and
 * nothing the session, the socket or the server keeps per connection grows from one reconnect to the
 * next. Memory and timing targets are the bench's; here only what can be counted.
 */
describe('realtime session: a long session through cuts and rotations', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  beforeAll(async () => {
    server = await startRealtimeServer({ realtimeTiming: { rotateEverySamples: 60 * RATE } });
    proxy = await new ChaosProxy(server.port).listen();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('six minutes, a cut every 30 s and a rotation every minute: exact audio, one reconnect per cut, no growth per reconnect', async () => {
    const total = MINUTES * 60 * RATE;
    const pcm = speech(300, 11).subarray(0, total);
    expect(pcm.length).toBe(total);
    const controller = new AbortController();
    const session = await clientFor(server).stt.realtime.connect({
      signal: controller.signal,
      socketUrl: `ws://127.0.0.1:${String(proxy.port)}/sound_clone/api/v1/stt/realtime/socket`,
      // Audio runs many times faster than real time: short backoff and stable window, so the cuts
      // (every 30 s of audio, well under a second of wall time) stay routine reconnects.
      stableWindowMs: 100,
      reconnect: new DefaultReconnectPolicy({ baseMs: 5, maxMs: 100 }),
    });
    let reconnecting = 0;
    let reconnected = 0;
    let rotations = 0;
    let highWater = 0;
    const onReconnecting = (): void => void (reconnecting += 1);
    const onReconnected = (): void => void (reconnected += 1);
    const onRotated = (): void => void (rotations += 1);
    session.on('reconnecting', onReconnecting);
    session.on('reconnected', onReconnected);
    session.on('rotated', onRotated);

    const streaming = async (): Promise<void> => {
      for (let waited = 0; session.state !== 'streaming'; waited += 2) {
        if (waited > 10_000) throw new Error(`the session is ${session.state} after 10 s`);
        await sleep(2);
      }
    };
    // Counts taken with a socket up and streaming, just before each cut and once more before finish().
    const taken: Counts[] = [];
    let cuts = 0;
    for (let at = 0; at < total; at += BLOCK) {
      if ((at + CUT_EVERY / 2) % CUT_EVERY === 0) {
        await streaming();
        taken.push(counts(session, controller.signal, server));
        expect(proxy.cut()).toBeGreaterThanOrEqual(1);
        cuts += 1;
      }
      expect(session.writePcm16(pcm.subarray(at, at + BLOCK))).toBe(BLOCK);
      const buffered = session.stats.bufferedSamples;
      if (buffered > highWater) highWater = buffered;
      if (buffered >= MAX_BUFFERED) {
        for (let waited = 0; session.stats.bufferedSamples >= MAX_BUFFERED / 2; waited += 2) {
          if (waited > 10_000) throw new Error(`the ring did not drain in 10 s (${session.state}, ${JSON.stringify(session.stats)})`);
          await sleep(2);
        }
      }
    }
    await streaming();
    taken.push(counts(session, controller.signal, server));

    const result = await session.finish({ timeoutMs: 30_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(session.state).toBe('finished');
    expect(result.session.usage.receivedSamples).toBe(BigInt(total));
    expect(session.gaps).toEqual([]);
    const stored = await storedAudio(server, session.sessionId);
    expect(stored.length).toBe(total);
    expect(Buffer.compare(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(0);

    // One reconnect per cut: no extra attempt, none missed.
    expect(cuts).toBe(2 * MINUTES);
    expect(reconnecting).toBe(cuts);
    expect(reconnected).toBe(cuts);
    expect(session.health.reconnects).toBe(cuts);
    expect(rotations).toBeGreaterThanOrEqual(MINUTES - 1);
    // Every line once, across every reconnect and rotation: the client holds exactly the server's lines.
    const serverLines = server.services.realtime.byId(session.sessionId)?.audio.lines ?? [];
    expect(serverLines.length).toBeGreaterThan(100);
    expect(session.lines.map((l) => l.id)).toEqual(serverLines.map((l) => l.id));
    // The ring holds what the writer allowed and no more, and is empty once everything was acknowledged.
    expect(highWater).toBeLessThanOrEqual(MAX_BUFFERED);
    expect(session.stats.overflowSamples).toBe(0);
    expect(session.stats.bufferedSamples).toBe(0);

    // Nothing grows per reconnect: after 2 reconnects and after all 12, the same listeners on the session,
    // its abort signal and the process; the same handles of each kind (a leaked timer or socket per
    // reconnect would add 10); one socket and one subscriber on the server's session.
    const early = taken[2];
    const late = taken.at(-1);
    if (early === undefined || late === undefined) throw new Error('counts were not taken');
    expect(taken).toHaveLength(cuts + 1);
    expect(late.sessionListeners).toBe(early.sessionListeners);
    expect(late.abortListeners).toBe(early.abortListeners);
    expect(late.processListeners).toBe(early.processListeners);
    for (const kind of new Set([...Object.keys(early.handles), ...Object.keys(late.handles)])) {
      expect(late.handles[kind] ?? 0, kind).toBeLessThanOrEqual((early.handles[kind] ?? 0) + 2);
    }
    for (const c of taken) {
      expect(c.serverSockets).toBe(1);
      expect(c.serverSessionListeners).toBe(1);
      expect(c.attachedSockets).toBe(1);
    }

    session.off('reconnecting', onReconnecting);
    session.off('reconnected', onReconnected);
    session.off('rotated', onRotated);
    expect(session.eventNames()).toEqual([]);
    expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
  }, 90_000);
});
