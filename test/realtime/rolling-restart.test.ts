import { LocalCluster } from '@soundclone/server';
import type { RealtimeSocketSession, SoundClone } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, KEY, speech, storedAudio } from './support.js';

const RATE = 16_000;
const SESSIONS = 20;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A rolling restart under load: three node processes on one PostgreSQL and one Redis behind haproxy
 * (LocalCluster), 20 SDK sessions streaming through the balancer, and each node in turn stopped with
 * SIGTERM (it drains: /health 503, then every live session handed over with socket.recycle) and started
 * again before the next. The applications see no error, no gap, no failure; the stored audio of every
 * session is its input sample for sample; each finishes once and is charged once.
 */
// Needs redis-server and haproxy (npm run setup installs them).
describe('realtime sessions: a rolling SIGTERM restart of every node', () => {
  let cluster: LocalCluster;
  let client: SoundClone;
  beforeAll(async () => {
    cluster = await LocalCluster.start({
      nodes: 3,
      accessKeys: [KEY],
      redis: true,
      nodeArgs: ['--recognizer', 'deterministic', '--retain-audio', '120', '--max-sessions-per-account', '50'],
    });
    client = clientFor({ url: cluster.url });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  it('20 sessions stream while the 3 nodes restart one after another: 0 errors, 0 samples lost, each finished and charged once', async () => {
    let restarting = true;
    const runs = await Promise.all(
      Array.from({ length: SESSIONS }, async (_, i) => {
        const pcm = speech(40, i + 1);
        const session = await client.stt.realtime.connect({});
        const seen = { errors: [] as unknown[], gaps: [] as unknown[], states: [] as string[], reconnecting: [] as Array<{ recycled?: boolean | undefined; reason: string }>, causes: [] as string[] };
        // What an application sees of trouble: a typed error on a reconnect, the session failing or its
        // recovery window passing, a refused write (below), a finish that rejects.
        session.on('reconnecting', (info) => info.error !== undefined && seen.errors.push(info.error));
        session.on('recovery.expired', (info) => seen.errors.push(info));
        session.on('gap', (gap) => seen.gaps.push(gap));
        session.on('state', (change) => seen.states.push(change.to));
        session.on('reconnecting', (info) => seen.reconnecting.push(info));
        session.on('health', (h) => {
          if (h.kind === 'reconnected') seen.causes.push(h.lastReconnect?.cause ?? '');
        });
        return { session, pcm, seen, written: 0 };
      }),
    );
    // Every session writes like a capture loop (20 ms blocks, at twice real time) until the restart is
    // over, then a second more; what it wrote is its input.
    const writers = runs.map(async (run) => {
      let until = Number.POSITIVE_INFINITY;
      for (let at = 0; at < run.pcm.length && at < until; at += 320) {
        if (!restarting && until === Number.POSITIVE_INFINITY) until = at + RATE;
        if (run.session.writePcm16(run.pcm.subarray(at, at + 320)) === 0) run.seen.errors.push(`refused at ${at} in state ${run.session.state}`);
        run.written = at + 320;
        await sleep(10);
      }
    });
    await sleep(1000);
    for (let index = 0; index < 3; index++) {
      await cluster.stopNode(index);
      await cluster.restartNode(index);
      // The balancer's check (every 500 ms) takes it back in before the next node goes.
      await sleep(1000);
    }
    restarting = false;
    await Promise.all(writers);

    const results = await Promise.all(runs.map((run) => run.session.finish({ timeoutMs: 60_000 })));
    for (const [i, run] of runs.entries()) {
      const result = results[i] as Awaited<ReturnType<RealtimeSocketSession['finish']>>;
      const input = run.pcm.subarray(0, run.written);
      expect(run.written).toBeLessThan(run.pcm.length);
      expect(run.seen.errors).toEqual([]);
      expect(run.seen.gaps).toEqual([]);
      expect(run.seen.states).not.toContain('failed');
      // A drain recycles the sockets of the sessions it owns, and the owners of sessions whose sockets
      // pass through it (tunnels) recycle those: the SDK follows at once, outside its reconnect budget.
      // A tunnelled socket whose owner did not recycle it within the drain's grace (a loaded machine) is
      // cut instead: that must stay one immediate first attempt on a 1006, never a retry chain.
      for (const r of run.seen.reconnecting.filter((x) => x.recycled !== true)) expect(r).toMatchObject({ attempt: 1, flapping: false, closeCode: 1006 });
      expect(run.seen.causes.filter((c) => c !== 'recycled' && c !== 'socket closed 1006')).toEqual([]);
      expect(result.session.status).toBe('COMPLETED');
      expect(result.session.usage.receivedSamples).toBe(BigInt(input.length));
      const stored = await storedAudio({ url: cluster.url } as never, run.session.sessionId);
      expect(stored.length).toBe(input.length);
      expect(Buffer.compare(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength), Buffer.from(input.buffer, input.byteOffset, input.byteLength))).toBe(0);
      const ids = result.session.lines.map((l) => l.id);
      expect(new Set(ids).size).toBe(ids.length);
      const charged = String(Math.ceil(input.length / RATE) * 10);
      expect(String((await client.stt.transcriptions.get(result.session.transcriptionId)).billing.settledCharacters)).toBe(charged);
      const again = await client.stt.realtime.finish(run.session.sessionId, String(input.length));
      expect(again.status).toBe('COMPLETED');
      expect(String((await client.stt.transcriptions.get(result.session.transcriptionId)).billing.settledCharacters)).toBe(charged);
    }
    // Every session was on a node that restarted, so each moved at least once.
    expect(runs.every((run) => run.seen.causes.length > 0)).toBe(true);
    // And the drain is what moved them: recycles, with at most a stray cut tunnel among them.
    const causes = runs.flatMap((run) => run.seen.causes);
    expect(causes.filter((c) => c === 'recycled').length).toBeGreaterThan(causes.length * 0.75);
  }, 180_000);
});
