import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import type { ServerOptions } from '../../src/index.js';
import { postgresForFile } from '../support/postgres.js';
import { redisForFile } from '../support/redis.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, open, socketUrl, speech, storedAudio } from '../realtime/support.js';

/**
 * Sessions of a node that is gone, which no client asks about again, with the live state in Redis:
 * another node's dead-node sweep adopts each (the lease decides which node), its recovery window runs
 * there and the abandoned rule ends it PARTIAL, charged once. A session whose live state Redis lost is
 * failed, nothing charged. Nodes run in this process on one PostgreSQL and one Redis; a node goes by
 * close() (its row leaves the registry, its leases are let go): a node killed outright stops beating and
 * its leases lapse, which the same sweep finds (test/realtime/node-death.test.ts kills node processes).
 */
describe('a gone node\'s sessions nobody asks about again', () => {
  const pgsql = postgresForFile();
  const redis = redisForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const node = async (databaseUrl: string, options: Partial<ServerOptions> = {}): Promise<TestServer> => {
    const server = await start({
      databaseUrl,
      redisUrl: redis.url,
      retainRealtimeAudioSamples: 60 * 16_000,
      maxRealtimeSessionsPerAccount: 50,
      nodeTiming: { heartbeatMs: 200, staleAfterMs: 1000, sweepEveryMs: 100 },
      ...options,
      realtimeTiming: { supplementWaitMs: 100, recoveryWindowMs: 300, abandonAfterMs: 200, ...options.realtimeTiming },
    });
    let closed = false;
    stops.push(async () => {
      if (!closed) await server.close();
    });
    const close = server.close;
    return Object.assign(server, {
      close: async () => {
        closed = true;
        await close();
      },
    });
  };
  const ledger = async (databaseUrl: string) =>
    (await pgsql.query<{ reserved: string; used: string }>(databaseUrl, 'SELECT sum(reserved)::text AS reserved, sum(monthly_used + order_used)::text AS used FROM account', []))[0];
  const settles = async (databaseUrl: string) =>
    (await pgsql.query<{ task_id: string; n: number }>(databaseUrl, `SELECT task_id, count(*)::int AS n FROM ledger_entry WHERE kind = 'settle' GROUP BY task_id`, [])).map((r) => r.n);

  it('another node adopts each session (one node each), which ends PARTIAL once its recovery window and abandonAfterMs pass there, charged once for what was received', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    // A keeps its sessions for an hour (its own sweep would not end them in this test); B and C end
    // an adopted session 0.5 s after adopting it.
    const a = await node(databaseUrl, { realtimeTiming: { recoveryWindowMs: 3_600_000 } });
    const b = await node(databaseUrl);
    const c = await node(databaseUrl);
    const before = await ledger(databaseUrl);
    const made: Array<{ sessionId: string; transcriptionId: string; pcm: Int16Array }> = [];
    for (let i = 0; i < 6; i++) {
      const created = await createSession(a);
      const pcm = speech(2, i + 1).subarray(0, 16_000 + 1600 * i);
      const peer = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
      await peer.waitFor('session.ready');
      peer.stream(1, pcm);
      await peer.acked(pcm.length);
      peer.ws.terminate();
      await peer.closed;
      made.push({ ...created, pcm });
    }
    await a.close();
    for (const { sessionId } of made) {
      await expect.poll(async () => (await b.call('GET', `/stt/realtime/sessions/${sessionId}`)).body.data.status, { timeout: 15_000, interval: 100 }).toBe('PARTIAL');
    }
    let used = BigInt(before?.used ?? '0');
    for (const { sessionId, transcriptionId, pcm } of made) {
      // Exactly one of the live nodes adopted it; what it stored is what A acknowledged.
      const holders = [b, c].filter((n) => n.services.realtime.byId(sessionId) !== undefined);
      expect(holders.length).toBe(1);
      const holder = holders[0] as TestServer;
      expect(Buffer.from((await storedAudio(holder, sessionId)).buffer).equals(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(true);
      const view = (await c.call('GET', `/stt/realtime/sessions/${sessionId}`)).body.data;
      expect(view).toMatchObject({ status: 'PARTIAL', usage: { receivedSamples: String(pcm.length) } });
      expect(view.notices.map((n: { code: string }) => n.code)).toContain('SESSION_ABANDONED');
      const task = (await b.call('GET', `/stt/transcriptions/${transcriptionId}`)).body.data;
      expect(task).toMatchObject({ status: 'PARTIAL', billing: { state: 'SETTLED' } });
      expect(task.error).toBeUndefined();
      used += BigInt(task.billing.settledCharacters);
    }
    // The sweeps went on meanwhile: nothing charged twice, nothing held, nothing left open.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    expect(await settles(databaseUrl)).toEqual(made.map(() => 1));
    expect(await ledger(databaseUrl)).toEqual({ reserved: '0', used: String(used) });
    expect(used).toBeGreaterThan(BigInt(before?.used ?? '0'));
    expect(await pgsql.query(databaseUrl, 'SELECT count(*)::int AS n FROM realtime_session WHERE open', [])).toEqual([{ n: 0 }]);
  });

  it('a session whose live state Redis lost is failed by the sweep, nothing charged; its neighbour with live state is adopted', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const a = await node(databaseUrl, { realtimeTiming: { recoveryWindowMs: 3_600_000 } });
    const b = await node(databaseUrl, { liveTiming: { lostAfterMs: 0 } });
    const before = await ledger(databaseUrl);
    const lost = await createSession(a);
    const kept = await createSession(a);
    for (const created of [lost, kept]) {
      const peer = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
      await peer.waitFor('session.ready');
      const pcm = speech(1, 7);
      peer.stream(1, pcm);
      await peer.acked(pcm.length);
      peer.ws.terminate();
      await peer.closed;
    }
    // Redis lost one session's live state (a restart without it, a failover that missed it): A loses
    // that session at its next renewal; then A goes.
    const client = new Redis(redis.url);
    try {
      await client.del(...(await client.keys(`sc:rs:{${lost.sessionId}}:*`)));
    } finally {
      client.disconnect();
    }
    await a.close();
    await expect.poll(async () => (await b.call('GET', `/stt/transcriptions/${lost.transcriptionId}`)).body.data.status, { timeout: 10_000, interval: 100 }).toBe('FAILED');
    const failed = (await b.call('GET', `/stt/transcriptions/${lost.transcriptionId}`)).body.data;
    expect(failed).toMatchObject({ error: { message: expect.stringContaining('live state of this realtime session was lost') }, billing: { state: 'RELEASED', settledCharacters: '0' } });
    await expect.poll(async () => (await b.call('GET', `/stt/transcriptions/${kept.transcriptionId}`)).body.data.status, { timeout: 10_000, interval: 100 }).toBe('PARTIAL');
    const partial = (await b.call('GET', `/stt/transcriptions/${kept.transcriptionId}`)).body.data;
    expect(await ledger(databaseUrl)).toEqual({ reserved: '0', used: String(BigInt(before?.used ?? '0') + BigInt(partial.billing.settledCharacters)) });
  });
});
