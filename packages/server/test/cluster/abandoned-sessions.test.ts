import { afterEach, describe, expect, it } from 'vitest';
import { postgresForFile } from '../support/postgres.js';
import { freePort, RoundRobin } from '../support/round-robin.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, open, socketUrl, speech, type Peer } from '../realtime/support.js';
import type { ServerOptions } from '../../src/index.js';
import type { Session } from '../../src/realtime/session/sessions.js';
import { realtimeTranscript } from '../../src/realtime/session/view.js';
import type { RealtimeSettlement } from '../../src/store/store.js';

/**
 * Abandoned sessions end on nodes sharing one PostgreSQL database (docs/protocol.md "Abandoned
 * sessions", "Several nodes"): every node sweeps (its own abandoned sessions, and the dead nodes'
 * sessions), and a session is settled once, by the node that holds it, PARTIAL, for what it received.
 */
describe('abandoned realtime sessions on two nodes over PostgreSQL', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const twoNodes = async (options: Partial<ServerOptions> = {}) => {
    const databaseUrl = await pgsql.freshDatabase();
    const ports = [await freePort(), await freePort()];
    const balancer = await new RoundRobin(ports).listen();
    stops.push(() => balancer.close());
    const nodes: TestServer[] = [];
    for (const port of ports) {
      const node = await start({ port, databaseUrl, publicUrl: balancer.url, maxRealtimeSessionsPerAccount: 50, ...options, realtimeTiming: { supplementWaitMs: 100, ...options.realtimeTiming } });
      stops.push(() => node.close());
      nodes.push(node);
    }
    return { databaseUrl, a: nodes[0] as TestServer, b: nodes[1] as TestServer };
  };

  const attach = async (node: TestServer, sessionId: string): Promise<Peer> => {
    const peer = await open(socketUrl(node, { sessionId }), { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    return peer;
  };
  const streamAndCut = async (peer: Peer, samples: number, seed: number): Promise<void> => {
    peer.stream(1, speech(4, seed), 0, samples);
    await peer.acked(samples);
    peer.ws.terminate();
    await peer.closed;
  };
  const ledger = async (databaseUrl: string) =>
    (await pgsql.query<{ reserved: string; used: string }>(databaseUrl, 'SELECT sum(reserved)::text AS reserved, sum(monthly_used + order_used)::text AS used FROM account', []))[0];
  const statuses = async (databaseUrl: string) =>
    (await pgsql.query<{ status: string; n: number }>(databaseUrl, `SELECT status, count(*)::int AS n FROM task WHERE kind = 'realtime' GROUP BY status ORDER BY status`, [])).map((r) => `${r.status}:${r.n}`);

  it('sessions left on either node (sockets through the other node too) end PARTIAL on their own node, charged once; none is failed as an orphan', async () => {
    const { databaseUrl, a, b } = await twoNodes({ realtimeTiming: { recoveryWindowMs: 150, abandonAfterMs: 100 } });
    const before = await ledger(databaseUrl);
    const made: Array<{ sessionId: string; transcriptionId: string; owner: TestServer }> = [];
    for (let i = 0; i < 6; i++) {
      const owner = i % 2 === 0 ? a : b;
      const created = await createSession(owner);
      made.push({ ...created, owner });
      // Half the sockets reach the node that does not hold the session (forwarded to its owner).
      const via = i % 3 === 0 ? (owner === a ? b : a) : owner;
      // 1.25 s each: two started seconds, 20 Characters.
      await streamAndCut(await attach(via, created.sessionId), 20_000, i + 1);
    }
    for (const { sessionId, owner } of made) {
      await expect.poll(async () => (await owner.call('GET', `/stt/realtime/sessions/${sessionId}`)).body.data.status, { timeout: 10_000, interval: 50 }).toBe('PARTIAL');
    }
    expect(await statuses(databaseUrl)).toEqual(['PARTIAL:6']);
    for (const { sessionId, transcriptionId, owner } of made) {
      const other = owner === a ? b : a;
      // Read through either node: the same end, the abandon notice, the charge of what was received.
      for (const node of [owner, other]) {
        const view = (await node.call('GET', `/stt/realtime/sessions/${sessionId}`)).body.data;
        expect(view).toMatchObject({ status: 'PARTIAL', usage: { receivedSamples: '20000', billableCharacters: '20' } });
        expect(view.notices.map((n: { code: string }) => n.code)).toContain('SESSION_ABANDONED');
      }
      const task = (await other.call('GET', `/stt/transcriptions/${transcriptionId}`)).body.data;
      expect(task).toMatchObject({ status: 'PARTIAL', audioDurationMs: '1250', billing: { state: 'SETTLED', settledCharacters: '20' } });
      expect(task.error).toBeUndefined();
    }
    // Both nodes' sweepers kept running meanwhile; nothing was charged twice, nothing is held.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await ledger(databaseUrl)).toEqual({ reserved: '0', used: String(BigInt(before?.used ?? '0') + 120n) });
    expect(await pgsql.query(databaseUrl, 'SELECT count(*)::int AS n FROM realtime_session WHERE open', [])).toEqual([{ n: 0 }]);
  });

  it('a finish through the other node, the owner\'s sweep and a second node settling the same task at once: one settlement, one charge', async () => {
    let offset = 0;
    const clock = { now: () => Date.now() + offset };
    const { databaseUrl, a, b } = await twoNodes({ clock, realtimeTiming: { recoveryWindowMs: 50, abandonAfterMs: 3_600_000 } });
    const before = await ledger(databaseUrl);
    const created = await createSession(a);
    await streamAndCut(await attach(a, created.sessionId), 24_000, 3);
    await expect.poll(async () => (await a.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data.connection.recoveryExpired, { timeout: 5000, interval: 20 }).toBe(true);
    const session = a.services.realtime.byId(created.sessionId);
    expect(session).toBeDefined();
    offset += 3_600_000;
    // All in one turn: a REST finish that reaches B (forwarded to A), A's sweep, and B settling the
    // task in the store as a node that held the session too would (today only one node holds a live
    // session; the store's once-only settle is what keeps two from both charging).
    const finishing = b.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '24000' } });
    expect(a.services.realtime.endAbandoned()).toEqual([created.sessionId]);
    const settlement = (): RealtimeSettlement => ({ status: 'PARTIAL', durationMs: 1500n, transcript: realtimeTranscript(session as Session), detectedLanguage: null, now: clock.now() });
    const second = b.services.store.settleRealtime(created.transcriptionId, settlement());
    await session?.finishing;
    const [answered] = await Promise.all([finishing, second]);
    expect(answered.status).toBe(200);
    expect(answered.body.data).toMatchObject({ status: 'PARTIAL', usage: { billableCharacters: '20' } });
    // Whichever of the two store writes came first, the task is settled once, and stays so.
    const task = (await b.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'PARTIAL', billing: { state: 'SETTLED', settledCharacters: '20' } });
    for (const node of [a, b]) expect(await node.services.store.settleRealtime(created.transcriptionId, settlement())).toBe('already');
    expect(await ledger(databaseUrl)).toEqual({ reserved: '0', used: String(BigInt(before?.used ?? '0') + 20n) });
    expect(await pgsql.query(databaseUrl, `SELECT kind, count(*)::int AS n FROM ledger_entry WHERE task_id = $1 AND kind IN ('settle', 'release') GROUP BY kind`, [created.transcriptionId])).toEqual([{ kind: 'settle', n: 1 }]);
  });
  it('a database that cannot be reached when the session is ended: the settlement is tried again until it answers, then settled once', async () => {
    const { databaseUrl, a } = await twoNodes({ realtimeTiming: { recoveryWindowMs: 100, abandonAfterMs: 1000 } });
    const before = await ledger(databaseUrl);
    const created = await createSession(a);
    await streamAndCut(await attach(a, created.sessionId), 24_000, 5);
    await expect.poll(async () => (await a.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data.connection.recoveryExpired, { timeout: 5000, interval: 20 }).toBe(true);
    // The database stops (a fast shutdown: connections cut) before the service ends the session.
    await pgsql.server.halt();
    try {
      const session = a.services.realtime.byId(created.sessionId);
      await expect.poll(() => session?.finishing !== undefined, { timeout: 5000, interval: 20 }).toBe(true);
      // Its settlement was tried and failed at least once (the sweep ran past abandonAfterMs).
      await new Promise((resolve) => setTimeout(resolve, 600));
      expect(session?.task.status).toBe('PROCESSING');
    } finally {
      await pgsql.server.resume();
    }
    await expect.poll(async () => (await a.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data.status, { timeout: 15_000, interval: 100 }).toBe('PARTIAL');
    const task = (await a.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'PARTIAL', billing: { state: 'SETTLED', settledCharacters: '20' } });
    expect(await ledger(databaseUrl)).toEqual({ reserved: '0', used: String(BigInt(before?.used ?? '0') + 20n) });
    expect(await pgsql.query(databaseUrl, `SELECT kind, count(*)::int AS n FROM ledger_entry WHERE task_id = $1 AND kind IN ('settle', 'release') GROUP BY kind`, [created.transcriptionId])).toEqual([{ kind: 'settle', n: 1 }]);
  });
});
