import { createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { PgStore } from '../../src/store/pg/pg-store.js';
import { TaskFeed } from '../../src/store/pg/task-feed.js';
import { ChaosProxy } from '../../src/testing/chaos-proxy.js';
import { isRefusal, isStoreError, type NewTask, type SeedInput, type Store, type TaskRow } from '../../src/store/store.js';
import { postgresForFile } from '../support/postgres.js';
import { describeStoreContract } from './contract.js';

const pgsql = postgresForFile();
const urlOf = new WeakMap<Store, string>();

describeStoreContract('postgres', {
  spending: 'async',
  shared: true,
  open: async () => {
    const url = await pgsql.freshDatabase();
    const store = await PgStore.open(url);
    urlOf.set(store, url);
    return store;
  },
  reopen: async (store) => {
    const url = urlOf.get(store) as string;
    await store.close();
    const again = await PgStore.open(url);
    urlOf.set(again, url);
    return again;
  },
});

const A = 'acct_aaaaaaaaaaaaaaaa';
const T0 = 1_700_000_000_000;
let seq = 0;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function seedFor(orderTotal: bigint): SeedInput {
  return {
    ledgers: [{ accountId: A, planKey: 'pro', periodEndsAt: T0 + 30 * 86_400_000, chars: { monthlyTotal: 0n, monthlyUsed: 0n, orderTotal, orderUsed: 0n, reserved: 0n } }],
    voices: [],
    designs: [],
  };
}

function task(kind: 'batch' | 'realtime' = 'batch'): NewTask {
  seq++;
  return {
    id: `tr_pg_${seq}`, ownerId: A, kind, modelId: 'm', title: 't', languageHint: 'auto', requestId: `req_${seq}`, createdAt: T0,
    status: kind === 'batch' ? 'QUEUED' : 'PROCESSING', detectedLanguage: null, audioDurationMs: 0n, transcript: null, updatedAt: T0, completedAt: null,
  };
}

describe('PgStore: several stores on one database', () => {
  const stores: PgStore[] = [];
  const openOn = async (url: string): Promise<PgStore> => {
    const store = await PgStore.open(url);
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  /** The account's columns, and the sums of its ledger entries: the same numbers when the audit is whole. */
  const books = async (url: string): Promise<{ columns: Record<string, string>; entries: Record<string, string> }> => {
    const [columns] = await pgsql.query(url, 'SELECT monthly_used::text AS m, order_used::text AS o, reserved::text AS r FROM account WHERE id = $1', [A]);
    const [entries] = await pgsql.query(url, 'SELECT sum(delta_monthly_used)::text AS m, sum(delta_order_used)::text AS o, sum(delta_reserved)::text AS r FROM ledger_entry WHERE account_id = $1', [A]);
    return { columns: columns as Record<string, string>, entries: entries as Record<string, string> };
  };

  it('racing batch reservations near the balance: never more reserved than available, the ledger sums to the columns', async () => {
    const url = await pgsql.freshDatabase();
    const [one, two] = [await openOn(url), await openOn(url)] as const;
    await Promise.all([one.seed(seedFor(10_000n)), two.seed(seedFor(10_000n))]);
    // 40 creates of one minute (600 Characters each) against 10,000: 16 fit.
    const outcomes = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? one : two).createBatchTask({ task: task(), durationMs: 60_000n })));
    const granted = outcomes.filter((o) => !isRefusal(o));
    expect(granted).toHaveLength(16);
    expect(outcomes.filter((o) => isRefusal(o)).every((o) => isRefusal(o) && o.refused === 'insufficient' && o.available < 600n)).toBe(true);
    expect((await one.accounts.ledger(A))?.chars.reserved).toBe(9_600n);
    const { columns, entries } = await books(url);
    expect(columns).toEqual({ m: '0', o: '0', r: '9600' });
    expect(entries).toEqual(columns);
  });

  it('racing realtime accruals of sessions on two stores: the sessions together never hold more than the account had', async () => {
    const url = await pgsql.freshDatabase();
    const [one, two] = [await openOn(url), await openOn(url)] as const;
    await one.seed(seedFor(100n));
    const sessions = await Promise.all(Array.from({ length: 6 }, async (_, i) => {
      const store = i % 2 === 0 ? one : two;
      const row = await store.openRealtime({ task: task('realtime'), minimum: 10n });
      if (isRefusal(row)) throw new Error('refused');
      return { store, id: row.id };
    }));
    // Each session asks for 1..30 s in steps of 1 s, all at once.
    await Promise.all(sessions.map(async ({ store, id }) => {
      for (let s = 1n; s <= 30n; s++) await store.accrueRealtime(id, s * 16_000n);
    }));
    const held = (await Promise.all(sessions.map(({ id }) => one.tasks.get(id)))).reduce((n, t) => n + (t?.billing.reserved ?? 0n), 0n);
    expect(held).toBe(100n);
    expect((await one.accounts.ledger(A))?.chars.reserved).toBe(100n);
    const { columns, entries } = await books(url);
    expect(entries).toEqual(columns);
  });

  it('settleBatch of one task from both stores at once is applied once: one settle entry, the other answers already', async () => {
    const url = await pgsql.freshDatabase();
    const [one, two] = [await openOn(url), await openOn(url)] as const;
    await one.seed(seedFor(10_000n));
    const made = await one.createBatchTask({ task: task(), durationMs: 61_000n });
    if (isRefusal(made)) throw new Error('refused');
    const settlement = { status: 'COMPLETED' as const, durationMs: 61_000n, now: T0 + 1 };
    const answers = await Promise.all([one.settleBatch(made.id, settlement), two.settleBatch(made.id, settlement)]);
    expect(answers.filter((a) => a === 'already')).toHaveLength(1);
    expect(answers.find((a) => a !== 'already')).toMatchObject({ billing: { state: 'SETTLED', settled: 610n, released: 590n } });
    expect(await pgsql.query(url, "SELECT kind FROM ledger_entry WHERE task_id = $1 AND kind = 'settle'", [made.id])).toHaveLength(1);
    const { columns, entries } = await books(url);
    expect(columns).toEqual({ m: '0', o: '610', r: '0' });
    expect(entries).toEqual(columns);
  });

  it('the unique ledger index is the last defence: a settlement already in the ledger is not applied again', async () => {
    const url = await pgsql.freshDatabase();
    const store = await openOn(url);
    await store.seed(seedFor(10_000n));
    const made = await store.createBatchTask({ task: task(), durationMs: 1_000n });
    if (isRefusal(made)) throw new Error('refused');
    // Substituted for a second node whose status check somehow passed: its entry is already there.
    await pgsql.query(url, "INSERT INTO ledger_entry (account_id, task_id, kind, delta_reserved, delta_monthly_used, delta_order_used, node_id) VALUES ($1, $2, 'settle', 0, 0, 0, 'other')", [A, made.id]);
    expect(await store.settleBatch(made.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 })).toBe('already');
    expect((await store.tasks.get(made.id))?.billing.state).toBe('RESERVED');
    expect((await store.accounts.ledger(A))?.chars).toMatchObject({ reserved: 600n, orderUsed: 0n });
  });

  it('a CHECK keeps available Characters from going negative, whatever writes the row', async () => {
    const url = await pgsql.freshDatabase();
    const store = await openOn(url);
    await store.seed(seedFor(1_000n));
    await expect(pgsql.query(url, 'UPDATE account SET reserved = 1001 WHERE id = $1', [A])).rejects.toMatchObject({ code: '23514', constraint: 'account_available_not_negative' });
  });

  it('three stores opening an empty database at once: the migrations are applied once, none fails', async () => {
    const url = await pgsql.emptyDatabase();
    const opened = await Promise.all([openOn(url), openOn(url), openOn(url)]);
    // One of them applied every migration; the others found them applied.
    const all = (await pgsql.query(url, 'SELECT version FROM schema_migrations ORDER BY version')).map((r) => r.version);
    expect(all.length).toBeGreaterThanOrEqual(2);
    expect(opened.map((s) => s.migrationsApplied.length).sort()).toEqual([0, 0, all.length]);
    // Seeding from all three at once is as good as once.
    await Promise.all(opened.map((s) => s.seed(seedFor(500n))));
    expect(await pgsql.query(url, "SELECT count(*)::int AS n FROM ledger_entry WHERE kind = 'seed'")).toEqual([{ n: 1 }]);
  });

  it('refuses a database migrated by a newer server (STORE_SCHEMA_MISMATCH)', async () => {
    const url = await pgsql.freshDatabase();
    await pgsql.query(url, "INSERT INTO schema_migrations (version, name, checksum) VALUES (9999, 'future', 'x')");
    await expect(PgStore.open(url)).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_SCHEMA_MISMATCH' });
  });

  it('a database that accepts the connection but never answers is STORE_UNAVAILABLE after the connect timeout', async () => {
    // Substituted for an unreachable host (a black-holed address cannot be produced on loopback): a
    // listener that takes the connection and says nothing.
    const held: Socket[] = [];
    const silent = createServer((socket) => held.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
    try {
      const { port } = silent.address() as AddressInfo;
      await expect(PgStore.open(`postgres://postgres@127.0.0.1:${port}/x`, { connectTimeoutMs: 200 })).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
    } finally {
      for (const socket of held) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('a connection gone half-open (bytes swallowed, nothing closed) is STORE_UNAVAILABLE after the query timeout; the next operation works', async () => {
    const url = await pgsql.freshDatabase();
    const proxy = await new ChaosProxy(pgsql.server.port).listen();
    try {
      const through = new URL(url);
      through.port = String(proxy.port);
      const store = await PgStore.open(through.toString(), { queryTimeoutMs: 300, poolSize: 1 });
      stores.push(store);
      await store.seed(seedFor(1_000n));
      proxy.halfOpen();
      await expect(store.createBatchTask({ task: task(), durationMs: 1n })).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
      // The silent connection was dropped; a new one passes the proxy.
      expect((await store.accounts.ledger(A))?.chars.reserved).toBe(0n);
    } finally {
      await proxy.close();
    }
  });

  it('a row lock held too long (another node stuck inside a transaction) is STORE_UNAVAILABLE after the statement timeout, nothing written', async () => {
    const url = await pgsql.freshDatabase();
    const store = await openOn(url);
    await store.seed(seedFor(1_000n));
    const slow = await PgStore.open(url, { queryTimeoutMs: 300 });
    stores.push(slow);
    const holder = new pg.Client({ connectionString: url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT 1 FROM account WHERE id = $1 FOR UPDATE', [A]);
      await expect(slow.createBatchTask({ task: task(), durationMs: 1n })).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
      await holder.query('ROLLBACK');
    } finally {
      await holder.end();
    }
    expect((await slow.accounts.ledger(A))?.chars.reserved).toBe(0n);
    expect(isRefusal(await slow.createBatchTask({ task: task(), durationMs: 1n }))).toBe(false);
  });

  it('parses int8 as bigint on its own pool only: node-postgres\'s global parser is untouched', async () => {
    const store = await openOn(await pgsql.freshDatabase());
    await store.seed(seedFor(5n));
    expect((await store.accounts.ledger(A))?.chars.orderTotal).toBe(5n);
    expect(pg.types.getTypeParser(pg.types.builtins.INT8)('5')).toBe('5');
  });

  it('with PostgreSQL stopped an operation throws STORE_UNAVAILABLE (idle connections dropping crash nothing); after its restart the store works', async () => {
    const url = await pgsql.freshDatabase();
    const idleErrors: Error[] = [];
    const store = await PgStore.open(url, { connectTimeoutMs: 2_000, onIdleError: (e) => idleErrors.push(e) });
    stores.push(store);
    await store.seed(seedFor(10_000n));
    // Several pooled connections, idle when the server goes.
    await Promise.all([store.accounts.ledger(A), store.tasks.page(A, 1, 10), store.voices.listFor(A)]);
    const open = await store.openRealtime({ task: task('realtime'), minimum: 10n });
    if (isRefusal(open)) throw new Error('refused');
    await pgsql.server.halt();
    try {
      await expect(store.accounts.ledger(A)).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
      await expect(store.createBatchTask({ task: task(), durationMs: 1n })).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
      await expect(store.accrueRealtime(open.id, 16_000n)).rejects.toMatchObject({ name: 'StoreError', code: 'STORE_UNAVAILABLE' });
      // A dropped answer leaves no unhandled rejection (vitest fails the run on one).
      void store.accrueRealtime(open.id, 16_000n);
      expect(isStoreError(await store.tasks.get('x').catch((e: unknown) => e))).toBe(true);
    } finally {
      await pgsql.server.resume();
    }
    expect(idleErrors.length).toBeGreaterThan(0);
    const made = await store.createBatchTask({ task: task(), durationMs: 1n });
    expect(isRefusal(made)).toBe(false);
    expect(await store.accrueRealtime(open.id, 16_000n)).toBeGreaterThan(0n);
    const { columns, entries } = await books(url);
    expect(entries).toEqual(columns);
  });
});

describe('PgStore: batch leases, events and keys across stores', () => {
  const stores: PgStore[] = [];
  const openOn = async (url: string, options: Parameters<typeof PgStore.open>[1] = {}): Promise<PgStore> => {
    const store = await PgStore.open(url, options);
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of stores.splice(0)) await store.close();
  });

  it('stores claiming together never claim one task twice; the lease records the node and the database\'s expiry', async () => {
    const url = await pgsql.freshDatabase();
    const [one, two] = [await openOn(url, { nodeId: 'node_one' }), await openOn(url, { nodeId: 'node_two' })] as const;
    await one.seed(seedFor(1_000_000n));
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) {
      const made = await one.createBatchTask({ task: task(), durationMs: 1n });
      if (isRefusal(made)) throw new Error('refused');
      ids.push(made.id);
    }
    // Handed back at once, as a draining node does: every task is due.
    await one.leases.release(ids.map((id) => ({ taskId: id, token: 0n })));
    const rounds = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? one : two).leases.claimDue(3, 60_000)));
    const claimed = rounds.flat().map((c) => c.task.id);
    expect(new Set(claimed).size).toBe(claimed.length);
    expect(claimed.sort()).toEqual([...ids].sort());
    const rows = await pgsql.query<{ lease_node: string; lease_token: string; ahead: boolean }>(
      url, "SELECT lease_node, lease_token::text, lease_expires_at BETWEEN now() + interval '50 seconds' AND now() + interval '61 seconds' AS ahead FROM task",
    );
    expect(new Set(rows.map((r) => r.lease_node))).toEqual(new Set(['node_one', 'node_two']));
    expect(rows.every((r) => r.lease_token === '1' && r.ahead)).toBe(true);
  });

  it('two stores racing one Idempotency-Key: one task, one reservation; the other answers with the kept key', async () => {
    const url = await pgsql.freshDatabase();
    const [one, two] = [await openOn(url), await openOn(url)] as const;
    await one.seed(seedFor(100_000n));
    for (let round = 0; round < 5; round++) {
      const key = { scope: `${A}/transcriptions`, key: `race-${round}`, bodyHash: 'h', requestId: `req_${round}` };
      const answers = await Promise.all([one, two].map((s) => s.createBatchTask({ task: task(), durationMs: 61_000n, idempotency: key })));
      const made = answers.filter((a) => !isRefusal(a) && !('existing' in a));
      const kept = answers.filter((a) => 'existing' in a);
      expect(made).toHaveLength(1);
      expect(kept).toEqual([{ existing: { ...key, taskId: (made[0] as { id: string }).id } }]);
    }
    expect(await pgsql.query(url, 'SELECT id FROM task')).toHaveLength(5);
    expect(await pgsql.query(url, "SELECT id FROM ledger_entry WHERE kind = 'reserve'")).toHaveLength(5);
    expect((await one.accounts.ledger(A))?.chars.reserved).toBe(6_000n);
  });

  it('a listener on one store hears changes another store makes, also after PostgreSQL restarted under it', async () => {
    const url = await pgsql.freshDatabase();
    const feedErrors: Error[] = [];
    const listening = await openOn(url, { eventPollMs: 60_000, onFeedError: (e) => feedErrors.push(e), onIdleError: () => undefined });
    const writing = await openOn(url, { onIdleError: () => undefined });
    await writing.seed(seedFor(100_000n));
    const made = await writing.createBatchTask({ task: task(), durationMs: 1n });
    if (isRefusal(made)) throw new Error('refused');
    const heard: string[] = [];
    const unsubscribe = listening.events.onTaskChanged(made.id, (row) => heard.push(row.status));
    // The row as it stands, and the listening connection (opened with the first listener) in place.
    for (let i = 0; i < 100 && heard.length < 1; i++) await sleep(20);
    for (let i = 0; i < 100 && (await pgsql.query(url, "SELECT 1 FROM pg_stat_activity WHERE query LIKE 'LISTEN%' AND state = 'idle'")).length === 0; i++) await sleep(20);
    expect(heard).toEqual(['QUEUED']);
    await writing.tasks.update(made.id, { status: 'PROCESSING' }, T0 + 1);
    for (let i = 0; i < 100 && heard.length < 2; i++) await sleep(20);
    // Heard through NOTIFY: the poll is a minute away.
    expect(heard).toEqual(['QUEUED', 'PROCESSING']);
    await pgsql.server.halt();
    await pgsql.server.resume();
    // Not heard by anyone while it was down, nor afterwards until the feed reconnects: the reconnect reads it.
    await writing.settleBatch(made.id, { status: 'COMPLETED', durationMs: 1n, now: T0 + 2 }).catch(async () => {
      await sleep(200);
      return writing.settleBatch(made.id, { status: 'COMPLETED', durationMs: 1n, now: T0 + 2 });
    });
    for (let i = 0; i < 300 && heard.length < 3; i++) await sleep(20);
    expect(heard).toEqual(['QUEUED', 'PROCESSING', 'COMPLETED']);
    expect(feedErrors.length).toBeGreaterThan(0);
    unsubscribe();
  });

  it('a store\'s own changes are heard once, not again through NOTIFY or the poll', async () => {
    const url = await pgsql.freshDatabase();
    const store = await openOn(url, { eventPollMs: 50 });
    await store.seed(seedFor(100_000n));
    const made = await store.createBatchTask({ task: task(), durationMs: 1n });
    if (isRefusal(made)) throw new Error('refused');
    const heard: string[] = [];
    store.events.onTaskChanged(made.id, (row) => heard.push(row.status));
    for (let i = 0; i < 100 && heard.length < 1; i++) await sleep(20);
    await store.tasks.update(made.id, { status: 'PROCESSING' }, T0 + 1);
    await store.settleBatch(made.id, { status: 'COMPLETED', durationMs: 1n, now: T0 + 2 });
    await sleep(300);
    expect(heard).toEqual(['QUEUED', 'PROCESSING', 'COMPLETED']);
  });
});

describe('TaskFeed: the first read racing changes', () => {
  // A read whose answer is held back stands for a slow round trip to PostgreSQL: the row is read from
  // the real database at once, and handed over only when the test lets it go. The order of a read and
  // a commit cannot be forced any other way.
  const held = (store: PgStore): { read: (ids: readonly string[]) => Promise<TaskRow[]>; release: () => void; started: () => number } => {
    const gates: Array<() => void> = [];
    let reads = 0;
    return {
      read: async (ids) => {
        const rows = (await Promise.all(ids.map((id) => store.tasks.get(id)))).filter((r): r is TaskRow => r !== undefined);
        reads++;
        await new Promise<void>((resolve) => gates.push(resolve));
        return rows;
      },
      release: () => { for (const go of gates.splice(0)) go(); },
      started: () => reads,
    };
  };
  const feeds: TaskFeed[] = [];
  const stores: PgStore[] = [];
  afterEach(async () => {
    for (const feed of feeds.splice(0)) await feed.close();
    for (const store of stores.splice(0)) await store.close();
  });
  const setUp = async () => {
    const url = await pgsql.freshDatabase();
    const store = await PgStore.open(url);
    stores.push(store);
    await store.seed(seedFor(100_000n));
    const made = await store.createBatchTask({ task: task(), durationMs: 1n });
    if (isRefusal(made)) throw new Error('refused');
    const gate = held(store);
    const feed = new TaskFeed({ connectionString: url, nodeId: 'node_feed', read: gate.read, pollMs: 60_000, connectTimeoutMs: 5000, onError: () => undefined });
    feeds.push(feed);
    return { store, made, gate, feed };
  };

  it('a change committed while the first read is on its way is told, as the row the listener starts from', async () => {
    const { store, made, gate, feed } = await setUp();
    const heard: string[] = [];
    feed.subscribe(made.id, (row) => heard.push(row.status));
    for (let i = 0; i < 100 && gate.started() < 1; i++) await sleep(10);
    // Another node's change, after the read was made: its NOTIFY may be missed (LISTEN not yet in place).
    await store.tasks.update(made.id, { status: 'PROCESSING' }, T0 + 1);
    gate.release();
    for (let i = 0; i < 200 && heard.at(-1) !== 'PROCESSING'; i++) {
      await sleep(10);
      gate.release();
    }
    // The held read said QUEUED; the read after LISTEN (or the NOTIFY) says PROCESSING. Never left at QUEUED.
    expect(heard).toEqual(['QUEUED', 'PROCESSING']);
  });

  it('a read under way when this node tells a newer row is not passed on: the listener never hears the row go back', async () => {
    const { store, made, gate, feed } = await setUp();
    const heard: string[] = [];
    feed.subscribe(made.id, (row) => heard.push(row.status));
    for (let i = 0; i < 100 && gate.started() < 1; i++) await sleep(10);
    const processing = await store.tasks.update(made.id, { status: 'PROCESSING' }, T0 + 1);
    feed.told(processing);
    expect(heard).toEqual(['PROCESSING']);
    // The held read (QUEUED) lands now, and so do the reads after it.
    for (let i = 0; i < 30; i++) {
      gate.release();
      await sleep(10);
    }
    expect(heard).toEqual(['PROCESSING']);
  });
});
