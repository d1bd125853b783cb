import { randomBytes } from 'node:crypto';
import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import type pg from 'pg';
import {
  accrue, affordableSamples, available, chargeFor, quoteFor, receivedDurationMs, release, releaseRealtime, settle, settleRealtime,
  type BillingRecord, type Ledger, type LedgerChars,
} from '../../domain/accounts/billing.js';
import {
  StoreError,
  type BatchSettlement, type IdempotencyRow, type NewIdempotencyKey, type InsufficientRefusal, type LedgerRow, type NewTask, type NewVoice, type QuotaRefusal,
  type RealtimeSessionPlacement, type RealtimeSettlement, type SessionLimitRefusal, type SeedInput, type Store,
  type TaskError, type TaskPatch, type TaskRow, type UnknownDesignRefusal, type VoiceRow,
  type ClaimedTask, type ExistingKey, type Lease, type LostLease,
} from '../store.js';
import { BATCH_LEASES } from '../../protocol.js';
import { classify, createPool, sqlState, transaction, type PgAccess } from './connection.js';
import { countOpen, pgNodes } from './nodes.js';
import { addDelivery, notifies, pgOutbox } from './outbox.js';
import { pgUploads } from './uploads.js';
import { migrate } from './migrate.js';
import { TASK_CHANNEL, TaskFeed } from './task-feed.js';
import {
  IDEMPOTENCY_SELECT, idempotencyFrom, ledgerFrom, TASK_COLUMN_COUNT, TASK_COLUMNS, taskFrom, taskParams, voiceFrom,
  type AccountSql, type IdempotencySql, type TaskSql, type VoiceSql,
} from './rows.js';

export interface PgStoreOptions {
  /** Recorded on every ledger entry this store writes (default: a random id per store). */
  readonly nodeId?: string;
  /** Connections in the pool (default 10). */
  readonly poolSize?: number;
  /** How long to wait for a connection (ms, default 5,000); past it an operation is STORE_UNAVAILABLE. */
  readonly connectTimeoutMs?: number;
  /** How long one statement may take, lock waits included (ms, default 30,000); past it STORE_UNAVAILABLE (connection.ts). */
  readonly queryTimeoutMs?: number;
  /** Errors of idle pooled connections (the server restarted): told here, never thrown. */
  readonly onIdleError?: (error: Error) => void;
  /**
   * Another node's task changes are heard through LISTEN/NOTIFY; the tasks someone here listens to are
   * also read again this often (ms, default 1,000), for a notification lost while the listening
   * connection was down (task-feed.ts).
   */
  readonly eventPollMs?: number;
  /** Errors of the listening connection (the server restarted): told here, never thrown. */
  readonly onFeedError?: (error: Error) => void;
}

/** A new task is left to its creator this long (protocol.ts). */
const CREATOR_GRACE_MS = BATCH_LEASES.creatorGraceMs;

const RUNNABLE_SQL = "kind = 'batch' AND status IN ('QUEUED', 'PROCESSING', 'RECONCILING')";

/** A claim sets the lease: this node, the next token, held until the database's now() plus $leaseMs. */
const CLAIM_SET = "lease_node = $1, lease_token = lease_token + 1, lease_expires_at = now() + $2::int8 * interval '1 millisecond'";

/** A ledger locked in the current transaction, in the shape the billing arithmetic changes in place. */
interface LockedLedger extends Ledger {
  readonly accountId: string;
  readonly chars: LedgerChars;
  /** The counts as read, to write the differences to ledger_entry. */
  readonly before: Readonly<LedgerChars>;
}

type Db = pg.PoolClient | pg.Pool;

function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}


/**
 * The PostgreSQL engine (migrations/0001_initial.sql): several service nodes can share one database.
 *
 * Every operation that moves money is one transaction holding the task's row and then its account's
 * row (`SELECT ... FOR UPDATE`, always in that order, so two nodes cannot deadlock on them). The
 * billing arithmetic is billing.ts's, applied in TypeScript to the locked ledger; the new counts are
 * written with an append-only ledger_entry row in the same transaction. A settlement or release is
 * applied once per task: a second store finds the task no longer RESERVED/ACCRUING under the lock and
 * answers 'already', and the unique index on ledger_entry (task_id, kind) refuses a second one even so.
 * CHECK constraints keep an account's available Characters from going negative.
 *
 * accrueRealtime answers with a Promise (one transaction when a frame crosses into a second not paid
 * for yet).
 *
 * A lost connection is StoreError STORE_UNAVAILABLE (nothing written; the HTTP layer answers 503), or
 * STORE_OUTCOME_UNKNOWN when it was lost during the COMMIT (connection.ts).
 */
export class PgStore implements Store {
  readonly engine = 'postgres' as const;
  readonly nodeId: string;
  /** Migration versions this open applied (empty when the database was up to date). */
  readonly migrationsApplied: readonly number[];
  private readonly feed: TaskFeed;
  private readonly deliveryListeners = new Set<() => void>();
  private closed = false;

  private constructor(
    private readonly pool: pg.Pool,
    nodeId: string,
    migrationsApplied: readonly number[],
    databaseUrl: string,
    options: PgStoreOptions,
  ) {
    this.nodeId = nodeId;
    this.migrationsApplied = migrationsApplied;
    this.feed = new TaskFeed({
      connectionString: databaseUrl,
      nodeId,
      read: async (ids) => (await this.query<TaskSql>(`SELECT ${TASK_COLUMNS} FROM task WHERE id = ANY($1::text[])`, [ids])).map(taskFrom),
      pollMs: options.eventPollMs ?? 1000,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      ...(options.onFeedError !== undefined ? { onError: options.onFeedError } : {}),
    });
    const db: PgAccess = { query: (sql, params) => this.query(sql, params), tx: (work) => this.tx(work) };
    this.uploads = pgUploads(db);
    this.outbox = pgOutbox(db);
    this.nodes = pgNodes(db, { get: (id) => this.tasks.get(id), fail: (id, error, now) => this.failTask(id, error, now) });
  }

  /** Migrates the database (under the migration lock) and opens the pool. */
  static async open(databaseUrl: string, options: PgStoreOptions = {}): Promise<PgStore> {
    const applied = await migrate(databaseUrl, options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {});
    const pool = createPool(databaseUrl, {
      ...(options.poolSize !== undefined ? { max: options.poolSize } : {}),
      ...(options.connectTimeoutMs !== undefined ? { connectTimeoutMs: options.connectTimeoutMs } : {}),
      ...(options.queryTimeoutMs !== undefined ? { queryTimeoutMs: options.queryTimeoutMs } : {}),
      ...(options.onIdleError !== undefined ? { onIdleError: options.onIdleError } : {}),
    });
    return new PgStore(pool, options.nodeId ?? `node_${randomBytes(6).toString('hex')}`, applied, databaseUrl, options);
  }

  /**
   * Creates what is missing, concurrency-safe: accounts, voices and designs `INSERT ... ON CONFLICT
   * DO NOTHING` (a kept row wins), each new account with its 'seed' ledger entry. The voice id
   * sequence only ever moves forward, past the seeded ids, under a transaction-scoped lock.
   */
  async seed(input: SeedInput): Promise<void> {
    await transaction(this.pool, async (c) => {
      const l = input.ledgers;
      await c.query(
        `WITH added AS (
           INSERT INTO account (id, plan_key, period_ends_at, monthly_total, monthly_used, order_total, order_used, reserved)
           SELECT * FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::int8[], $6::int8[], $7::int8[], $8::int8[])
           ON CONFLICT (id) DO NOTHING
           RETURNING id, monthly_used, order_used, reserved)
         INSERT INTO ledger_entry (account_id, kind, delta_reserved, delta_monthly_used, delta_order_used, node_id)
         SELECT id, 'seed', reserved, monthly_used, order_used, $9 FROM added`,
        [
          l.map((x) => x.accountId), l.map((x) => x.planKey), l.map((x) => String(x.periodEndsAt)),
          l.map((x) => String(x.chars.monthlyTotal)), l.map((x) => String(x.chars.monthlyUsed)), l.map((x) => String(x.chars.orderTotal)),
          l.map((x) => String(x.chars.orderUsed)), l.map((x) => String(x.chars.reserved)), this.nodeId,
        ],
      );
      const v = input.voices;
      await c.query(
        `INSERT INTO voice (id, owner_id, name, type, feature, channel, file_count, total_file_size)
         SELECT * FROM unnest($1::int8[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int4[], $8::int8[])
         ON CONFLICT (id) DO NOTHING`,
        [v.map((x) => x.id), v.map((x) => x.ownerId), v.map((x) => x.name), v.map((x) => x.type), v.map((x) => x.feature), v.map((x) => x.channel), v.map((x) => x.fileCount), v.map((x) => String(x.totalFileSize))],
      );
      const d = input.designs;
      await c.query(
        'INSERT INTO design (id, account_id) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (id) DO NOTHING',
        [d.map((x) => x.designId), d.map((x) => x.accountId)],
      );
      if (v.length > 0) {
        // Forward only: an id handed out by a concurrent create is never handed out again.
        await c.query("SELECT pg_advisory_xact_lock(hashtext('soundclone:voice_id_seq'))");
        await c.query(
          `SELECT setval('voice_id_seq', m) FROM (SELECT max(id) AS m FROM voice) x, voice_id_seq s
           WHERE m >= CASE WHEN s.is_called THEN s.last_value ELSE s.last_value - 1 END + 1`,
        );
      }
    });
  }

  readonly accounts = {
    ledger: async (accountId: string): Promise<LedgerRow | undefined> => {
      const r = await this.query<AccountSql>('SELECT * FROM account WHERE id = $1', [accountId]);
      return r[0] === undefined ? undefined : ledgerFrom(r[0]);
    },
  };

  readonly voices = {
    listFor: async (accountId: string): Promise<readonly VoiceRow[]> =>
      (await this.query<VoiceSql>('SELECT * FROM voice WHERE owner_id IS NULL OR owner_id = $1 ORDER BY ord', [accountId])).map(voiceFrom),
    countOwned: async (accountId: string): Promise<number> => this.owned(this.pool, accountId),
    createClone: async (accountId: string, limit: number, voice: NewVoice): Promise<VoiceRow | QuotaRefusal> =>
      this.tx(async (c) => {
        // The account row serialises quota checks across nodes: two cannot both pass at limit - 1.
        await c.query('SELECT 1 FROM account WHERE id = $1 FOR UPDATE', [accountId]);
        const used = await this.owned(c, accountId);
        if (used >= limit) return { refused: 'quota', used, limit } as const;
        return this.insertVoice(c, accountId, voice);
      }),
    saveDesign: async (accountId: string, limit: number, designId: string, name: string): Promise<VoiceRow | QuotaRefusal | UnknownDesignRefusal> =>
      this.tx(async (c) => {
        await c.query('SELECT 1 FROM account WHERE id = $1 FOR UPDATE', [accountId]);
        const design = (await c.query<{ account_id: string; saved: boolean }>('SELECT account_id, saved FROM design WHERE id = $1 FOR UPDATE', [designId])).rows[0];
        if (design === undefined || design.saved || design.account_id !== accountId) return { refused: 'unknown-design' } as const;
        const used = await this.owned(c, accountId);
        if (used >= limit) return { refused: 'quota', used, limit } as const;
        await c.query('UPDATE design SET saved = true WHERE id = $1', [designId]);
        return this.insertVoice(c, accountId, { name, type: 'design', feature: 'tts', channel: 'api', fileCount: 0, totalFileSize: 0 });
      }),
    rename: async (accountId: string, id: string, name: string): Promise<VoiceRow | undefined> => {
      if (!/^[0-9]{1,18}$/.test(id)) return undefined;
      const r = await this.query<VoiceSql>('UPDATE voice SET name = $3 WHERE id = $1 AND owner_id = $2 RETURNING *', [id, accountId, name]);
      return r[0] === undefined ? undefined : voiceFrom(r[0]);
    },
  };

  readonly covers = {
    deleteOwned: async (accountId: string, ids: readonly string[]): Promise<ReadonlySet<string>> => {
      const r = await this.query<{ cover_id: string }>(
        'INSERT INTO cover_deleted (cover_id, account_id) SELECT DISTINCT unnest($1::text[]), $2 ON CONFLICT (cover_id) DO NOTHING RETURNING cover_id',
        [ids, accountId],
      );
      const now = new Set(r.map((x) => x.cover_id));
      // In the order asked (RETURNING promises none).
      return new Set(ids.filter((id) => now.has(id)));
    },
    deletedAmong: async (ids: readonly string[]): Promise<ReadonlySet<string>> =>
      new Set((await this.query<{ cover_id: string }>('SELECT cover_id FROM cover_deleted WHERE cover_id = ANY($1::text[])', [ids])).map((x) => x.cover_id)),
  };

  readonly tasks = {
    get: async (id: string): Promise<TaskRow | undefined> => {
      const r = await this.query<TaskSql>(`SELECT ${TASK_COLUMNS} FROM task WHERE id = $1`, [id]);
      return r[0] === undefined ? undefined : taskFrom(r[0]);
    },
    page: async (ownerId: string, page: number, pageSize: number): Promise<{ total: number; items: readonly TaskRow[] }> => {
      const total = Number((await this.query<{ n: bigint }>('SELECT count(*) AS n FROM task WHERE owner_id = $1', [ownerId]))[0]?.n ?? 0n);
      if (total === 0 || page < 1) return { total, items: [] };
      const rows = await this.query<TaskSql>(`SELECT ${TASK_COLUMNS} FROM task WHERE owner_id = $1 ORDER BY seq DESC LIMIT $2 OFFSET $3`, [ownerId, pageSize, (page - 1) * pageSize]);
      return { total, items: rows.map(taskFrom) };
    },
    update: async (id: string, patch: TaskPatch, now: number): Promise<TaskRow> => this.patchTask(id, patch, now, undefined) as Promise<TaskRow>,
  };

  /**
   * Leases (store.ts): a claim is one UPDATE over a `FOR UPDATE SKIP LOCKED` choice of runnable rows
   * whose lease is free or has passed, so nodes claiming together never claim one task twice; expiry is
   * the database's now(), one clock for every node. A fenced write locks the task's row and compares
   * its lease_token under the lock, so it cannot cross a claim.
   */
  readonly leases = {
    claim: async (taskId: string, leaseMs: number): Promise<ClaimedTask | undefined> => {
      const r = await this.query<TaskSql & { lease_token: bigint }>(
        `UPDATE task SET ${CLAIM_SET}
         WHERE id = (SELECT id FROM task WHERE id = $3 AND ${RUNNABLE_SQL}
                       AND (lease_token = 0 OR lease_expires_at IS NULL OR lease_expires_at <= now()) FOR UPDATE SKIP LOCKED)
         RETURNING ${TASK_COLUMNS}, lease_token`,
        [this.nodeId, String(leaseMs), taskId],
      );
      return r[0] === undefined ? undefined : claimedFrom(r[0]);
    },
    claimDue: async (max: number, leaseMs: number): Promise<readonly ClaimedTask[]> => {
      const r = await this.query<TaskSql & { lease_token: bigint; seq: bigint }>(
        `UPDATE task SET ${CLAIM_SET}
         WHERE id IN (SELECT id FROM task WHERE ${RUNNABLE_SQL} AND (lease_expires_at IS NULL OR lease_expires_at <= now())
                      ORDER BY seq LIMIT $3 FOR UPDATE SKIP LOCKED)
         RETURNING ${TASK_COLUMNS}, lease_token, seq`,
        [this.nodeId, String(leaseMs), max],
      );
      return r.sort((a, b) => (a.seq < b.seq ? -1 : 1)).map(claimedFrom);
    },
    heartbeat: async (leases: readonly Lease[], leaseMs: number): Promise<readonly string[]> => {
      if (leases.length === 0) return [];
      const r = await this.query<{ id: string }>(
        `UPDATE task t SET lease_expires_at = now() + $3::int8 * interval '1 millisecond'
         FROM unnest($1::text[], $2::int8[]) AS l(id, token)
         WHERE t.id = l.id AND t.lease_token = l.token
         RETURNING t.id`,
        [leases.map((l) => l.taskId), leases.map((l) => String(l.token)), String(leaseMs)],
      );
      const kept = new Set(r.map((x) => x.id));
      return leases.filter((l) => !kept.has(l.taskId)).map((l) => l.taskId);
    },
    release: async (leases: readonly Lease[]): Promise<void> => {
      if (leases.length === 0) return;
      await this.query(
        `UPDATE task t SET lease_expires_at = now() FROM unnest($1::text[], $2::int8[]) AS l(id, token)
         WHERE t.id = l.id AND t.lease_token = l.token`,
        [leases.map((l) => l.taskId), leases.map((l) => String(l.token))],
      );
    },
    update: async (lease: Lease, patch: TaskPatch, now: number): Promise<TaskRow | LostLease> => this.patchTask(lease.taskId, patch, now, lease),
  };

  readonly idempotency = {
    find: async (scope: string, key: string): Promise<IdempotencyRow | undefined> => {
      const r = await this.query<IdempotencySql>(IDEMPOTENCY_SELECT, [scope, key]);
      return r[0] === undefined ? undefined : idempotencyFrom(r[0]);
    },
  };

  readonly uploads: Store['uploads'];
  readonly outbox: Store['outbox'];
  readonly nodes: Store['nodes'];

  /**
   * Listeners hear the changes made through this store object, after they commit, and those other nodes
   * make, through LISTEN/NOTIFY with a polling fallback (task-feed.ts).
   */
  readonly events = {
    onDeliveryAdded: (listener: () => void): (() => void) => {
      this.deliveryListeners.add(listener);
      return () => this.deliveryListeners.delete(listener);
    },
    onTaskChanged: (id: string, listener: (row: TaskRow) => void): (() => void) => this.feed.subscribe(id, listener),
  };

  createBatchTask(input: { task: NewTask; durationMs: bigint }): Promise<TaskRow | InsufficientRefusal>;
  createBatchTask(input: { task: NewTask; durationMs: bigint; idempotency: Omit<IdempotencyRow, 'taskId'> | undefined }): Promise<TaskRow | InsufficientRefusal | ExistingKey>;
  async createBatchTask(input: { task: NewTask; durationMs: bigint; idempotency?: Omit<IdempotencyRow, 'taskId'> }): Promise<TaskRow | InsufficientRefusal | ExistingKey> {
    let made: TaskRow | InsufficientRefusal;
    try {
      made = await this.tx(async (c): Promise<TaskRow | InsufficientRefusal> => {
      const ledger = await this.lockLedger(c, input.task.ownerId);
      const amount = quoteFor(input.durationMs);
      const left = available(ledger);
      if (amount > left) return { refused: 'insufficient', required: amount, available: left };
      ledger.chars.reserved += amount;
      const billing: BillingRecord = { state: 'RESERVED', planKey: ledger.planKey, reserved: amount, settled: 0n, released: 0n, billableDurationMs: 0n };
      const row: TaskRow = { ...input.task, billing };
      await this.insertTask(c, row);
      // Left to its creator, which claims it next (CREATOR_GRACE_MS).
      await c.query(`UPDATE task SET lease_expires_at = now() + ${CREATOR_GRACE_MS} * interval '1 millisecond' WHERE id = $1`, [row.id]);
      await this.writeLedger(c, ledger, row.id, 'reserve');
      if (input.idempotency !== undefined) {
        const k = input.idempotency;
        // Two nodes racing with one key: the second waits on the first's uncommitted key, then finds it
        // and rolls its whole create back (nothing reserved, no task); it answers with the first's key.
        await takeKey(c, k, row.id);
      }
      return row;
      });
    } catch (error) {
      if (!(error instanceof KeyTaken) || input.idempotency === undefined) throw error;
      const existing = await this.idempotency.find(input.idempotency.scope, input.idempotency.key);
      // Taken and gone again cannot happen (keys are never deleted); say so rather than answer wrongly.
      if (existing === undefined) throw new Error(`idempotency key ${input.idempotency.key} was taken, then not found`);
      return { existing };
    }
    return 'refused' in made ? made : this.told(made);
  }

  settleBatch(taskId: string, s: BatchSettlement): Promise<TaskRow | 'already'>;
  settleBatch(taskId: string, s: BatchSettlement, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;
  async settleBatch(taskId: string, s: BatchSettlement, lease?: Lease): Promise<TaskRow | 'already' | LostLease> {
    return this.once(taskId, lease, (c, row) => {
      if (row.billing.state !== 'RESERVED' || isTerminal(row.status)) return undefined;
      return async (ledger) => {
        const billing = { ...row.billing };
        settle(ledger, billing, s.durationMs);
        const next: TaskRow = { ...row, billing, status: s.status, updatedAt: s.now, completedAt: s.now };
        await this.writeLedger(c, ledger, taskId, 'settle');
        await this.writeTask(c, next);
        await addDelivery(c, next, s.now);
        return next;
      };
    });
  }

  failTask(taskId: string, error: TaskError, now: number): Promise<TaskRow | 'already'>;
  failTask(taskId: string, error: TaskError, now: number, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;
  async failTask(taskId: string, error: TaskError, now: number, lease?: Lease): Promise<TaskRow | 'already' | LostLease> {
    return this.once(taskId, lease, (c, row) => {
      if (isTerminal(row.status)) return undefined;
      return async (ledger) => {
        const next = this.failed(ledger, row, error, now);
        await this.writeLedger(c, ledger, taskId, 'release');
        await this.writeTask(c, next);
        await addDelivery(c, next, now);
        return next;
      };
    });
  }

  /**
   * The account row locked first: two nodes creating sessions for one account count each other's
   * (the open-session limit holds across nodes), and the task and its session row are made together.
   * A create with an Idempotency-Key looks for the key under that lock: a racing create of the same
   * key waits there for the first one's commit and then finds its key (ExistingKey), nothing written.
   * The insert's ON CONFLICT stays as the last word should the lock ever not cover a race.
   */
  openRealtime(input: { task: NewTask; minimum: bigint; session?: RealtimeSessionPlacement }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal>;
  openRealtime(input: { task: NewTask; minimum: bigint; session: RealtimeSessionPlacement; idempotency: NewIdempotencyKey | undefined }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey>;
  async openRealtime(input: { task: NewTask; minimum: bigint; session?: RealtimeSessionPlacement; idempotency?: NewIdempotencyKey }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey> {
    const k = input.idempotency;
    let made: TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey;
    try {
      made = await this.tx(async (c): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey> => {
        const ledger = await this.lockLedger(c, input.task.ownerId);
        if (k !== undefined) {
          const kept = (await c.query<IdempotencySql>(IDEMPOTENCY_SELECT, [k.scope, k.key])).rows[0];
          if (kept !== undefined) return { existing: idempotencyFrom(kept) };
        }
        const left = available(ledger);
        if (left < input.minimum) return { refused: 'insufficient', required: input.minimum, available: left };
        const placement = input.session;
        if (placement !== undefined) {
          const open = await countOpen(c, input.task.ownerId);
          if (open >= placement.maxOpen) return { refused: 'sessions', open, limit: placement.maxOpen };
        }
        const billing: BillingRecord = { state: 'ACCRUING', planKey: ledger.planKey, reserved: 0n, settled: 0n, released: 0n, billableDurationMs: 0n };
        const row: TaskRow = { ...input.task, billing };
        await this.insertTask(c, row);
        if (placement !== undefined) {
          await c.query('INSERT INTO realtime_session (id, task_id, account_id, node_id) VALUES ($1, $2, $3, $4)', [placement.id, row.id, row.ownerId, placement.nodeId]);
          if (k !== undefined) {
            await takeKey(c, k, row.id);
          }
        }
        return row;
      });
    } catch (error) {
      if (!(error instanceof KeyTaken) || k === undefined) throw error;
      const existing = await this.idempotency.find(k.scope, k.key);
      if (existing === undefined) throw new Error(`idempotency key ${k.key} was taken, then not found`);
      return { existing };
    }
    return 'refused' in made || 'existing' in made ? made : this.told(made);
  }

  /**
   * One transaction: the task and its account locked, the limit computed on the locked ledger
   * (billing.ts affordableSamples), the reservation grown to the charge of what is granted, with an
   * 'accrue' ledger entry. Always a Promise; it never rejects unobserved (a caller that drops it leaves
   * no unhandled rejection).
   */
  accrueRealtime(taskId: string, wantedSamples: bigint): Promise<bigint> {
    // The realtime hot path: four round trips (BEGIN, one read locking both rows, one write, COMMIT),
    // three when the reservation already covers what is granted.
    const answer = this.tx(async (c) => {
      // FOR UPDATE OF task, account locks them in that order, as every other operation does.
      const r = (await c.query<AccountSql & { billing_state: string; task_reserved: bigint; task_plan_key: string; settled: bigint; released: bigint; billable_duration_ms: bigint }>(
        `SELECT a.*, t.billing_state, t.reserved AS task_reserved, t.plan_key AS task_plan_key, t.settled, t.released, t.billable_duration_ms
         FROM task t JOIN account a ON a.id = t.owner_id WHERE t.id = $1 FOR UPDATE OF t, a`,
        [taskId],
      )).rows[0];
      if (r === undefined) throw StoreError.taskNotFound(taskId);
      if (r.billing_state !== 'ACCRUING') return 0n;
      const { chars, planKey } = ledgerFrom(r);
      const ledger: LockedLedger = { accountId: r.id, planKey, chars: { ...chars }, before: chars };
      const billing: BillingRecord = { state: 'ACCRUING', planKey: r.task_plan_key, reserved: r.task_reserved, settled: r.settled, released: r.released, billableDurationMs: r.billable_duration_ms };
      const limit = affordableSamples(ledger, billing);
      const granted = wantedSamples < limit ? wantedSamples : limit;
      if (chargeFor(receivedDurationMs(granted)) > billing.reserved) {
        accrue(ledger, billing, granted);
        const now = ledger.chars;
        const was = ledger.before;
        await c.query(
          `WITH account_moved AS (UPDATE account SET monthly_used = $2, order_used = $3, reserved = $4 WHERE id = $1),
                entry AS (INSERT INTO ledger_entry (account_id, task_id, kind, delta_reserved, delta_monthly_used, delta_order_used, node_id)
                          VALUES ($1, $5, 'accrue', $6, $7, $8, $9))
           UPDATE task SET reserved = $10 WHERE id = $5`,
          [
            ledger.accountId, String(now.monthlyUsed), String(now.orderUsed), String(now.reserved), taskId,
            String(now.reserved - was.reserved), String(now.monthlyUsed - was.monthlyUsed), String(now.orderUsed - was.orderUsed), this.nodeId,
            String(billing.reserved),
          ],
        );
      }
      return limit;
    });
    answer.catch(() => undefined);
    return answer;
  }

  async settleRealtime(taskId: string, s: RealtimeSettlement): Promise<TaskRow | 'already'> {
    return this.once(taskId, undefined, (c, row) => {
      if (row.billing.state !== 'ACCRUING' || isTerminal(row.status)) return undefined;
      return async (ledger) => {
        const billing = { ...row.billing };
        settleRealtime(ledger, billing, s.durationMs);
        const next: TaskRow = {
          ...row, billing, audioDurationMs: s.durationMs, transcript: s.transcript, detectedLanguage: s.detectedLanguage,
          status: s.status, updatedAt: s.now, completedAt: s.now,
        };
        await this.writeLedger(c, ledger, taskId, 'settle');
        await this.writeTask(c, next);
        return next;
      };
    });
  }

  /**
   * Nothing to recover at a start: the database is shared, and a batch task still running belongs to
   * the node whose lease it holds; one whose node stopped is claimed by another once its lease has
   * passed (leases.claimDue) and finished there. Realtime tasks are their sessions' nodes' to end.
   */
  async recoverInterrupted(_accountIds: readonly string[], _now: number): Promise<number> {
    return 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.deliveryListeners.clear();
    await this.feed.close();
    await this.pool.end();
  }

  // ---- helpers -----------------------------------------------------------------------------------

  private async query<R extends pg.QueryResultRow>(sql: string, params: readonly unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(sql, params as unknown[])).rows;
    } catch (error) {
      throw classify(error);
    }
  }

  private tx<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return transaction(this.pool, work);
  }

  /**
   * A change applied once per task: the task locked, `decide` says whether it still applies
   * (undefined: 'already'), then the owner's ledger locked and the change made. A second settlement
   * racing in from another store waits on the task's lock and then finds nothing to do; the unique
   * ledger_entry index turns any that gets past that into 'already' too.
   */
  private async once<L extends Lease | undefined>(
    taskId: string,
    lease: L,
    decide: (c: pg.PoolClient, row: TaskRow) => ((ledger: LockedLedger) => Promise<TaskRow>) | undefined,
  ): Promise<TaskRow | 'already' | (L extends Lease ? LostLease : never)> {
    let next: TaskRow | 'already' | LostLease;
    try {
      next = await this.tx(async (c) => {
        const { row, token } = await this.lockTaskLease(c, taskId);
        if (lease !== undefined && token !== lease.token) return 'lost-lease' as const;
        const apply = decide(c, row);
        if (apply === undefined) return 'already' as const;
        return apply(await this.lockLedger(c, row.ownerId));
      });
    } catch (error) {
      if (sqlState(error) === '23505' && (error as { constraint?: string }).constraint === 'ledger_entry_once') return 'already';
      throw error;
    }
    // 'lost-lease' only ever comes with a lease (L is Lease then).
    if (next === 'already' || next === 'lost-lease') return next as 'already' | (L extends Lease ? LostLease : never);
    if (notifies(next) !== undefined) for (const listener of [...this.deliveryListeners]) listener();
    return this.told(next);
  }

  private failed(ledger: LockedLedger, row: TaskRow, error: TaskError, now: number): TaskRow {
    const billing = { ...row.billing };
    if (billing.state === 'RESERVED') release(ledger, billing);
    else releaseRealtime(ledger, billing);
    return { ...row, billing, error, status: 'FAILED', updatedAt: row.status === 'FAILED' ? row.updatedAt : now, completedAt: row.status === 'FAILED' ? row.completedAt : now };
  }

  /** The task's row locked, with the token of its latest claim (0: never claimed). */
  private async lockTaskLease(c: pg.PoolClient, id: string): Promise<{ row: TaskRow; token: bigint }> {
    const r = (await c.query<TaskSql & { lease_token: bigint }>(`SELECT ${TASK_COLUMNS}, lease_token FROM task WHERE id = $1 FOR UPDATE`, [id])).rows[0];
    if (r === undefined) throw StoreError.taskNotFound(id);
    return { row: taskFrom(r), token: r.lease_token };
  }

  /** tasks.update, fenced when `lease` is given. */
  private async patchTask(id: string, patch: TaskPatch, now: number, lease: Lease | undefined): Promise<TaskRow | LostLease> {
    const next = await this.tx(async (c) => {
      const { row, token } = await this.lockTaskLease(c, id);
      if (lease !== undefined && token !== lease.token) return 'lost-lease' as const;
      let next: TaskRow = { ...row, ...patch };
      if (patch.status !== undefined && patch.status !== row.status) {
        next = { ...next, updatedAt: now, completedAt: isTerminal(patch.status) ? now : row.completedAt };
      }
      await this.writeTask(c, next);
      return next;
    });
    return next === 'lost-lease' ? next : this.told(next);
  }

  private async insertTask(c: pg.PoolClient, row: TaskRow): Promise<void> {
    await c.query(`INSERT INTO task (${TASK_COLUMNS}) VALUES (${placeholders(TASK_COLUMN_COUNT)})`, taskParams(row));
    await this.announce(c, row.id);
  }

  /** NOTIFY on commit: other nodes' listeners of the task hear of the change (task-feed.ts). */
  private async announce(c: pg.PoolClient, taskId: string): Promise<void> {
    await c.query('SELECT pg_notify($1, $2)', [TASK_CHANNEL, `${this.nodeId} ${taskId}`]);
  }

  private async lockLedger(c: pg.PoolClient, accountId: string): Promise<LockedLedger> {
    const r = (await c.query<AccountSql>('SELECT * FROM account WHERE id = $1 FOR UPDATE', [accountId])).rows[0];
    if (r === undefined) throw new TypeError(`no ledger for account ${accountId}: seed it first`);
    const { chars, planKey } = ledgerFrom(r);
    return { accountId, planKey, chars: { ...chars }, before: chars };
  }

  /** The locked ledger's new counts, and the change as one ledger_entry row. */
  private async writeLedger(c: pg.PoolClient, ledger: LockedLedger, taskId: string, kind: 'reserve' | 'accrue' | 'settle' | 'release'): Promise<void> {
    const now = ledger.chars;
    const was = ledger.before;
    await c.query('UPDATE account SET monthly_used = $2, order_used = $3, reserved = $4 WHERE id = $1', [ledger.accountId, String(now.monthlyUsed), String(now.orderUsed), String(now.reserved)]);
    await c.query(
      'INSERT INTO ledger_entry (account_id, task_id, kind, delta_reserved, delta_monthly_used, delta_order_used, node_id) VALUES ($1, $2, $3, $4, $5, $6, $7)',
      [ledger.accountId, taskId, kind, String(now.reserved - was.reserved), String(now.monthlyUsed - was.monthlyUsed), String(now.orderUsed - was.orderUsed), this.nodeId],
    );
  }

  private async writeTask(c: pg.PoolClient, t: TaskRow): Promise<void> {
    // Every column but id, owner_id, kind and created_at, which never change (TASK_COLUMNS order).
    const p = taskParams(t);
    await c.query(
      `UPDATE task SET model_id = $2, title = $3, language_hint = $4, request_id = $5, options = $6, status = $7, detected_language = $8,
         audio_duration_ms = $9, transcript = $10, error = $11, billing_state = $12, plan_key = $13, reserved = $14, settled = $15,
         released = $16, billable_duration_ms = $17, updated_at = $18, completed_at = $19
       WHERE id = $1`,
      [p[0], ...p.slice(3, 19), ...p.slice(20, 22)],
    );
    await this.announce(c, t.id);
  }

  private async insertVoice(c: pg.PoolClient, accountId: string, voice: NewVoice): Promise<VoiceRow> {
    const r = (await c.query<VoiceSql>(
      `INSERT INTO voice (id, owner_id, name, type, feature, channel, file_count, total_file_size)
       VALUES (nextval('voice_id_seq'), $1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [accountId, voice.name, voice.type, voice.feature, voice.channel, voice.fileCount, String(voice.totalFileSize)],
    )).rows[0] as VoiceSql;
    return voiceFrom(r);
  }

  private async owned(db: Db, accountId: string): Promise<number> {
    try {
      const r = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM voice WHERE owner_id = $1', [accountId]);
      return Number(r.rows[0]?.n ?? 0n);
    } catch (error) {
      throw classify(error);
    }
  }

  /** Tells this store's listeners of a committed change; returns the row. */
  private told(row: TaskRow): TaskRow {
    this.feed.told(row);
    return row;
  }
}


/** Thrown inside a create's transaction to roll it back: its Idempotency-Key was taken first. */
class KeyTaken extends Error {}

/** Records the create's Idempotency-Key for `taskId`, or throws KeyTaken when another create has it. */
async function takeKey(c: pg.PoolClient, k: Omit<IdempotencyRow, 'taskId'>, taskId: string): Promise<void> {
  const inserted = await c.query(
    'INSERT INTO idempotency_key (scope, key, body_hash, task_id, request_id) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (scope, key) DO NOTHING',
    [k.scope, k.key, k.bodyHash, taskId, k.requestId],
  );
  if (inserted.rowCount !== 1) throw new KeyTaken();
}

function claimedFrom(r: TaskSql & { lease_token: bigint }): ClaimedTask {
  return { task: taskFrom(r), lease: { taskId: r.id, token: r.lease_token } };
}


function placeholders(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
}
