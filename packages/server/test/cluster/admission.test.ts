import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import type { RunningServer } from '../../src/index.js';
import { postgresForFile } from '../support/postgres.js';
import { freePort, HttpRoundRobin } from '../support/round-robin.js';
import { idem, KEY_A, PREFIX, start, type TestServer } from '../support/server.js';
import { speech } from '../realtime/support.js';

/**
 * Node admission across nodes (docs/protocol.md "Node admission", "Several nodes"): a full node
 * refuses a new realtime session with the retryable 503 NODE_FULL, and the SDK's create retry, with its
 * one Idempotency-Key, makes the session on another node through the balancer: one session, one task,
 * one charge.
 */
describe('a full node among several', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const isCreate = (path: string): boolean => path === `${PREFIX}/stt/realtime/sessions`;
  const pcm = speech(2).subarray(0, 16_000);

  it('a retry of a create that B made, reaching full A, replays B\'s session (forwarded), not NODE_FULL', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const ports = [await freePort(), await freePort()];
    // B first, then A: the SDK's first try reaches B, its retry A.
    const balancer = await new HttpRoundRobin([ports[1] as number, ports[0] as number]).listen();
    stops.push(() => balancer.close());
    const nodes: TestServer[] = [];
    for (const port of ports) {
      const node = await start({ port, databaseUrl, publicUrl: balancer.url, maxRealtimeSessionsPerNode: 1 });
      stops.push(() => node.close());
      nodes.push(node);
    }
    const [a, b] = nodes as [TestServer, TestServer];
    // A is full.
    expect((await a.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);
    // B makes the session but its answer is lost: the SDK retries with the same key, on A.
    b.faults.inject({ method: 'POST', path: '/stt/realtime/sessions', times: 1, action: { kind: 'dropAfterProcessing' } });
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: balancer.url, retryDelay: { baseMs: 10, maxMs: 50 } });
    const created = await client.stt.realtime.create({ title: 'Kept' });
    expect(created.replayed).toBe(true);
    expect(b.services.realtime.byId(created.sessionId)).toBeDefined();
    expect(a.services.realtime.byId(created.sessionId)).toBeUndefined();
    const onA = a.requests.filter((r) => isCreate(r.path) && r.idempotencyKey === created.idempotencyKey);
    expect(onA.map((r) => r.status)).toEqual([200]);
    expect(await pgsql.query(databaseUrl, `SELECT count(*)::int AS n FROM task WHERE kind = 'realtime' AND title = 'Kept'`, [])).toEqual([{ n: 1 }]);
  });

  it('3 nodes behind haproxy, one full: the SDK\'s connect lands every session on another node, each charged once', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const cluster = await LocalCluster.start({ nodes: 3, accessKeys: [KEY_A], databaseUrl, inProcess: { recognizer: 'deterministic', maxRealtimeSessionsPerNode: 2 } });
    stops.push(() => cluster.stop());
    const servers = cluster.nodes.map((n) => n.server) as RunningServer[];
    const full = servers[0] as RunningServer;
    // Fill the first node through its own address (not the balancer).
    for (let i = 0; i < 2; i++) {
      const made = await fetch(`${full.url}${PREFIX}/stt/realtime/sessions`, { method: 'POST', headers: { accessKey: KEY_A, 'Idempotency-Key': idem(), 'Content-Type': 'application/json' }, body: '{"title":"filler"}' });
      expect(made.status).toBe(200);
    }
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: cluster.url });
    const sessionIds: string[] = [];
    // Round robin over three nodes: among any three consecutive requests one reaches the full node.
    for (let i = 0; i < 3; i++) {
      const session = await client.stt.realtime.connect({ title: `live ${i}` });
      for (let at = 0; at < pcm.length; at += 320) session.writePcm16(pcm.subarray(at, at + 320));
      const result = await session.finish();
      expect(result.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: 16_000n } });
      sessionIds.push(session.sessionId);
      const owners = servers.filter((s) => s.services.realtime.byId(session.sessionId) !== undefined);
      expect(owners).toHaveLength(1);
      expect(owners[0]).not.toBe(full);
    }
    const refused = full.requests.filter((r) => isCreate(r.path) && r.status === 503);
    expect(refused.length).toBeGreaterThan(0);
    // Each refused key made its session elsewhere, once.
    for (const { idempotencyKey } of refused) {
      const elsewhere = servers.filter((s) => s !== full).flatMap((s) => s.requests.filter((r) => isCreate(r.path) && r.idempotencyKey === idempotencyKey && r.status === 200));
      expect(elsewhere).toHaveLength(1);
    }
    const tasks = await pgsql.query<{ title: string; status: string; settled: number }>(databaseUrl, `SELECT title, status, settled::int AS settled FROM task WHERE kind = 'realtime' ORDER BY seq`, []);
    expect(tasks.map((t) => [t.title, t.status, t.settled])).toEqual([
      ['filler', 'PROCESSING', 0], ['filler', 'PROCESSING', 0], ['live 0', 'COMPLETED', 10], ['live 1', 'COMPLETED', 10], ['live 2', 'COMPLETED', 10],
    ]);
    expect(await pgsql.query(databaseUrl, `SELECT count(*)::int AS n FROM ledger_entry WHERE kind = 'settle'`, [])).toEqual([{ n: 3 }]);
    expect(await pgsql.query(databaseUrl, 'SELECT reserved::int AS reserved FROM account', [])).toEqual([{ reserved: 0 }]);
    expect(new Set(sessionIds).size).toBe(3);
  });
});
