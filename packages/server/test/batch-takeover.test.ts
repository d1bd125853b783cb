import { afterEach, describe, expect, it } from 'vitest';
import type { PgStore } from '../src/store/pg/pg-store.js';
import { BATCH_LEASES } from '../src/protocol.js';
import { loadMigrations, migrate } from '../src/store/pg/migrate.js';
import { idem, KEY_A, start, upload, type TestServer } from './support/server.js';
import { startMediaHost } from './support/media-host.js';
import { postgresForFile } from './support/postgres.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';
import { speechWav } from './support/wav.js';

/**
 * Batch work survives its node (docs/protocol.md "Batch leases"): two servers in this process on one
 * PostgreSQL database. A node cannot be killed -9 in-process; closing it stands in: its runs stop where
 * they are and it neither extends nor releases its leases, as a killed process does not (the real
 * kill -9 of a server process is batch-takeover-cli.test.ts). Leases are shortened so the takeover
 * comes within a test's patience.
 */
describe('batch tasks across two servers on one database', () => {
  const pgsql = postgresForFile();
  const servers: TestServer[] = [];
  const leases = { leaseMs: 600, heartbeatMs: 150, pollMs: 100 };
  const open = async (databaseUrl: string, options: Parameters<typeof start>[0] = {}): Promise<TestServer> => {
    const server = await start({ databaseUrl, batchLeases: leases, ...options });
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  const nodeOf = (s: TestServer) => (s.services.store as PgStore).nodeId;
  /** Polls the task on `s` until it is terminal (or 15 s passed); its view. */
  const terminal = async (s: TestServer, id: string): Promise<any> => {
    for (let i = 0; i < 300; i++) {
      const data = (await s.call('GET', `/stt/transcriptions/${id}`)).body.data;
      if (['COMPLETED', 'PARTIAL', 'FAILED'].includes(data.status)) return data;
      await sleep(50);
    }
    throw new Error(`task ${id} did not end`);
  };
  const statusOf = async (s: TestServer, id: string): Promise<string> => (await s.call('GET', `/stt/transcriptions/${id}`)).body.data.status;
  const running = async (s: TestServer, id: string): Promise<void> => {
    for (let i = 0; i < 200 && (await statusOf(s, id)) !== 'PROCESSING'; i++) await sleep(20);
    expect(await statusOf(s, id)).toBe('PROCESSING');
  };

  it('a server that stops mid-task leaves it to the other, which completes it from the upload: charged once, one webhook', async () => {
    const hooks = await startWebhookReceiver();
    try {
      const url = await pgsql.freshDatabase();
      const allow = { allowMediaHosts: [`127.0.0.1:${hooks.port}`] };
      const a = await open(url, { ...allow, taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 } });
      const b = await open(url, allow);
      const uploadId = await upload(a, speechWav());
      const created = await a.call('POST', '/stt/transcriptions', { json: { uploadId, options: { notifyUrl: `${hooks.url}/done` } }, headers: { 'Idempotency-Key': idem() } });
      expect(created.body).toMatchObject({ code: 1 });
      const id = created.body.data.transcriptionId as string;
      await running(a, id);
      await a.close();
      servers.splice(servers.indexOf(a), 1);
      const ended = await terminal(b, id);
      expect(ended).toMatchObject({ status: 'COMPLETED', audioDurationMs: '2600', billing: { state: 'SETTLED', settledCharacters: '30', releasedCharacters: '570' } });
      expect(ended.transcript.text).not.toBe('');
      const entries = await pgsql.query<{ kind: string; node_id: string }>(url, 'SELECT kind, node_id FROM ledger_entry WHERE task_id = $1 ORDER BY id', [id]);
      expect(entries).toEqual([{ kind: 'reserve', node_id: nodeOf(a) }, { kind: 'settle', node_id: nodeOf(b) }]);
      expect(await pgsql.query(url, 'SELECT lease_node, lease_token::text AS token FROM task WHERE id = $1', [id])).toEqual([{ lease_node: nodeOf(b), token: '2' }]);
      for (let i = 0; i < 100 && hooks.received.length === 0; i++) await sleep(50);
      await sleep(300);
      expect(hooks.received.map((r) => [r.path, r.body.data.transcriptionId, r.body.data.status])).toEqual([['/done', id, 'COMPLETED']]);
    } finally {
      await hooks.close();
    }
  });

  it('media fetched from a mediaUrl is taken over from the bytes kept with its hold (the URL is not fetched again); the hold ends with the task', async () => {
    const media = await startMediaHost();
    try {
      const url = await pgsql.freshDatabase();
      const allow = { allowMediaHosts: [`127.0.0.1:${media.port}`] };
      const a = await open(url, { ...allow, taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 } });
      const b = await open(url, allow);
      const created = await a.call('POST', '/stt/transcriptions', { json: { mediaUrl: `${media.origin}/ok.wav` }, headers: { 'Idempotency-Key': idem() } });
      const id = created.body.data.transcriptionId as string;
      await running(a, id);
      expect(await pgsql.query(url, 'SELECT octet_length(bytes) AS n FROM media_hold')).toEqual([{ n: speechWav().length }]);
      await a.close();
      servers.splice(servers.indexOf(a), 1);
      expect(await terminal(b, id)).toMatchObject({ status: 'COMPLETED', audioDurationMs: '2600' });
      expect(media.hits).toEqual(['/ok.wav']);
      for (let i = 0; i < 50 && (await pgsql.query(url, 'SELECT id FROM media_hold')).length > 0; i++) await sleep(20);
      expect(await pgsql.query(url, 'SELECT id FROM media_hold')).toEqual([]);
      expect(await pgsql.query(url, 'SELECT media_bytes::text AS n FROM account WHERE media_bytes <> 0')).toEqual([]);
    } finally {
      await media.close();
    }
  });

  it('waitForCompletion on one server hears a task the other runs to its end', async () => {
    const url = await pgsql.freshDatabase();
    const a = await open(url, { taskTiming: { queueMs: 1, processingMs: 800, reconcilingMs: 1 } });
    const b = await open(url);
    const uploadId = await upload(a, speechWav());
    const key = idem();
    const body = { uploadId, waitForCompletion: true, waitTimeoutMs: 20_000 };
    const onA = a.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    for (let i = 0; i < 100 && (await pgsql.query(url, 'SELECT id FROM task')).length === 0; i++) await sleep(20);
    // The same key and body on B: a replay of A's task, answered when A ends it (A keeps its lease alive).
    const onB = await b.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    expect(onB.headers.get('idempotent-replayed')).toBe('true');
    expect(onB.body.data.status).toBe('COMPLETED');
    const id = onB.body.data.transcriptionId as string;
    expect((await onA).body.data).toMatchObject({ transcriptionId: id, status: 'COMPLETED' });
    const settledBy = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [id]);
    expect(settledBy).toEqual([{ node_id: nodeOf(a) }]);
  });

  it('a waiter on the other server is answered when the task ends', async () => {
    const url = await pgsql.freshDatabase();
    const a = await open(url, { taskTiming: { queueMs: 1, processingMs: 800, reconcilingMs: 1 } });
    const b = await open(url);
    const uploadId = await upload(a, speechWav());
    const created = await a.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
    const id = created.body.data.transcriptionId as string;
    const account = b.services.accounts.authenticate(KEY_A);
    await b.services.tasks.waitForTerminal(id, 20_000);
    expect((await b.services.tasks.get(account, id)).status).toBe('COMPLETED');
    const [settle] = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [id]);
    expect(settle?.node_id).toBe(nodeOf(a));
  });

  it('two servers racing one Idempotency-Key: one task and one reservation; the loser replays it, or refuses another body with 409', async () => {
    const url = await pgsql.freshDatabase();
    const a = await open(url);
    const b = await open(url);
    const uploadId = await upload(a, speechWav());
    for (let round = 0; round < 4; round++) {
      const key = idem();
      const answers = await Promise.all([a, b].map((s) => s.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': key } })));
      expect(answers.map((r) => r.status)).toEqual([200, 200]);
      expect(new Set(answers.map((r) => r.body.data.transcriptionId)).size).toBe(1);
      const other = idem();
      const mixed = await Promise.all([a, b].map((s, i) => s.call('POST', '/stt/transcriptions', { json: { uploadId, title: `body ${i}` }, headers: { 'Idempotency-Key': other } })));
      expect(mixed.map((r) => r.status).sort()).toEqual([200, 409]);
      expect(mixed.find((r) => r.status === 409)?.body.errorCode).toBe('IDEMPOTENCY_CONFLICT');
    }
    expect(await pgsql.query(url, 'SELECT id FROM task')).toHaveLength(8);
    expect(await pgsql.query(url, "SELECT id FROM ledger_entry WHERE kind = 'reserve'")).toHaveLength(8);
    expect(await pgsql.query(url, 'SELECT key FROM idempotency_key')).toHaveLength(8);
  });

  it('a draining server hands its running task back at once; the other claims and completes it', async () => {
    const url = await pgsql.freshDatabase();
    // Leases far longer than the test: only the hand-back lets B have the task.
    const long = { leaseMs: 60_000, heartbeatMs: 1000, pollMs: 100 };
    const a = await open(url, { batchLeases: long, taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 } });
    const b = await open(url, { batchLeases: long });
    const uploadId = await upload(a, speechWav());
    const created = await a.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
    const id = created.body.data.transcriptionId as string;
    await running(a, id);
    expect(await a.services.transcriptions.handBackBatchWork()).toBe(1);
    expect(await terminal(b, id)).toMatchObject({ status: 'COMPLETED' });
    const [settle] = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [id]);
    expect(settle?.node_id).toBe(nodeOf(b));
    // A draining server takes no new work: a task created on it after the hand-back runs on B.
    const later = await a.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
    const laterId = later.body.data.transcriptionId as string;
    expect(await terminal(b, laterId)).toMatchObject({ status: 'COMPLETED' });
    const [laterSettle] = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [laterId]);
    expect(laterSettle?.node_id).toBe(nodeOf(b));
  });
  it('a server whose lease another claim replaced stops that run and writes nothing more; the new holder ends the task, once', async () => {
    const { PgStore } = await import('../src/store/pg/pg-store.js');
    const url = await pgsql.freshDatabase();
    // Leases far longer than the test: only the claim made below takes the task from A.
    const a = await start({ databaseUrl: url, batchLeases: { leaseMs: 60_000, heartbeatMs: 100, pollMs: 60_000 }, taskTiming: { queueMs: 1, processingMs: 1_500, reconcilingMs: 1 } });
    const thief = await PgStore.open(url, { nodeId: 'node_thief' });
    try {
      const uploadId = await upload(a, speechWav());
      const created = await a.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
      const id = created.body.data.transcriptionId as string;
      for (let i = 0; i < 200 && (await thief.tasks.get(id))?.status !== 'PROCESSING'; i++) await new Promise((r) => setTimeout(r, 20));
      // Stands in for a node that claimed the task while A was paused past its lease (A's heartbeats
      // keep it alive here, so the claim is made as claimDue makes it, without waiting for it to pass).
      const [claimed] = await pgsql.query<{ token: string }>(url, "UPDATE task SET lease_node = 'node_thief', lease_token = lease_token + 1, lease_expires_at = now() + interval '60 seconds' WHERE id = $1 RETURNING lease_token::text AS token", [id]);
      expect(claimed).toEqual({ token: '2' });
      const stolen = { lease: { taskId: id, token: 2n } };
      // A's heartbeat finds the lease lost and stops the run; its processing would have ended by now.
      await new Promise((r) => setTimeout(r, 2_500));
      const row = await thief.tasks.get(id);
      expect(row).toMatchObject({ status: 'PROCESSING', transcript: null, billing: { state: 'RESERVED' } });
      expect(await pgsql.query(url, "SELECT id FROM ledger_entry WHERE task_id = $1 AND kind <> 'reserve'", [id])).toEqual([]);
      const lease = stolen.lease;
      const settled = await thief.settleBatch(id, { status: 'COMPLETED', durationMs: 2_600n, now: Date.now() }, lease);
      expect(settled).toMatchObject({ status: 'COMPLETED', billing: { state: 'SETTLED' } });
      expect(await pgsql.query(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [id])).toEqual([{ node_id: 'node_thief' }]);
    } finally {
      await thief.close();
      await a.close();
    }
  });

  it('a batch task left running from before leases is left to its server for ten minutes, then failed by the server that claims it (its media was not recorded), nothing charged', async () => {
    const url = await pgsql.emptyDatabase();
    const all = loadMigrations();
    await migrate(url, { migrations: all.filter((m) => m.version < 3) });
    await pgsql.query(url, "INSERT INTO account (id, plan_key, period_ends_at, monthly_total, monthly_used, order_total, order_used, reserved) VALUES ('acct_old', 'pro', 0, 0, 0, 1000, 0, 600)");
    await pgsql.query(
      url,
      `INSERT INTO task (id, owner_id, kind, model_id, title, language_hint, request_id, options, status, audio_duration_ms, billing_state, plan_key, reserved, settled, released, billable_duration_ms, created_at, updated_at)
       VALUES ('tr_old', 'acct_old', 'batch', 'm', 't', 'auto', 'req_old', '{"entityCategories":[],"exportFormats":[]}', 'PROCESSING', 0, 'RESERVED', 'pro', 600, 0, 0, 0, 0, 0)`,
    );
    await migrate(url, { migrations: all });
    expect(await pgsql.query(url, "SELECT lease_expires_at BETWEEN now() + interval '9 minutes' AND now() + interval '11 minutes' AS later FROM task")).toEqual([{ later: true }]);
    // The ten minutes pass.
    await pgsql.query(url, "UPDATE task SET lease_expires_at = now() - interval '1 second'");
    const s = await open(url);
    type Row = { status: string; error: { errorCode: string; retryable: boolean } | null; released: string };
    let row: Row | undefined;
    for (let i = 0; i < 100; i++) {
      [row] = await pgsql.query<Row>(url, 'SELECT status, error, released::text FROM task');
      if (row?.status === 'FAILED') break;
      await sleep(50);
    }
    expect(row).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true }, released: '600' });
    expect(await pgsql.query(url, "SELECT kind, node_id FROM ledger_entry WHERE task_id = 'tr_old'")).toEqual([{ kind: 'release', node_id: nodeOf(s) }]);
  });

  it('a task claimed as often as BATCH_LEASES.maxClaims without finishing is failed by the next claim, nothing charged', async () => {
    const url = await pgsql.freshDatabase();
    const a = await open(url, { taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 } });
    const b = await open(url);
    const uploadId = await upload(a, speechWav());
    const created = await a.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
    const id = created.body.data.transcriptionId as string;
    await running(a, id);
    await a.close();
    servers.splice(servers.indexOf(a), 1);
    // Stands in for seven more servers that claimed it and died, one after another.
    await pgsql.query(url, `UPDATE task SET lease_token = ${BATCH_LEASES.maxClaims} WHERE id = $1`, [id]);
    const ended = await terminal(b, id);
    expect(ended).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true }, billing: { state: 'RELEASED', settledCharacters: '0' } });
    expect(ended.error.message).toContain(`started ${BATCH_LEASES.maxClaims} times`);
  });
});
