import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, encodeFrame, open, socketUrl, speech } from './support.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

const SESSIONS = 1000;

function resources(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of process.getActiveResourcesInfo()) counts[r] = (counts[r] ?? 0) + 1;
  return counts;
}

async function settle(): Promise<number> {
  for (let i = 0; i < 3; i++) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    gc();
  }
  return process.memoryUsage().heapUsed;
}

/**
 * Style guide "Leak tests": open, stream into and finish 1,000 sessions one after another; memory,
 * sockets, timers and listeners stay flat. The only state a finished session keeps is its History
 * entry and view (a few kB), which bounds the heap growth per session checked below.
 */
describe('realtime socket: 1,000 sessions one after another', () => {
  it('leaves sockets, timers and listeners flat and heap growth bounded', async () => {
    // A short ack interval so the trailing ack of each session comes quickly (the default 50 ms would
    // make this test 50 s long without changing what it measures).
    const server: TestServer = await start({ socket: { heartbeatIntervalMs: 1000, ackIntervalMs: 2 } });
    const ids: string[] = [];
    try {
      const signal = speech(1).subarray(0, 8000); // 0.5 s with a word in it: one line per session
      const frames: Buffer[] = [];
      for (let at = 0; at < signal.length; at += 320) frames.push(encodeFrame(1, at, signal.subarray(at, at + 320)));
      const runOne = async (): Promise<void> => {
        const created = await createSession(server, {}, KEY_A);
        ids.push(created.sessionId);
        const peer = await open(socketUrl(server, { token: created.socket.token }));
        await peer.waitFor('session.ready');
        for (const frame of frames) peer.ws.send(frame);
        await peer.acked(signal.length);
        peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
        const finished = await peer.waitFor('session.finished');
        if (finished.session.status !== 'COMPLETED') throw new Error(`unexpected ${finished.session.status}`);
        await peer.closed;
      };
      for (let i = 0; i < 50; i++) await runOne(); // warm-up: JIT, pools, lazily created state
      const heapBefore = await settle();
      const before = resources();
      for (let i = 0; i < SESSIONS; i++) await runOne();
      const heapAfter = await settle();
      const after = resources();
      expect(server.sockets.size).toBe(0);
      expect(after['Timeout'] ?? 0).toBeLessThanOrEqual((before['Timeout'] ?? 0) + 2);
      expect(after['TCPSocketWrap'] ?? 0).toBeLessThanOrEqual((before['TCPSocketWrap'] ?? 0) + 4);
      expect(ids.filter((id) => (server.services.realtime.byId(id)?.audio.listenerCount ?? -1) !== 0)).toEqual([]);
      const perSessionBytes = (heapAfter - heapBefore) / SESSIONS;
      if (process.env['LEAK_REPORT'] !== undefined) process.stdout.write(`heap growth per session: ${Math.round(perSessionBytes)} bytes; resources before ${JSON.stringify(before)} after ${JSON.stringify(after)}\n`);
      // A finished session keeps its History task, lines and view: a few kB. A leaked socket,
      // recogniser or timer chain per session would be far above this.
      expect(perSessionBytes).toBeLessThan(16 * 1024);
    } finally {
      await server.close();
    }
  }, 60_000);
});
