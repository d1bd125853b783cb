import { afterEach, describe, expect, it } from 'vitest';
import { postgresForFile } from '../support/postgres.js';
import { RoundRobin } from '../support/round-robin.js';
import { idem, PREFIX, start, type TestServer } from '../support/server.js';
import { open } from '../realtime/support.js';

/**
 * A realtime create's Idempotency-Key on several nodes sharing one PostgreSQL database
 * (docs/protocol.md "Several nodes"): the key is kept in the store with the session, so a retry that
 * reaches another node replays the session its owner holds (the create is forwarded there), and two
 * nodes racing one key make one session.
 */
describe('realtime session creation keys across nodes', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  /** Two nodes on a fresh database, behind one public address (a round-robin balancer) as in production. */
  const twoNodes = async () => {
    const databaseUrl = await pgsql.freshDatabase();
    // Each node listens on a port of its own choosing; the balancer learns it once the node is up (a
    // port picked before the node binds it can be taken meanwhile by another process).
    const ports: number[] = [];
    const balancer = await new RoundRobin(ports).listen();
    stops.push(() => balancer.close());
    const nodes: Array<TestServer & { stop: () => Promise<void> }> = [];
    for (let i = 0; i < 2; i++) {
      const node = await start({ databaseUrl, publicUrl: balancer.url });
      ports.push(node.port);
      let stopped = false;
      const stop = async (): Promise<void> => {
        if (!stopped) await node.close();
        stopped = true;
      };
      stops.push(stop);
      nodes.push(Object.assign(node, { stop }));
    }
    return { databaseUrl, a: nodes[0] as TestServer & { stop: () => Promise<void> }, b: nodes[1] as TestServer & { stop: () => Promise<void> } };
  };
  const create = (node: TestServer, key: string, json: Record<string, unknown> = { title: 'Live' }) =>
    node.call('POST', '/stt/realtime/sessions', { json, headers: { 'Idempotency-Key': key } });
  const realtimeTasks = async (node: TestServer) => ((await node.call('GET', '/stt/transcriptions?pageSize=100')).body.data.items as Array<{ modelId: string }>).filter((t) => t.modelId === 'svc_stt_realtime_v1');

  it('a retry on B of a create made on A replays A\'s session (forwarded to A); another body is 409 on either node', async () => {
    const { databaseUrl, a, b } = await twoNodes();
    const key = idem();
    const first = await create(a, key);
    expect(first.status).toBe(200);
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const id = first.body.data.sessionId as string;

    const again = await create(b, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toMatchObject({ sessionId: id, transcriptionId: first.body.data.transcriptionId, status: first.body.data.status, socket: { url: first.body.data.socket.url } });
    // A fresh token, good on either node, for the session A holds.
    expect(b.services.realtime.verifyToken(again.body.data.socket.token)).toBe(id);
    expect(a.services.realtime.byId(id)).toBeDefined();
    expect(b.services.realtime.byId(id)).toBeUndefined();
    // B passed the create on to A, which answered the replay from the session it holds.
    expect(a.requests.filter((r) => r.path === `${PREFIX}/stt/realtime/sessions`).map((r) => r.status)).toEqual([200, 200]);

    // The socket the replay's token opens is the session's (through B, forwarded to A).
    const peer = await open(`${b.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${again.body.data.socket.token}`);
    stops.push(async () => void (await peer.close()));
    expect((await peer.waitFor('session.ready')).sessionId).toBe(id);
    await peer.close();

    // A create another node forwarded already is not forwarded again.
    const hopped = await b.call('POST', '/stt/realtime/sessions', { json: { title: 'Live' }, headers: { 'Idempotency-Key': key, 'X-Soundclone-Forwarded-By': 'node_other' } });
    expect(hopped.status).toBe(503);
    expect(hopped.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'SESSION_OWNER_MOVED' } });

    for (const node of [a, b]) {
      const other = await create(node, key, { title: 'Other' });
      expect(other.status).toBe(409);
      expect(other.body).toMatchObject({ errorCode: 'IDEMPOTENCY_CONFLICT', details: { idempotencyKey: key } });
    }
    expect(await realtimeTasks(b)).toHaveLength(1);
    for (const node of [a, b]) expect((await node.call('GET', '/stt/capabilities')).body.data.realtimeParameters.limits).toMatchObject({ openSessions: 1 });
    expect(await pgsql.query(databaseUrl, 'SELECT count(*)::int AS n FROM realtime_session', [])).toEqual([{ n: 1 }]);
    expect(await pgsql.query(databaseUrl, "SELECT scope LIKE '%/realtime' AS realtime, task_id FROM idempotency_key WHERE key = $1", [key])).toEqual([{ realtime: true, task_id: first.body.data.transcriptionId }]);
  });

  it('creates racing on A and B with one key make one session; the other answers it as a replay', async () => {
    const { databaseUrl, a, b } = await twoNodes();
    const keys = [idem(), idem(), idem()];
    for (const key of keys) {
      const answers = await Promise.all([create(a, key), create(b, key)]);
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(new Set(answers.map((r) => r.body.data.sessionId)).size).toBe(1);
      expect(answers.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(1);
    }
    expect(await realtimeTasks(a)).toHaveLength(keys.length);
    expect(await pgsql.query(databaseUrl, 'SELECT count(*)::int AS n FROM realtime_session WHERE open', [])).toEqual([{ n: keys.length }]);
    for (const node of [a, b]) expect((await node.call('GET', '/stt/capabilities')).body.data.realtimeParameters.limits).toMatchObject({ openSessions: keys.length });
  });

  it('once the session ended and its node left, a retry is answered from the store: its stored view, replayed', async () => {
    const { a, b } = await twoNodes();
    const key = idem();
    const first = (await create(a, key)).body.data;
    const finished = await a.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } });
    expect(finished.body.data.status).toBe('COMPLETED');
    await a.stop();

    const again = await create(b, key);
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(again.body.data).toMatchObject({ sessionId: first.sessionId, transcriptionId: first.transcriptionId, status: 'COMPLETED', accepting: false, socket: { url: first.socket.url } });
    expect(b.services.realtime.verifyToken(again.body.data.socket.token)).toBe(first.sessionId);
    expect((await create(b, key, { title: 'Other' })).body.errorCode).toBe('IDEMPOTENCY_CONFLICT');
    expect(await realtimeTasks(b)).toHaveLength(1);
  });
});
