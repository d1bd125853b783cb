import type { TaskStatus } from '@soundclone/core/internal';
import type { BillingRecord, LedgerChars } from '../domain/accounts/billing.js';
import type { Transcript } from '../domain/transcriptions/transcript.js';
import type { TranscriptionOptions } from '../domain/transcriptions/request.js';

/**
 * Everything the service keeps, behind one interface: the in-memory engine (memory-store.ts), the
 * data-directory engine (journal-store.ts) and, for several nodes, the PostgreSQL engine (pg/) share it, and one
 * contract suite (test/store/contract.ts) holds each of them to it.
 *
 * Shape:
 *   - sub-stores per concept for reads and single-row writes (accounts, voices, covers, tasks,
 *     idempotency, leases, uploads, outbox, nodes, events);
 *   - one named operation for every change that moves money or spans rows (createBatchTask,
 *     settleBatch, failTask, openRealtime, accrueRealtime, settleRealtime, recoverInterrupted). Each is
 *     one transaction in an engine that has them; domain code never sees a transaction object, so every
 *     invariant is a method the contract suite can test alike on every engine.
 *   - every method is async, except accrueRealtime, which may answer at once: the in-memory and journal
 *     engines answer it synchronously (a plain bigint), so the frame path stays synchronous there; a
 *     database engine answers with a Promise (docs/protocol.md "Realtime spending").
 *   - rows are immutable: a change replaces the row, never mutates it, so code that kept an old row
 *     sees what a database read would have given it. The billing arithmetic (domain/accounts/billing.ts)
 *     is pure and shared: an engine applies it to a ledger it holds the lock on.
 *
 * Refusals that are part of an operation's answer (insufficient balance, a full voice quota) are
 * returned as values; the domain turns them into ApiErrors with its own messages. Failures of the
 * engine itself (a write that cannot be made durable) throw.
 */
export type MaybePromise<T> = T | Promise<T>;

/** An account's character ledger and benefit period. */
export interface LedgerRow {
  readonly accountId: string;
  readonly planKey: string;
  /** End of the current benefit period (ms since epoch). */
  readonly periodEndsAt: number;
  readonly chars: Readonly<LedgerChars>;
}

export interface VoiceRow {
  readonly id: string;
  readonly ownerId: string | null;
  readonly name: string;
  readonly type: 'system' | 'clone' | 'design';
  readonly feature: 'tts';
  readonly channel: 'system' | 'web' | 'api';
  readonly fileCount: number;
  readonly totalFileSize: number;
}

/** A voice to create: the store gives it its id. */
export type NewVoice = Omit<VoiceRow, 'id' | 'ownerId'>;

export interface TaskError {
  readonly errorCode: string;
  readonly message: string;
  readonly retryable: boolean;
  /** Ours: FIX_INPUT, RETRY or CONTACT_SUPPORT. */
  readonly action: 'FIX_INPUT' | 'RETRY' | 'CONTACT_SUPPORT';
  readonly requestId: string;
}

/** A History task, batch or realtime (domain/transcriptions/tasks.ts). */
export interface TaskRow {
  readonly id: string;
  readonly ownerId: string;
  readonly kind: 'batch' | 'realtime';
  readonly modelId: string;
  readonly title: string;
  readonly languageHint: string;
  readonly requestId: string;
  readonly createdAt: number;
  readonly options?: TranscriptionOptions;
  readonly status: TaskStatus;
  readonly detectedLanguage: string | null;
  readonly audioDurationMs: bigint;
  readonly transcript: Transcript | null;
  readonly billing: Readonly<BillingRecord>;
  readonly error?: TaskError;
  readonly updatedAt: number;
  readonly completedAt: number | null;
  /** A batch task's media, where any node can read it again (absent for realtime tasks). */
  readonly source?: TaskSource;
}

/**
 * Where a batch task's media is kept: an upload (its bytes are in the store until it is deleted) or
 * the hold of media fetched from a mediaUrl (its bytes are kept with the hold until the task ends), and
 * which audio track of it the task transcribes.
 */
export type TaskSource =
  | { readonly kind: 'upload'; readonly uploadId: string; readonly trackIndex: number }
  | { readonly kind: 'hold'; readonly holdId: string; readonly trackIndex: number };

/**
 * A node's claim on a batch task (docs/protocol.md "Batch leases"): the fencing token grows by one with
 * every claim of the task, so a write carrying an older token is refused ('lost-lease').
 */
export interface Lease {
  readonly taskId: string;
  readonly token: bigint;
}

/** A claimed batch task: the row as it was claimed and the claim. */
export interface ClaimedTask {
  readonly task: TaskRow;
  readonly lease: Lease;
}

/** The answer to a fenced write whose lease another claim has replaced: nothing was written. */
export type LostLease = 'lost-lease';

/** Fetched media kept with its hold (Store.uploads.hold). */
export interface HeldMediaBytes {
  readonly bytes: Buffer;
  readonly contentType: string | undefined;
}

/** createBatchTask's and openRealtime's answer when the Idempotency-Key was taken first (by another node): nothing was written. */
export interface ExistingKey {
  readonly existing: IdempotencyRow;
}

/** A task to create: its billing record is made by the operation that reserves for it. */
export type NewTask = Omit<TaskRow, 'billing'>;

/** Content and status changes that move no money (a status move stamps updatedAt, and completedAt when terminal). */
export interface TaskPatch {
  readonly status?: TaskStatus;
  readonly transcript?: Transcript | null;
  readonly detectedLanguage?: string | null;
  readonly audioDurationMs?: bigint;
}

/**
 * A create's Idempotency-Key (a transcription's, or a realtime session's), its body hash and the task
 * it made; a realtime session's key also names the session (`rs_…`) it made.
 */
export interface IdempotencyRow {
  readonly scope: string;
  readonly key: string;
  readonly bodyHash: string;
  readonly taskId: string;
  readonly requestId: string;
  readonly sessionId?: string;
}

/** The key a create takes with what it makes (the store adds the task and, for a realtime session, the session). */
export type NewIdempotencyKey = Omit<IdempotencyRow, 'taskId' | 'sessionId'>;

/**
 * An upload's metadata. Its bytes, as they arrived, are kept beside it (Store.uploads.bytes); the
 * service decodes them where it needs them (domain/transcriptions/uploads.ts).
 */
export interface UploadRow {
  readonly id: string;
  readonly ownerId: string;
  readonly filename: string;
  readonly contentType: string;
  readonly sizeBytes: number;
  readonly createdAt: number;
}

/** One try of a webhook delivery: the answer's status, or what went wrong. */
export interface DeliveryAttempt {
  readonly attempt: number;
  readonly at: number;
  readonly status?: number;
  readonly error?: string;
}

export type DeliveryOutcome = 'pending' | 'delivered' | 'failed' | 'refused';

/**
 * A completion webhook to send (the outbox): made in the same step that ends its task, so a task never
 * ends without its event and never gets two. The event id and time are fixed here; the body is built
 * from the ended task, which no longer changes, so every attempt sends the same body.
 */
export interface DeliveryRow {
  readonly eventId: string;
  readonly taskId: string;
  readonly url: string;
  readonly createdAt: number;
  readonly attempts: readonly DeliveryAttempt[];
  readonly outcome: DeliveryOutcome;
}

/** What a start creates when it is not there yet (a kept row always wins over a seeded one). */
export interface SeedInput {
  readonly ledgers: readonly LedgerRow[];
  readonly voices: readonly VoiceRow[];
  /** Seeded design ids, each savable once by its account. */
  readonly designs: ReadonlyArray<{ readonly designId: string; readonly accountId: string }>;
}

export interface InsufficientRefusal {
  readonly refused: 'insufficient';
  readonly required: bigint;
  /** Available Characters at the time (the caller shows at least 0). */
  readonly available: bigint;
}

export interface QuotaRefusal {
  readonly refused: 'quota';
  readonly used: number;
  readonly limit: number;
}

export interface UnknownDesignRefusal {
  readonly refused: 'unknown-design';
}

/** The account's media would pass its storage quota (uploads plus media held for running tasks). */
export interface StorageRefusal {
  readonly refused: 'storage';
  readonly used: number;
  readonly requested: number;
  readonly limit: number;
}

/** The account has as many realtime sessions open as it may, counted on every node (Store.openRealtime). */
export interface SessionLimitRefusal {
  readonly refused: 'sessions';
  readonly open: number;
  readonly limit: number;
}

export type Refusal = InsufficientRefusal | QuotaRefusal | UnknownDesignRefusal | StorageRefusal | SessionLimitRefusal;

export function isExistingKey(value: unknown): value is ExistingKey {
  return typeof value === 'object' && value !== null && 'existing' in value;
}

export function isRefusal(value: unknown): value is Refusal {
  return typeof value === 'object' && value !== null && 'refused' in value;
}

/**
 * One service node in the registry (Store.nodes): where the others reach it, and whether it is alive,
 * judged by the store's own clock (a database's now(), so the nodes' clocks do not matter).
 */
export interface NodeRow {
  readonly id: string;
  /** The node's own address, reachable by the other nodes (forwarding). */
  readonly internalUrl: string;
  /** The address clients reach the service at (the balancer's). */
  readonly publicUrl: string;
  /** Milliseconds since its last heartbeat, by the store's clock. */
  readonly heartbeatAgeMs: number;
  /** Draining: it takes no new realtime sessions and is on its way out. */
  readonly draining: boolean;
}

/** The node a realtime session lives on, as a session is created (Store.openRealtime). */
export interface RealtimeSessionPlacement {
  /** The session's id (`rs_…`). */
  readonly id: string;
  readonly nodeId: string;
  /** Refused ('sessions') when the account already has this many open, on any node. */
  readonly maxOpen: number;
}

/** A realtime session's row: its task, account and owner node (undefined once the node left the registry). */
export interface RealtimeSessionRow {
  readonly id: string;
  readonly taskId: string;
  readonly accountId: string;
  readonly nodeId: string;
  readonly node: NodeRow | undefined;
}

/** A finished batch run: the status it ends in and the duration it is charged for. */
export interface BatchSettlement {
  readonly status: 'COMPLETED' | 'PARTIAL';
  readonly durationMs: bigint;
  readonly now: number;
}

/** A finished realtime session: the charge covers `durationMs` of received audio. */
export interface RealtimeSettlement {
  readonly status: 'COMPLETED' | 'PARTIAL';
  readonly durationMs: bigint;
  readonly transcript: Transcript;
  readonly detectedLanguage: string | null;
  readonly now: number;
}

export interface Store {
  readonly engine: 'memory' | 'journal' | 'postgres';

  /** At start: creates the ledgers, seeded voices and design ids that are not kept yet. Idempotent. */
  seed(input: SeedInput): Promise<void>;

  readonly accounts: {
    ledger(accountId: string): Promise<LedgerRow | undefined>;
  };

  readonly voices: {
    /** System voices and the account's own, in creation order. */
    listFor(accountId: string): Promise<readonly VoiceRow[]>;
    countOwned(accountId: string): Promise<number>;
    /** Quota checked and voice created in one step. */
    createClone(accountId: string, limit: number, voice: NewVoice): Promise<VoiceRow | QuotaRefusal>;
    /** The account's unsaved design id used up and its voice created in one step. */
    saveDesign(accountId: string, limit: number, designId: string, name: string): Promise<VoiceRow | QuotaRefusal | UnknownDesignRefusal>;
    /** Undefined when the account owns no such voice. */
    rename(accountId: string, id: string, name: string): Promise<VoiceRow | undefined>;
  };

  readonly covers: {
    /**
     * Seeded covers are computed from key positions (domain/accounts/covers.ts); only deletions are
     * kept. Marks `ids` (owned by the account, checked by the caller) deleted; returns the ones that
     * were not deleted before.
     */
    deleteOwned(accountId: string, ids: readonly string[]): Promise<ReadonlySet<string>>;
    /** Which of `ids` are deleted. */
    deletedAmong(ids: readonly string[]): Promise<ReadonlySet<string>>;
  };

  readonly tasks: {
    get(id: string): Promise<TaskRow | undefined>;
    /** The owner's tasks, newest first, one page (page from 1). */
    page(ownerId: string, page: number, pageSize: number): Promise<{ readonly total: number; readonly items: readonly TaskRow[] }>;
    /** Throws StoreError TASK_NOT_FOUND for an unknown id. */
    update(id: string, patch: TaskPatch, now: number): Promise<TaskRow>;
  };

  readonly idempotency: {
    find(scope: string, key: string): Promise<IdempotencyRow | undefined>;
  };

  /**
   * Batch work under leases (docs/protocol.md "Batch leases"). A node runs a batch task only while it
   * holds the task's lease: the node that creates a task claims it at once (`claim`), and on a store
   * several nodes share, each node also claims tasks whose lease is free or has passed (`claimDue`: a
   * node that died, or handed them back) and keeps the leases of the tasks it runs alive (`heartbeat`).
   * Every write a run makes carries its lease (`update` here, settleBatch and failTask with `lease`);
   * once another claim replaced it, the write answers 'lost-lease', nothing is written, and the run
   * stops. A lease is measured by the store's own clock (PostgreSQL: the database's now(), one clock for
   * every node); `leaseMs` is how long a claim or a heartbeat holds.
   *
   * Only QUEUED, PROCESSING and RECONCILING batch tasks can be claimed.
   */
  readonly leases: {
    /** Claims this task if it is runnable and its lease is free or has passed; undefined otherwise. */
    claim(taskId: string, leaseMs: number): Promise<ClaimedTask | undefined>;
    /** Claims up to `max` runnable tasks whose lease is free or has passed, oldest first. */
    claimDue(max: number, leaseMs: number): Promise<readonly ClaimedTask[]>;
    /** Extends these leases by `leaseMs` from now; returns the ids of the tasks whose lease was lost (nothing extended for them). */
    heartbeat(leases: readonly Lease[], leaseMs: number): Promise<readonly string[]>;
    /** Hands these tasks back at once (a draining node): any node may claim them now. A lost lease is left alone. */
    release(leases: readonly Lease[]): Promise<void>;
    /** A fenced tasks.update: the change, or 'lost-lease' with nothing written. */
    update(lease: Lease, patch: TaskPatch, now: number): Promise<TaskRow | LostLease>;
  };

  /**
   * Media an account holds, counted against its storage quota: uploads until deleted, and holds (media
   * fetched from a mediaUrl, while its task runs). The quota check and the write are one step, so two
   * requests, on one node or two, never pass the quota together.
   */
  readonly uploads: {
    create(row: UploadRow, bytes: Buffer, quotaBytes: number): Promise<UploadRow | StorageRefusal>;
    /** Undefined for an id the account does not own. */
    get(ownerId: string, id: string): Promise<UploadRow | undefined>;
    /** The upload's bytes as they arrived; undefined once it is deleted. */
    bytes(id: string): Promise<Buffer | undefined>;
    /** Forgets an owned upload and frees its share; undefined for an id the account does not own. */
    delete(ownerId: string, id: string): Promise<UploadRow | undefined>;
    /**
     * Counts `sizeBytes` against the quota under `holdId` until releaseHold; a refusal holds nothing.
     * With `media`, its bytes are kept with the hold (heldBytes) until then, so a node that takes the
     * task over reads them from the store.
     */
    hold(accountId: string, holdId: string, sizeBytes: number, quotaBytes: number, media?: HeldMediaBytes): Promise<StorageRefusal | undefined>;
    /** The bytes kept with a hold; undefined once released (or when it was made without them). */
    heldBytes(holdId: string): Promise<HeldMediaBytes | undefined>;
    /** Idempotent: a hold released twice, or never made, frees nothing more. */
    releaseHold(holdId: string): Promise<void>;
    usedBytes(accountId: string): Promise<number>;
  };

  /**
   * Completion webhooks. settleBatch and failTask add one for a batch task whose options ask for it
   * (options.notify with a notifyUrl), in the same step. A sender claims due deliveries for a while
   * (its lease) and records each attempt; a delivery whose sender went away is claimed again once the
   * lease has passed, and goes on from its next attempt with the same event id (at least once).
   */
  readonly outbox: {
    /** Pending deliveries no one holds (or whose lease has passed), now held by the caller until `now + leaseMs`, oldest first. */
    claimDue(now: number, max: number, leaseMs: number): Promise<readonly DeliveryRow[]>;
    /** Records an attempt and the outcome it leads to; a delivery still pending stays held until `heldUntil`. */
    recordAttempt(eventId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome, heldUntil: number): Promise<DeliveryRow>;
    /** Every delivery, oldest first (tests and operators). */
    list(): Promise<readonly DeliveryRow[]>;
  };

  /**
   * The service nodes sharing this store, and which node each realtime session lives on (its audio
   * and recogniser are in that node's memory). The memory and journal engines hold one node: the
   * process itself.
   */
  readonly nodes: {
    /** Enters the node in the registry (again, after a restart with the same id): heartbeat now, not draining. */
    register(node: { readonly id: string; readonly internalUrl: string; readonly publicUrl: string }): Promise<void>;
    /** The node is alive: its heartbeat is now (the store's clock). A node that left is entered again. */
    heartbeat(id: string, node: { readonly internalUrl: string; readonly publicUrl: string }): Promise<void>;
    /** The node drains: it takes no new realtime sessions. */
    setDraining(id: string): Promise<void>;
    /** The node leaves the registry (its sessions, if any are left running, are then orphans: failOrphanedSessions). */
    leave(id: string): Promise<void>;
    /** Every node in the registry. */
    list(): Promise<readonly NodeRow[]>;
    /**
     * The secret socket tokens are signed with: made by the first node that asks, the same for every
     * node after, so a token one node issued verifies on another.
     */
    socketTokenSecret(): Promise<Buffer>;
    /** Where a realtime session lives; undefined for an id no node created. */
    session(id: string): Promise<RealtimeSessionRow | undefined>;
    /** The session no longer counts as open (finishing, or its recovery window passed). */
    closeSession(id: string): Promise<void>;
    /** Another node took the session over (the live state, src/live): requests about it go there from now on. */
    moveSession(id: string, nodeId: string): Promise<void>;
    /** The account's open realtime sessions on every node: not closed, task not ended. */
    openSessions(accountId: string): Promise<number>;
    /**
     * Fails every realtime session still running whose node has not beaten for `staleAfterMs`, or has
     * left the registry: its audio is gone with that node. Each ends as failTask ends it (FAILED with
     * `error`, its reservation released, nothing charged), once. Returns the failed tasks' ids.
     */
    failOrphanedSessions(staleAfterMs: number, error: (task: TaskRow) => TaskError, now: number): Promise<readonly string[]>;
    /**
     * The realtime sessions still running whose node has not beaten for `staleAfterMs`, has left the
     * registry, or is `nodeId` itself (a node that restarted under its id holds none of them), oldest
     * first. With the live state their nodes' sweeps take them over instead of failing them.
     */
    orphanedSessions(staleAfterMs: number, nodeId: string): Promise<readonly RealtimeSessionRow[]>;
  };

  readonly events: {
    /**
     * Hears the task's row as it stands (never before this returns), then every change of it (status,
     * content, billing) after it is made, each once and never going back; returns the unsubscribe.
     */
    onTaskChanged(id: string, listener: (row: TaskRow) => void): () => void;
    /** Hears that a delivery was added (a sender then claims it); returns the unsubscribe. */
    onDeliveryAdded(listener: () => void): () => void;
  };

  /**
   * Batch create: reserves the quote of `durationMs` (billing.ts quoteFor) and creates the task QUEUED
   * (and its Idempotency-Key, when given) in one step, or refuses with nothing written. A key another
   * create took first (another node racing with the same key) answers with that key's row
   * (ExistingKey), nothing written: the caller replays its task or refuses another body.
   */
  createBatchTask(input: { readonly task: NewTask; readonly durationMs: bigint }): Promise<TaskRow | InsufficientRefusal>;
  createBatchTask(input: { readonly task: NewTask; readonly durationMs: bigint; readonly idempotency: Omit<IdempotencyRow, 'taskId'> | undefined }): Promise<TaskRow | InsufficientRefusal | ExistingKey>;

  /**
   * Batch success: settles min(charge, reserved), releases the rest and moves the task to its terminal
   * status, with its webhook delivery when it asks for one, once: a task that is no longer RESERVED
   * answers 'already' and nothing changes. With `lease`, fenced: 'lost-lease' once another claim
   * replaced it (leases).
   */
  settleBatch(taskId: string, settlement: BatchSettlement): Promise<TaskRow | 'already'>;
  settleBatch(taskId: string, settlement: BatchSettlement, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;

  /**
   * Any failure, batch or realtime: the reservation released (nothing charged), FAILED with `error`,
   * its webhook delivery added when it asks for one, once: a task already terminal answers 'already'.
   * With `lease`, fenced as settleBatch is.
   */
  failTask(taskId: string, error: TaskError, now: number): Promise<TaskRow | 'already'>;
  failTask(taskId: string, error: TaskError, now: number, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;

  /**
   * Realtime create: refused unless `minimum` Characters are available; the task is created ACCRUING,
   * PROCESSING. With `session`, also refused ('sessions') when the account has `session.maxOpen`
   * sessions open on any node (Store.nodes.openSessions), checked under the same account lock, and the
   * session's row (its owner node) is created with the task.
   *
   * With `idempotency` (and `session`), the key is kept with the task and the session in the same step,
   * so every node sharing the store finds it (docs/protocol.md "Several nodes"). A key already taken
   * (an earlier create, or another node racing with the same key) is looked at before the balance and
   * the open-session limit, and answers with that key's row (ExistingKey, its sessionId set), nothing
   * written: the caller replays that session or refuses another body.
   */
  openRealtime(input: { readonly task: NewTask; readonly minimum: bigint; readonly session?: RealtimeSessionPlacement }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal>;
  openRealtime(input: { readonly task: NewTask; readonly minimum: bigint; readonly session: RealtimeSessionPlacement; readonly idempotency: NewIdempotencyKey | undefined }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey>;

  /**
   * The realtime spending guard, check and reservation in one step: the session's limit is the most
   * samples it may have received in all, the whole seconds its own reservation plus the account's
   * available balance pay for (billing.ts affordableSamples). Grows the session's reservation to the
   * charge of min(wantedSamples, limit) and returns the limit (unchanged by the reservation, which
   * only moves Characters from available to this session). The caller stores audio up to the limit.
   * Synchronous in the memory and journal engines (no row is written per frame: the reservation is
   * kept with the next write of the ledger); a database engine answers with a Promise, and the session's
   * spending guard (realtime/session/spending.ts) asks only when a frame reaches past the seconds its
   * reservation already pays for, holding that socket's later messages in order behind the answer.
   */
  accrueRealtime(taskId: string, wantedSamples: bigint): MaybePromise<bigint>;

  /** Realtime finish: settled = reserved = charge(durationMs), transcript and status set, once. */
  settleRealtime(taskId: string, settlement: RealtimeSettlement): Promise<TaskRow | 'already'>;

  /**
   * After a restart (journal): tasks of these accounts that were still running have lost their audio and
   * worker; each ends FAILED, retryable, with its reservation released (and its webhook delivery, as
   * failTask adds it), and the accounts' ledgers hold
   * no reservation for work that is gone. Returns how many were failed. The memory engine has none.
   * A store several nodes share (PostgreSQL) fails nothing and answers 0: a running task there belongs to
   * the node whose lease it holds, and one whose lease passed is taken over by another node (leases).
   */
  recoverInterrupted(accountIds: readonly string[], now: number): Promise<number>;

  close(): Promise<void>;
}

/**
 * A failure of the store itself (never a refusal a client caused):
 *
 *   TASK_NOT_FOUND      an operation named a task the store does not hold (a bug in the caller: the
 *                       domain only names tasks it read or created).
 *   DELIVERY_NOT_FOUND  an attempt was recorded for a webhook delivery the store does not hold
 *                       (likewise a bug in the caller).
 *
 *   STORE_UNAVAILABLE           the database could not be reached or dropped the connection (refused,
 *                               reset, shut down, starting up, a connect timeout), or did not answer a
 *                               statement in time (lock waits included), before the operation
 *                               committed: nothing was written, the same call may be made again. The
 *                               HTTP layer answers 503 SERVICE_UNAVAILABLE with Retry-After.
 *   STORE_OUTCOME_UNKNOWN       the connection was lost while the operation's COMMIT was on its way:
 *                               it may or may not have been applied (a REST request answers 500
 *                               INTERNAL, which a client repeats only for calls safe to repeat).
 *   STORE_SCHEMA_MISMATCH       at start: the database holds a migration this server does not have (a
 *                               newer server migrated it), or an applied migration's file changed.
 *
 * The data-directory engine's own failures are StateStoreError (journal/state-error.ts).
 */
export type StoreErrorCode = 'TASK_NOT_FOUND' | 'DELIVERY_NOT_FOUND' | 'STORE_UNAVAILABLE' | 'STORE_OUTCOME_UNKNOWN' | 'STORE_SCHEMA_MISMATCH';

export class StoreError extends Error {
  override readonly name = 'StoreError';
  constructor(
    readonly code: StoreErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  static taskNotFound(id: string): StoreError {
    return new StoreError('TASK_NOT_FOUND', `no task ${id} in the store`);
  }

  static deliveryNotFound(eventId: string): StoreError {
    return new StoreError('DELIVERY_NOT_FOUND', `no webhook delivery ${eventId} in the store`);
  }

  static unavailable(cause: unknown): StoreError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new StoreError('STORE_UNAVAILABLE', `the database is unavailable: ${reason}`, { cause });
  }

  static outcomeUnknown(cause: unknown): StoreError {
    const reason = cause instanceof Error ? cause.message : String(cause);
    return new StoreError('STORE_OUTCOME_UNKNOWN', `the database connection was lost while committing; the change may or may not have been made: ${reason}`, { cause });
  }
}

export function isStoreError(value: unknown): value is StoreError {
  return value instanceof StoreError || (value instanceof Error && value.name === 'StoreError');
}
