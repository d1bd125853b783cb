import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, speech, startRealtimeServer } from './support.js';

/** Node's own count of live handles and requests by kind (timers, TCP sockets, …), both sides of the socket. */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

function processListeners(): number {
  return process.eventNames().reduce((n, name) => n + process.listenerCount(name), 0);
}

/** A full collection without --expose-gc: the flag is honoured by functions created after it is set. */
function collector(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const settle = (ms = 30): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Opening, streaming into and finishing 1,000 sessions one after another leaves
 * memory, sockets, timers and listeners flat on both sides. Client and reference server share this
 * process, so Node's resource counts cover both; the server's open sockets are also counted by itself.
 * The server acknowledges every 5 ms (instead of 50) so that each finish's drain is short: 1,000
 * sessions in well under a minute on a loaded 2-core machine.
 */
describe('realtime session: leaks', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer({ retainRealtimeAudioSamples: 0, socket: { ackIntervalMs: 5 } });
  });
  afterAll(() => server.close());

  it('1,000 sessions in a row: memory, sockets, timers and listeners stay flat on both sides', async () => {
    const gc = collector();
    const client = clientFor(server);
    const pcm = speech(1, 31).subarray(0, 8000);
    const finished: Array<WeakRef<object>> = [];
    const run = async (): Promise<void> => {
      const controller = new AbortController();
      const session = await client.stt.realtime.connect({ signal: controller.signal });
      finished.push(new WeakRef(session));
      const states: string[] = [];
      const onState = (c: { to: string }): void => void states.push(c.to);
      session.on('state', onState);
      session.writePcm16(pcm);
      const result = await session.finish();
      expect(result.session.status).toBe('COMPLETED');
      expect(result.session.usage.receivedSamples).toBe(8000n);
      expect(states.at(-1)).toBe('finished');
      session.off('state', onState);
      expect(session.eventNames()).toEqual([]);
      expect(getEventListeners(controller.signal, 'abort')).toEqual([]);
    };
    const snapshot = async (): Promise<{ resources: Map<string, number>; heap: number; listeners: number }> => {
      await settle();
      gc();
      gc();
      const { heapUsed, external } = process.memoryUsage();
      return { resources: resources(), heap: heapUsed + external, listeners: processListeners() };
    };

    for (let i = 0; i < 100; i++) await run(); // warm-up: JIT, pools, the server's first allocations
    const before = await snapshot();
    const started = Date.now();
    for (let i = 0; i < 900; i++) await run();
    const elapsedMs = Date.now() - started;
    const after = await snapshot();

    expect(server.sockets.size).toBe(0);
    // No kind of handle grows with the number of sessions: a leaked socket or timer per session would add 900.
    expect(before.resources.get('TCPServerWrap')).toBeGreaterThanOrEqual(1); // the count sees the server
    for (const kind of new Set([...before.resources.keys(), ...after.resources.keys()])) {
      expect(after.resources.get(kind) ?? 0, kind).toBeLessThanOrEqual((before.resources.get(kind) ?? 0) + 2);
    }
    expect(after.listeners).toBe(before.listeners);
    // Nothing holds a finished session (no timer, socket callback, signal or client-side registry):
    // every one of them, ring included, was collected.
    expect(finished.filter((ref) => ref.deref() !== undefined).length).toBeLessThanOrEqual(1);
    // Memory: the server keeps every finished session and its History task (a store, by design), a few
    // KB each. A leaked client session would keep its 60 s ring (1.9 MB); a leaked socket tens of KB.
    const perSessionBytes = (after.heap - before.heap) / 900;
    expect(perSessionBytes).toBeLessThan(16 * 1024);
    if (process.env['LEAK_LOG'] !== undefined) process.stderr.write(`leak: 900 sessions in ${elapsedMs} ms; ${perSessionBytes.toFixed(0)} B/session retained; ${JSON.stringify([...after.resources])}\n`);
  }, 150_000);
});

