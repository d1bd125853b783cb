import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { isStoreError } from '../src/index.js';
import { newTask } from '../src/domain/transcriptions/tasks.js';
import { PgStore } from '../src/store/pg/pg-store.js';
import { isRefusal } from '../src/store/store.js';
import { speech } from './realtime/support.js';
import { idem, KEY_A, KEY_B, start, transcribe, upload, type TestServer } from './support/server.js';
import { postgresForFile } from './support/postgres.js';
import { speechWav } from './support/wav.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';

/** startServer({ databaseUrl }): the reference service over real HTTP, its state in PostgreSQL. */
describe('the service on PostgreSQL', () => {
  const pgsql = postgresForFile();
  const servers: TestServer[] = [];
  const open = async (databaseUrl: string): Promise<TestServer> => {
    const server = await start({ databaseUrl });
    servers.push(server);
    return server;
  };
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  it('batch transcription: create, completed, history, and /user/info shows the charge; the ledger table agrees', async () => {
    const url = await pgsql.freshDatabase();
    const s = await open(url);
    expect(s.services.store.engine).toBe('postgres');
    const before = (await s.call('GET', '/user/info')).body.data.benefit;
    const task = await transcribe(s, { uploadId: await upload(s, speechWav()), title: 'on postgres' });
    expect(task).toMatchObject({ status: 'COMPLETED', title: 'on postgres', audioDurationMs: '2600' });
    expect(task.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '600', settledCharacters: '30', releasedCharacters: '570' });
    expect(task.transcript.text).not.toBe('');

    const history = (await s.call('GET', '/stt/transcriptions')).body.data;
    expect(history.total).toBe(1);
    expect(history.items.map((t: { transcriptionId: string }) => t.transcriptionId)).toEqual([task.transcriptionId]);
    expect((await s.call('GET', '/stt/transcriptions', { key: KEY_B })).body.data.total).toBe(0);
    const got = (await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data;
    expect(got).toMatchObject({ status: 'COMPLETED', billing: task.billing, transcript: task.transcript });

    const after = (await s.call('GET', '/user/info')).body.data.benefit;
    expect(after.usedMonthlyChars + after.usedOrderChars - before.usedMonthlyChars - before.usedOrderChars).toBe(30);
    // The same in the tables: the account's columns, and the sum of its ledger entries.
    const accountId = s.services.accounts.authenticate(KEY_A).id;
    const [account] = await pgsql.query<{ monthly_used: string; order_used: string; reserved: string }>(url, 'SELECT monthly_used, order_used, reserved FROM account WHERE id = $1', [accountId]);
    const [sums] = await pgsql.query<{ m: string; o: string; r: string }>(url, 'SELECT sum(delta_monthly_used) AS m, sum(delta_order_used) AS o, sum(delta_reserved) AS r FROM ledger_entry WHERE account_id = $1', [accountId]);
    expect(account).toEqual({ monthly_used: String(after.usedMonthlyChars), order_used: String(after.usedOrderChars), reserved: '0' });
    expect(sums).toEqual({ m: account?.monthly_used, o: account?.order_used, r: '0' });
    expect((await pgsql.query(url, "SELECT kind FROM ledger_entry WHERE task_id = $1 ORDER BY id", [task.transcriptionId])).map((r) => r['kind'])).toEqual(['reserve', 'settle']);
  });

  it('a second server on the same database serves what the first kept (history, balance, Idempotency-Key replay)', async () => {
    const url = await pgsql.freshDatabase();
    const first = await open(url);
    const key = idem();
    const uploadId = await upload(first, speechWav());
    const created = await first.call('POST', '/stt/transcriptions', { json: { uploadId, waitForCompletion: true, waitTimeoutMs: 10_000 }, headers: { 'Idempotency-Key': key } });
    expect(created.body.data.status).toBe('COMPLETED');
    const user = (await first.call('GET', '/user/info')).body.data;
    const second = await open(url);
    expect((await second.call('GET', '/user/info')).body.data).toEqual(user);
    expect((await second.call('GET', `/stt/transcriptions/${created.body.data.transcriptionId}`)).body.data).toMatchObject({ status: 'COMPLETED', billing: created.body.data.billing });
    const replay = await second.call('POST', '/stt/transcriptions', { json: { uploadId, waitForCompletion: true, waitTimeoutMs: 10_000 }, headers: { 'Idempotency-Key': key } });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.data.transcriptionId).toBe(created.body.data.transcriptionId);
    expect((await second.call('POST', '/stt/transcriptions', { json: { uploadId, title: 'other' }, headers: { 'Idempotency-Key': key } })).body.errorCode).toBe('IDEMPOTENCY_CONFLICT');
  });

  it('two servers on one database taking creates for one account near its balance: never more reserved than it has', async () => {
    const url = await pgsql.freshDatabase();
    // 3,000 Characters; each create of the 2.6 s sample reserves one minute (600) and holds it while it runs.
    const options = { databaseUrl: url, accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: 3_000 } }, taskTiming: { queueMs: 60_000, processingMs: 1, reconcilingMs: 1 } };
    const one = await start(options);
    servers.push(one);
    const two = await start(options);
    servers.push(two);
    const uploads = [await upload(one, speechWav()), await upload(two, speechWav())];
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => {
      const s = i % 2 === 0 ? one : two;
      return s.call('POST', '/stt/transcriptions', { json: { uploadId: uploads[i % 2] }, headers: { 'Idempotency-Key': idem() } });
    }));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 402, 402, 402, 402, 402]);
    const accountId = one.services.accounts.authenticate(KEY_A).id;
    const [account] = await pgsql.query(url, 'SELECT reserved::text AS r, order_total - order_used - reserved AS left FROM account WHERE id = $1', [accountId]);
    expect(account).toEqual({ r: '3000', left: '0' });
    const [sums] = await pgsql.query(url, 'SELECT sum(delta_reserved)::text AS r FROM ledger_entry WHERE account_id = $1', [accountId]);
    expect(sums).toEqual({ r: '3000' });
  });

  it('a realtime session streams on PostgreSQL: every sample stored, charged once, each accrual a ledger entry', async () => {
    const url = await pgsql.freshDatabase();
    const s = await open(url);
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: s.url });
    const session = await client.stt.realtime.connect({});
    const pcm = speech(3).subarray(0, Math.round(2.5 * 16_000));
    for (let at = 0; at < pcm.length; at += 320) session.writePcm16(pcm.subarray(at, at + 320));
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    // 2.5 s is three started seconds at 10 Characters each, reserved one second at a time.
    const task = (await s.call('GET', `/stt/transcriptions/${result.session.transcriptionId}`)).body.data;
    expect(task.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '30', settledCharacters: '30' });
    const entries = await pgsql.query(url, "SELECT kind, delta_reserved::text AS r FROM ledger_entry WHERE task_id = $1 ORDER BY id", [result.session.transcriptionId]);
    expect(entries).toEqual([{ kind: 'accrue', r: '10' }, { kind: 'accrue', r: '10' }, { kind: 'accrue', r: '10' }, { kind: 'settle', r: '-30' }]);
    const accountId = s.services.accounts.authenticate(KEY_A).id;
    const [account] = await pgsql.query(url, 'SELECT reserved::text AS r FROM account WHERE id = $1', [accountId]);
    expect(account).toEqual({ r: '0' });
  });

  it('two servers share uploads and the storage quota; a webhook left by a server that stopped before sending is sent by another, once, with its event id', async () => {
    const receiver = await startWebhookReceiver();
    const { received } = receiver;
    try {
      const port = receiver.port;
      const url = await pgsql.freshDatabase();
      const a = await start({ databaseUrl: url, allowMediaHosts: [`127.0.0.1:${port}`] });
      servers.push(a);
      const b = await start({ databaseUrl: url, allowMediaHosts: [`127.0.0.1:${port}`] });
      servers.push(b);
      const wav = speechWav();
      const uploadId = await upload(a, wav);
      const storage = async (s: TestServer) => (await s.call('GET', '/stt/capabilities')).body.data.account.storage.usedBytes;
      expect(await storage(b)).toBe(String(wav.length));
      // Made on one server, transcribed on the other, which sends its webhook.
      const task = await transcribe(b, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/from-b` } });
      expect(task.status).toBe('COMPLETED');
      expect((await a.call('DELETE', `/uploads/${uploadId}`)).status).toBe(200);
      expect(await storage(b)).toBe('0');

      // A server that ended a task and stopped before sending: its store wrote the delivery with the
      // task's ending, and nothing else of it runs (stands in for a node killed between commit and send).
      const gone = await PgStore.open(url);
      const accountId = a.services.accounts.authenticate(KEY_A).id;
      const made = await gone.createBatchTask({
        task: newTask({ ownerId: accountId, kind: 'batch', modelId: 'svc_stt_v1', title: 'left behind', languageHint: 'auto', requestId: 'req_left', status: 'QUEUED', options: { notify: true, notifyUrl: `http://127.0.0.1:${port}/left` } as never }, Date.now()),
        durationMs: 1_000n,
      });
      if (isRefusal(made)) throw new Error('refused');
      await gone.settleBatch(made.id, { status: 'COMPLETED', durationMs: 1_000n, now: Date.now() });
      const [pending] = await gone.outbox.list().then((all) => all.filter((d) => d.taskId === made.id));
      await gone.close();
      for (let i = 0; i < 100 && !received.some((r) => r.path === '/left'); i++) await new Promise((r) => setTimeout(r, 50));
      await new Promise((r) => setTimeout(r, 1_500));
      const left = received.filter((r) => r.path === '/left');
      expect(left).toHaveLength(1);
      expect(left[0]).toMatchObject({ eventId: pending?.eventId, attempt: '1', body: { id: pending?.eventId, data: { transcriptionId: made.id } } });
      expect(received.filter((r) => r.path === '/from-b')).toHaveLength(1);
      const outcomes = (await b.services.store.outbox.list()).map((d) => [d.url.split('/').pop(), d.outcome, d.attempts.length]);
      expect(outcomes).toEqual([['from-b', 'delivered', 1], ['left', 'delivered', 1]]);
    } finally {
      await receiver.close();
    }
  });

  it('with the database stopped a request answers 503 SERVICE_UNAVAILABLE (STORE_UNAVAILABLE, Retry-After); after its restart the service answers again', async () => {
    const url = await pgsql.freshDatabase();
    const s = await open(url);
    expect((await s.call('GET', '/stt/transcriptions')).status).toBe(200);
    await pgsql.server.halt();
    try {
      const down = await s.call('GET', '/stt/transcriptions');
      expect(down.status).toBe(503);
      expect(down.headers.get('retry-after')).toBe('1');
      expect(down.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'STORE_UNAVAILABLE' } });
    } finally {
      await pgsql.server.resume();
    }
    const up = await s.call('GET', '/stt/transcriptions');
    expect(up.status).toBe(200);
    expect(up.body.data.total).toBe(0);
  });

  it('a start that cannot reach the database rejects with StoreError STORE_UNAVAILABLE', async () => {
    // Port 1 on loopback: nothing listens there, the connection is refused at once.
    const error = await start({ databaseUrl: 'postgres://postgres@127.0.0.1:1/none' }).catch((e: unknown) => e);
    expect(isStoreError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'STORE_UNAVAILABLE' });
  });

  it('dataDir and databaseUrl together are refused', async () => {
    await expect(start({ databaseUrl: 'postgres://127.0.0.1:1/x', dataDir: '/tmp/never-made' })).rejects.toThrow(/dataDir or databaseUrl, not both/);
  });
});
