import type { Socket } from 'node:net';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { start, type TestServer } from '../support/server.js';
import { connect, sleep, speech, type Peer } from './support.js';

/**
 * Hostile realtime clients against an in-process server: a non-reading client that floods pings, and
 * clients that flood malformed frames and reset. After each the server is alive, a healthy session
 * streams and is acknowledged, and the event loop never stalled (a generous bound that only a real
 * stall of the kind these clients used to cause, seconds long, can break; latency targets are in
 * bench/hostile).
 */
const tcp = (peer: Peer): Socket => (peer.ws as unknown as { _socket: Socket })._socket;
const STALL_MS = 1000;

async function until(condition: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** A well-behaved client: one second of speech, every sample acknowledged, then a normal close. */
async function healthySession(server: TestServer): Promise<void> {
  const { peer } = await connect(server);
  const pcm = speech(1);
  peer.stream(1, pcm);
  await peer.acked(pcm.length, 10_000);
  expect((await peer.close()).code).toBe(1005);
}

describe('realtime socket: hostile clients', () => {
  let server: TestServer | undefined;
  let loop: IntervalHistogram;
  beforeEach(() => {
    loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
  });
  afterEach(async () => {
    loop.disable();
    await server?.close();
    server = undefined;
  });

  it('closes a non-reading client that floods pings with 4429 once the pongs it made us queue pass the cap', async () => {
    const cap = 2 << 20;
    server = await start({ socket: { maxBufferedBytes: cap } });
    const { created, peer } = await connect(server);
    tcp(peer).pause();
    let flooding = true;
    let sent = 0;
    void (async () => {
      while (flooding && peer.ws.readyState === peer.ws.OPEN) {
        // As fast as the server takes them, without piling up megabytes in our own send buffer.
        if (peer.ws.bufferedAmount < 256 << 10) for (let i = 0; i < 200; i++) peer.json({ type: 'ping', id: sent++ });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const slow = (): { detail?: Record<string, unknown> } | undefined => server!.sockets.log.find((e) => e.sessionId === created.sessionId && e.kind === 'slow-consumer');
    await until(() => slow() !== undefined, 'slow-consumer close of the ping flooder', 60_000);
    flooding = false;
    // What was counted is what the pongs held: over the cap, by at most one message.
    const held = slow()!.detail!['bufferedAmount'] as number;
    expect(held).toBeGreaterThan(cap);
    expect(held).toBeLessThan(cap + 1024);
    // A client that reads again (within the documented grace) gets the close code, not 1006.
    tcp(peer).resume();
    expect(await peer.closed).toEqual({ code: 4429, reason: 'SLOW_CONSUMER' });
    expect(peer.all('pong').length).toBeGreaterThan(100);
    expect(sent).toBeGreaterThan(peer.all('pong').length);
    await healthySession(server);
    expect(loop.max / 1e6).toBeLessThan(STALL_MS);
  }, 90_000);

  it('cuts off a client that never reads its 4429 close frame after slowConsumerGraceMs, without a stall', async () => {
    // The default cap: hundreds of thousands of pongs. Dropping them must not fail them one by one.
    server = await start({ socket: { slowConsumerGraceMs: 200 } });
    const { created, peer } = await connect(server);
    tcp(peer).pause();
    let flooding = true;
    void (async () => {
      while (flooding && peer.ws.readyState === peer.ws.OPEN) {
        if (peer.ws.bufferedAmount < 256 << 10) for (let i = 0; i < 200; i++) peer.json({ type: 'ping', id: i });
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    await until(() => server!.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'slow-consumer'), 'slow-consumer close', 60_000);
    flooding = false;
    // The server side ends by itself although the client never reads: nothing stays pinned.
    await until(() => server!.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'closed'), 'server-side close after the grace', 10_000);
    expect(server.sockets.size).toBe(0);
    await healthySession(server);
    expect(loop.max / 1e6).toBeLessThan(STALL_MS);
  }, 90_000);

  it('survives clients that flood malformed frames and reset, while a healthy session streams', async () => {
    // The attackers share the test's key and leave 20 sessions in their recovery windows: raise the
    // per-account session limit (tested in account-limits.test.ts) so the attack reaches the socket.
    server = await start({ maxRealtimeSessionsPerAccount: 64 });
    const healthy = await connect(server);
    const pcm = speech(4);
    let at = 0;
    const paced = (async () => {
      // 20 ms frames at ~real time for the whole attack.
      while (at < pcm.length) {
        healthy.peer.frame(1, at, pcm.subarray(at, Math.min(pcm.length, at + 320)));
        at += 320;
        await sleep(20);
      }
    })();
    const bad = Buffer.alloc(16 + 640, 0x41); // wrong magic: BAD_FRAME each
    const attackers = Array.from({ length: 5 }, async () => {
      for (let round = 0; round < 4; round++) {
        const { peer } = await connect(server!);
        for (let i = 0; i < 300; i++) peer.ws.send(bad);
        await sleep(5);
        tcp(peer).resetAndDestroy();
        await peer.closed;
      }
    });
    await Promise.all(attackers);
    await paced;
    await healthy.peer.acked(pcm.length, 10_000);
    expect(healthy.peer.all('error')).toEqual([]);
    await until(() => server!.sockets.size === 1, 'reset sockets released');
    await healthySession(server);
    expect(loop.max / 1e6).toBeLessThan(STALL_MS);
  }, 90_000);
});
