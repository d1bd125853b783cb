import { randomBytes } from 'node:crypto';
import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import {
  accrue, affordableSamples, available, chargeFor, quoteFor, receivedDurationMs, release, releaseRealtime, settle, settleRealtime,
  type BillingRecord, type Ledger, type LedgerChars,
} from '../domain/accounts/billing.js';
import { BATCH_LEASES, ID_PREFIXES } from '../protocol.js';
import { DecimalIdSequence, randomId } from '../util/ids.js';
import {
  StoreError,
  type BatchSettlement, type IdempotencyRow, type NewIdempotencyKey, type InsufficientRefusal, type LedgerRow, type NewTask, type NewVoice, type QuotaRefusal,
  type DeliveryAttempt, type DeliveryOutcome, type DeliveryRow, type NodeRow, type RealtimeSessionPlacement, type RealtimeSessionRow, type RealtimeSettlement, type SessionLimitRefusal, type SeedInput, type Store, type TaskError, type TaskPatch, type TaskRow, type UnknownDesignRefusal,
  type VoiceRow, type ClaimedTask, type ExistingKey, type Lease, type LostLease,
} from './store.js';
import { MemoryUploads } from './memory-uploads.js';
import { TaskListeners } from './task-listeners.js';

/**
 * What changed, as whole rows, after the memory state moved: the journal engine writes it (one line
 * each), the memory engine keeps nothing. A task carries its owner's ledger, so a reservation, a
 * settlement or a release is never kept without its task, or twice.
 */
export type StoreChange =
  | { readonly kind: 'task'; readonly task: TaskRow; readonly ledger: LedgerRow | undefined }
  | { readonly kind: 'voice'; readonly voice: VoiceRow; readonly savedDesignId?: string }
  | { readonly kind: 'covers-deleted'; readonly accountId: string; readonly ids: readonly string[] }
  | { readonly kind: 'idempotency'; readonly row: IdempotencyRow };

/** A ledger as the engine holds it: the billing arithmetic changes `chars` in place, and a read copies it. */
interface HeldLedger extends Ledger {
  readonly accountId: string;
  periodEndsAt: number;
  readonly chars: LedgerChars;
}

interface Design {
  readonly accountId: string;
  saved: boolean;
}

function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

/** A batch task's lease as this engine holds it (store.ts leases). */
interface HeldLease {
  token: bigint;
  expiresAt: number;
}

function runnable(row: TaskRow): boolean {
  return row.kind === 'batch' && (row.status === 'QUEUED' || row.status === 'PROCESSING' || row.status === 'RECONCILING');
}

function ledgerRow(l: HeldLedger): LedgerRow {
  return { accountId: l.accountId, planKey: l.planKey, periodEndsAt: l.periodEndsAt, chars: { ...l.chars } };
}

/**
 * The in-memory engine: Maps and arrays, as the service always held them, behind the Store interface.
 * Every async method does its work synchronously before it returns (one resolved promise, no I/O), so
 * two requests never interleave inside an operation; accrueRealtime answers with a plain bigint.
 * `startServer()` without a dataDir uses it and builds nothing else (no timers, no files).
 */
export class MemoryStore implements Store {
  readonly engine: 'memory' | 'journal' = 'memory';
  protected readonly ledgers = new Map<string, HeldLedger>();
  protected readonly voiceRows: VoiceRow[] = [];
  private readonly voiceIds = new DecimalIdSequence(100_001n);
  protected readonly designs = new Map<string, Design>();
  protected readonly deletedCovers = new Set<string>();
  protected readonly taskRows = new Map<string, TaskRow>();
  /** Task ids per owner, oldest first (creation order). */
  private readonly taskOrder = new Map<string, string[]>();
  protected readonly keys = new Map<string, IdempotencyRow>();
  private readonly listeners = new TaskListeners();
  /** The outbox, oldest first; not kept by the journal engine (a pending delivery ends with the process). */
  private readonly deliveries = new Map<string, { row: DeliveryRow; heldUntil: number }>();
  private readonly deliveryListeners = new Set<() => void>();
  /**
   * Leases of batch tasks. Only this process uses this store, so the node that creates a task claims it
   * at once and nobody else ever claims it; the leases still follow the contract (tokens, expiry by
   * this process's clock) so the domain code is one for every engine.
   */
  private readonly leaseRows = new Map<string, HeldLease>();

  /** The node registry: in one process, this process (and what a test enters); never kept. */
  private readonly nodeRows = new Map<string, { readonly id: string; internalUrl: string; publicUrl: string; heartbeatAt: number; draining: boolean }>();
  /** Realtime sessions and their node; never kept (a session's audio ends with its process). */
  private readonly sessionRows = new Map<string, { row: Omit<RealtimeSessionRow, 'node'>; open: boolean }>();
  private readonly tokenSecret = randomBytes(32);

  /** Hook for an engine that keeps the state (journal-store.ts); called after the memory state moved. */
  protected changed(_change: StoreChange): void {}

  async seed(input: SeedInput): Promise<void> {
    for (const l of input.ledgers) {
      if (!this.ledgers.has(l.accountId)) this.ledgers.set(l.accountId, { accountId: l.accountId, planKey: l.planKey, periodEndsAt: l.periodEndsAt, chars: { ...l.chars } });
    }
    for (const v of input.voices) {
      if (!this.voiceRows.some((x) => x.id === v.id)) this.voiceRows.push(v);
      this.voiceIds.advancePast(v.id);
    }
    for (const d of input.designs) if (!this.designs.has(d.designId)) this.designs.set(d.designId, { accountId: d.accountId, saved: false });
  }

  readonly accounts = {
    ledger: async (accountId: string): Promise<LedgerRow | undefined> => {
      const l = this.ledgers.get(accountId);
      return l === undefined ? undefined : ledgerRow(l);
    },
  };

  readonly voices = {
    listFor: async (accountId: string): Promise<readonly VoiceRow[]> => this.voiceRows.filter((v) => v.ownerId === null || v.ownerId === accountId),
    countOwned: async (accountId: string): Promise<number> => this.owned(accountId),
    createClone: async (accountId: string, limit: number, voice: NewVoice): Promise<VoiceRow | QuotaRefusal> => {
      const used = this.owned(accountId);
      if (used >= limit) return { refused: 'quota', used, limit };
      const row: VoiceRow = { ...voice, id: this.voiceIds.take(), ownerId: accountId };
      this.voiceRows.push(row);
      this.changed({ kind: 'voice', voice: row });
      return row;
    },
    saveDesign: async (accountId: string, limit: number, designId: string, name: string): Promise<VoiceRow | QuotaRefusal | UnknownDesignRefusal> => {
      const design = this.designs.get(designId);
      if (design === undefined || design.saved || design.accountId !== accountId) return { refused: 'unknown-design' };
      const used = this.owned(accountId);
      if (used >= limit) return { refused: 'quota', used, limit };
      design.saved = true;
      const row: VoiceRow = { id: this.voiceIds.take(), ownerId: accountId, name, type: 'design', feature: 'tts', channel: 'api', fileCount: 0, totalFileSize: 0 };
      this.voiceRows.push(row);
      this.changed({ kind: 'voice', voice: row, savedDesignId: designId });
      return row;
    },
    rename: async (accountId: string, id: string, name: string): Promise<VoiceRow | undefined> => {
      const index = this.voiceRows.findIndex((v) => v.id === id && v.ownerId === accountId);
      if (index < 0) return undefined;
      const row: VoiceRow = { ...(this.voiceRows[index] as VoiceRow), name };
      this.voiceRows[index] = row;
      this.changed({ kind: 'voice', voice: row });
      return row;
    },
  };

  readonly covers = {
    deleteOwned: async (accountId: string, ids: readonly string[]): Promise<ReadonlySet<string>> => {
      const now = new Set<string>();
      for (const id of ids) {
        if (this.deletedCovers.has(id)) continue;
        this.deletedCovers.add(id);
        now.add(id);
      }
      if (now.size > 0) this.changed({ kind: 'covers-deleted', accountId, ids: [...now] });
      return now;
    },
    deletedAmong: async (ids: readonly string[]): Promise<ReadonlySet<string>> => new Set(ids.filter((id) => this.deletedCovers.has(id))),
  };

  readonly tasks = {
    get: async (id: string): Promise<TaskRow | undefined> => this.taskRows.get(id),
    page: async (ownerId: string, page: number, pageSize: number): Promise<{ total: number; items: readonly TaskRow[] }> => {
      const ids = this.taskOrder.get(ownerId) ?? [];
      const total = ids.length;
      // Newest first: page 1 starts at the end of the creation order.
      const end = total - (page - 1) * pageSize;
      const start = Math.max(0, end - pageSize);
      const items: TaskRow[] = [];
      for (let i = end - 1; i >= start; i--) items.push(this.taskRows.get(ids[i] as string) as TaskRow);
      return { total, items };
    },
    update: async (id: string, patch: TaskPatch, now: number): Promise<TaskRow> => {
      const row = this.taskOrThrow(id);
      let next: TaskRow = { ...row, ...patch };
      if (patch.status !== undefined && patch.status !== row.status) {
        next = { ...next, updatedAt: now, completedAt: isTerminal(patch.status) ? now : row.completedAt };
      }
      return this.putTask(next);
    },
  };

  readonly idempotency = {
    find: async (scope: string, key: string): Promise<IdempotencyRow | undefined> => this.keys.get(`${scope}\n${key}`),
  };

  readonly uploads = new MemoryUploads();

  readonly leases = {
    claim: async (taskId: string, leaseMs: number): Promise<ClaimedTask | undefined> => {
      const row = this.taskRows.get(taskId);
      if (row === undefined || !runnable(row)) return undefined;
      const held = this.leaseRows.get(taskId);
      const now = Date.now();
      // Never claimed (token 0): its creator's to claim at once.
      if (held !== undefined && held.token !== 0n && held.expiresAt > now) return undefined;
      const token = (held?.token ?? 0n) + 1n;
      this.leaseRows.set(taskId, { token, expiresAt: now + leaseMs });
      return { task: row, lease: { taskId, token } };
    },
    claimDue: async (max: number, leaseMs: number): Promise<readonly ClaimedTask[]> => {
      const due: TaskRow[] = [];
      const now = Date.now();
      for (const ids of this.taskOrder.values()) {
        for (const id of ids) {
          const row = this.taskRows.get(id) as TaskRow;
          if (runnable(row) && (this.leaseRows.get(id)?.expiresAt ?? 0) <= now) due.push(row);
        }
      }
      // Oldest first, across owners.
      due.sort((a, b) => a.createdAt - b.createdAt);
      const claimed: ClaimedTask[] = [];
      for (const row of due.slice(0, max)) {
        const token = (this.leaseRows.get(row.id)?.token ?? 0n) + 1n;
        this.leaseRows.set(row.id, { token, expiresAt: now + leaseMs });
        claimed.push({ task: row, lease: { taskId: row.id, token } });
      }
      return claimed;
    },
    heartbeat: async (leases: readonly Lease[], leaseMs: number): Promise<readonly string[]> => {
      const lost: string[] = [];
      const now = Date.now();
      for (const lease of leases) {
        const held = this.leaseRows.get(lease.taskId);
        if (held === undefined || held.token !== lease.token) lost.push(lease.taskId);
        else held.expiresAt = now + leaseMs;
      }
      return lost;
    },
    release: async (leases: readonly Lease[]): Promise<void> => {
      for (const lease of leases) {
        const held = this.leaseRows.get(lease.taskId);
        if (held?.token === lease.token) held.expiresAt = 0;
      }
    },
    update: async (lease: Lease, patch: TaskPatch, now: number): Promise<TaskRow | LostLease> => {
      if (!this.leaseHeld(lease)) return 'lost-lease';
      return this.tasks.update(lease.taskId, patch, now);
    },
  };

  readonly outbox = {
    claimDue: async (now: number, max: number, leaseMs: number): Promise<readonly DeliveryRow[]> => {
      const claimed: DeliveryRow[] = [];
      for (const held of this.deliveries.values()) {
        if (claimed.length >= max) break;
        if (held.row.outcome !== 'pending' || held.heldUntil > now) continue;
        held.heldUntil = now + leaseMs;
        claimed.push(held.row);
      }
      return claimed;
    },
    recordAttempt: async (eventId: string, attempt: DeliveryAttempt, outcome: DeliveryOutcome, heldUntil: number): Promise<DeliveryRow> => {
      const held = this.deliveries.get(eventId);
      if (held === undefined) throw StoreError.deliveryNotFound(eventId);
      held.row = { ...held.row, attempts: [...held.row.attempts, attempt], outcome };
      held.heldUntil = heldUntil;
      return held.row;
    },
    list: async (): Promise<readonly DeliveryRow[]> => [...this.deliveries.values()].map((held) => held.row),
  };

  readonly events = {
    onDeliveryAdded: (listener: () => void): (() => void) => {
      this.deliveryListeners.add(listener);
      return () => this.deliveryListeners.delete(listener);
    },
    onTaskChanged: (id: string, listener: (row: TaskRow) => void): (() => void) => {
      const { remove } = this.listeners.add(id, listener);
      // The row as it stands first, after the caller has its unsubscribe in hand.
      queueMicrotask(() => {
        const row = this.taskRows.get(id);
        if (row !== undefined) this.listeners.deliver(row);
      });
      return remove;
    },
  };

  createBatchTask(input: { task: NewTask; durationMs: bigint }): Promise<TaskRow | InsufficientRefusal>;
  createBatchTask(input: { task: NewTask; durationMs: bigint; idempotency: Omit<IdempotencyRow, 'taskId'> | undefined }): Promise<TaskRow | InsufficientRefusal | ExistingKey>;
  async createBatchTask(input: { task: NewTask; durationMs: bigint; idempotency?: Omit<IdempotencyRow, 'taskId'> }): Promise<TaskRow | InsufficientRefusal | ExistingKey> {
    const k = input.idempotency;
    const existing = k === undefined ? undefined : this.keys.get(`${k.scope}\n${k.key}`);
    if (existing !== undefined) return { existing };
    const ledger = this.ledgerOrThrow(input.task.ownerId);
    const amount = quoteFor(input.durationMs);
    const left = available(ledger);
    if (amount > left) return { refused: 'insufficient', required: amount, available: left };
    ledger.chars.reserved += amount;
    const billing: BillingRecord = { state: 'RESERVED', planKey: ledger.planKey, reserved: amount, settled: 0n, released: 0n, billableDurationMs: 0n };
    const row = this.insertTask({ ...input.task, billing });
    // Left to its creator, which claims it next (protocol.ts BATCH_LEASES.creatorGraceMs).
    this.leaseRows.set(row.id, { token: 0n, expiresAt: Date.now() + BATCH_LEASES.creatorGraceMs });
    if (input.idempotency !== undefined) {
      const key: IdempotencyRow = { ...input.idempotency, taskId: row.id };
      this.keys.set(`${key.scope}\n${key.key}`, key);
      this.changed({ kind: 'idempotency', row: key });
    }
    return row;
  }

  settleBatch(taskId: string, s: BatchSettlement): Promise<TaskRow | 'already'>;
  settleBatch(taskId: string, s: BatchSettlement, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;
  async settleBatch(taskId: string, s: BatchSettlement, lease?: Lease): Promise<TaskRow | 'already' | LostLease> {
    const row = this.taskOrThrow(taskId);
    if (row.billing.state !== 'RESERVED' || isTerminal(row.status)) return 'already';
    if (lease !== undefined && !this.leaseHeld(lease)) return 'lost-lease';
    const billing = { ...row.billing };
    settle(this.ledgerOrThrow(row.ownerId), billing, s.durationMs);
    return this.ended(this.putTask({ ...row, billing, status: s.status, updatedAt: s.now, completedAt: s.now }), s.now);
  }

  failTask(taskId: string, error: TaskError, now: number): Promise<TaskRow | 'already'>;
  failTask(taskId: string, error: TaskError, now: number, lease: Lease | undefined): Promise<TaskRow | 'already' | LostLease>;
  async failTask(taskId: string, error: TaskError, now: number, lease?: Lease): Promise<TaskRow | 'already' | LostLease> {
    const row = this.taskOrThrow(taskId);
    if (isTerminal(row.status)) return 'already';
    if (lease !== undefined && !this.leaseHeld(lease)) return 'lost-lease';
    return this.ended(this.putTask(this.failed(row, error, now)), now);
  }

  openRealtime(input: { task: NewTask; minimum: bigint; session?: RealtimeSessionPlacement }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal>;
  openRealtime(input: { task: NewTask; minimum: bigint; session: RealtimeSessionPlacement; idempotency: NewIdempotencyKey | undefined }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey>;
  async openRealtime(input: { task: NewTask; minimum: bigint; session?: RealtimeSessionPlacement; idempotency?: NewIdempotencyKey }): Promise<TaskRow | InsufficientRefusal | SessionLimitRefusal | ExistingKey> {
    const k = input.idempotency;
    // A taken key answers before any refusal: a retry replays, whatever the balance or the limit now.
    const existing = k === undefined ? undefined : this.keys.get(`${k.scope}\n${k.key}`);
    if (existing !== undefined) return { existing };
    const ledger = this.ledgerOrThrow(input.task.ownerId);
    const left = available(ledger);
    if (left < input.minimum) return { refused: 'insufficient', required: input.minimum, available: left };
    const placement = input.session;
    if (placement !== undefined) {
      const open = this.countOpen(input.task.ownerId);
      if (open >= placement.maxOpen) return { refused: 'sessions', open, limit: placement.maxOpen };
    }
    const billing: BillingRecord = { state: 'ACCRUING', planKey: ledger.planKey, reserved: 0n, settled: 0n, released: 0n, billableDurationMs: 0n };
    const row = this.insertTask({ ...input.task, billing });
    if (placement !== undefined) {
      this.sessionRows.set(placement.id, { row: { id: placement.id, taskId: row.id, accountId: row.ownerId, nodeId: placement.nodeId }, open: true });
      if (k !== undefined) {
        const key: IdempotencyRow = { ...k, taskId: row.id, sessionId: placement.id };
        this.keys.set(`${key.scope}\n${key.key}`, key);
        this.changed({ kind: 'idempotency', row: key });
      }
    }
    return row;
  }

  readonly nodes = {
    register: async (node: { id: string; internalUrl: string; publicUrl: string }): Promise<void> => {
      this.nodeRows.set(node.id, { id: node.id, internalUrl: node.internalUrl, publicUrl: node.publicUrl, heartbeatAt: Date.now(), draining: false });
    },
    heartbeat: async (id: string, node: { internalUrl: string; publicUrl: string }): Promise<void> => {
      const row = this.nodeRows.get(id);
      if (row === undefined) this.nodeRows.set(id, { id, ...node, heartbeatAt: Date.now(), draining: false });
      else row.heartbeatAt = Date.now();
    },
    setDraining: async (id: string): Promise<void> => {
      const row = this.nodeRows.get(id);
      if (row !== undefined) row.draining = true;
    },
    leave: async (id: string): Promise<void> => {
      this.nodeRows.delete(id);
    },
    list: async (): Promise<readonly NodeRow[]> => [...this.nodeRows.keys()].map((id) => this.nodeRow(id) as NodeRow),
    socketTokenSecret: async (): Promise<Buffer> => Buffer.from(this.tokenSecret),
    session: async (id: string): Promise<RealtimeSessionRow | undefined> => {
      const held = this.sessionRows.get(id);
      return held === undefined ? undefined : { ...held.row, node: this.nodeRow(held.row.nodeId) };
    },
    closeSession: async (id: string): Promise<void> => {
      const held = this.sessionRows.get(id);
      if (held !== undefined) held.open = false;
    },
    moveSession: async (id: string, nodeId: string): Promise<void> => {
      const held = this.sessionRows.get(id);
      if (held !== undefined) held.row = { ...held.row, nodeId };
    },
    openSessions: async (accountId: string): Promise<number> => this.countOpen(accountId),
    orphanedSessions: async (staleAfterMs: number, nodeId: string): Promise<readonly RealtimeSessionRow[]> => {
      const found: RealtimeSessionRow[] = [];
      for (const held of this.sessionRows.values()) {
        const node = this.nodeRow(held.row.nodeId);
        if (node !== undefined && node.id !== nodeId && node.heartbeatAgeMs < staleAfterMs) continue;
        const task = this.taskRows.get(held.row.taskId);
        if (task === undefined || isTerminal(task.status)) continue;
        found.push({ ...held.row, node });
      }
      return found;
    },
    failOrphanedSessions: async (staleAfterMs: number, error: (task: TaskRow) => TaskError, now: number): Promise<readonly string[]> => {
      const failed: string[] = [];
      for (const held of this.sessionRows.values()) {
        const node = this.nodeRow(held.row.nodeId);
        if (node !== undefined && node.heartbeatAgeMs < staleAfterMs) continue;
        const task = this.taskRows.get(held.row.taskId);
        if (task === undefined || isTerminal(task.status)) continue;
        held.open = false;
        if ((await this.failTask(task.id, error(task), now)) !== 'already') failed.push(task.id);
      }
      return failed;
    },
  };

  private nodeRow(id: string): NodeRow | undefined {
    const row = this.nodeRows.get(id);
    return row === undefined ? undefined : { id, internalUrl: row.internalUrl, publicUrl: row.publicUrl, heartbeatAgeMs: Math.max(0, Date.now() - row.heartbeatAt), draining: row.draining };
  }

  /** The account's sessions that can take audio: not closed, task not ended. */
  private countOpen(accountId: string): number {
    let open = 0;
    for (const held of this.sessionRows.values()) {
      if (held.row.accountId !== accountId || !held.open) continue;
      const task = this.taskRows.get(held.row.taskId);
      if (task !== undefined && !isTerminal(task.status)) open += 1;
    }
    return open;
  }

  /**
   * Synchronous, and allocation-light: a new row only when the reservation grows (at most once per
   * started second of audio); every other frame reads two Maps and does the bigint arithmetic it always did.
   */
  accrueRealtime(taskId: string, wantedSamples: bigint): bigint {
    const row = this.taskOrThrow(taskId);
    if (row.billing.state !== 'ACCRUING') return 0n;
    const ledger = this.ledgerOrThrow(row.ownerId);
    // Moving Characters from available into this reservation leaves reserved + available, and so the
    // limit, as it was.
    const limit = affordableSamples(ledger, row.billing);
    const granted = wantedSamples < limit ? wantedSamples : limit;
    if (chargeFor(receivedDurationMs(granted)) > row.billing.reserved) {
      const billing = { ...row.billing };
      accrue(ledger, billing, granted);
      // Not written: an open session's reservation is kept with the next write of its ledger, and a
      // restart repairs it (recoverInterrupted).
      this.taskRows.set(taskId, { ...row, billing });
    }
    return limit;
  }

  async settleRealtime(taskId: string, s: RealtimeSettlement): Promise<TaskRow | 'already'> {
    const row = this.taskOrThrow(taskId);
    if (row.billing.state !== 'ACCRUING' || isTerminal(row.status)) return 'already';
    const billing = { ...row.billing };
    settleRealtime(this.ledgerOrThrow(row.ownerId), billing, s.durationMs);
    return this.putTask({
      ...row, billing, audioDurationMs: s.durationMs, transcript: s.transcript, detectedLanguage: s.detectedLanguage,
      status: s.status, updatedAt: s.now, completedAt: s.now,
    });
  }

  async recoverInterrupted(accountIds: readonly string[], now: number): Promise<number> {
    const owners = new Set(accountIds);
    const interrupted: TaskRow[] = [];
    for (const [owner, ids] of this.taskOrder) {
      if (!owners.has(owner) || !this.ledgers.has(owner)) continue;
      for (const id of ids) {
        const row = this.taskRows.get(id) as TaskRow;
        if (!isTerminal(row.status)) interrupted.push(row);
      }
    }
    // An open realtime session's reservation grows with its audio without a write per frame, so the
    // ledger kept with another task's write may hold more than the interrupted tasks' records say.
    // Every reservation of these accounts belongs to an interrupted task: make the ledger match the
    // records before releasing them, so the release leaves nothing reserved for work that is gone.
    const outstanding = new Map<string, bigint>();
    for (const row of interrupted) {
      const held = row.billing.state === 'RESERVED' || row.billing.state === 'ACCRUING' ? row.billing.reserved : 0n;
      outstanding.set(row.ownerId, (outstanding.get(row.ownerId) ?? 0n) + held);
    }
    for (const [owner, held] of outstanding) this.ledgerOrThrow(owner).chars.reserved = held;
    for (const row of interrupted) {
      // Nothing of the run is kept: a batch task caught while reconciling ends without the transcript
      // it was about to deliver, as every failed task does.
      const cleared: TaskRow = { ...row, transcript: null, detectedLanguage: null, audioDurationMs: 0n };
      this.ended(this.putTask(this.failed(cleared, {
        errorCode: 'INTERNAL',
        message: 'the service stopped while this transcription was running; nothing was charged, submit it again',
        retryable: true,
        action: 'RETRY',
        requestId: row.requestId,
      }, now)), now);
    }
    return interrupted.length;
  }

  async close(): Promise<void> {
    this.listeners.clear();
    this.deliveryListeners.clear();
    this.uploads.clear();
    this.leaseRows.clear();
  }

  // ---- helpers -----------------------------------------------------------------------------------

  /** True while `lease` is the task's latest claim (a passed lease no one claimed since still holds). */
  private leaseHeld(lease: Lease): boolean {
    this.taskOrThrow(lease.taskId);
    return this.leaseRows.get(lease.taskId)?.token === lease.token;
  }

  /** A batch task that asks for a completion webhook gets its delivery as it ends; the senders hear of it. */
  private ended(row: TaskRow, now: number): TaskRow {
    // An ended task is never claimed again: its lease is forgotten.
    this.leaseRows.delete(row.id);
    const url = row.options?.notify === true ? row.options.notifyUrl : undefined;
    if (row.kind !== 'batch' || url === undefined) return row;
    const delivery: DeliveryRow = { eventId: randomId(ID_PREFIXES.event), taskId: row.id, url, createdAt: now, attempts: [], outcome: 'pending' };
    this.deliveries.set(delivery.eventId, { row: delivery, heldUntil: 0 });
    for (const listener of [...this.deliveryListeners]) listener();
    return row;
  }

  private owned(accountId: string): number {
    let n = 0;
    for (const v of this.voiceRows) if (v.ownerId === accountId) n++;
    return n;
  }

  private failed(row: TaskRow, error: TaskError, now: number): TaskRow {
    const billing = { ...row.billing };
    const ledger = this.ledgerOrThrow(row.ownerId);
    if (billing.state === 'RESERVED') release(ledger, billing);
    else releaseRealtime(ledger, billing);
    return { ...row, billing, error, status: 'FAILED', updatedAt: row.status === 'FAILED' ? row.updatedAt : now, completedAt: row.status === 'FAILED' ? row.completedAt : now };
  }

  private insertTask(row: TaskRow): TaskRow {
    let ids = this.taskOrder.get(row.ownerId);
    if (ids === undefined) this.taskOrder.set(row.ownerId, (ids = []));
    ids.push(row.id);
    return this.putTask(row);
  }

  /** Kept state (journal engine): a task as last recorded, in creation order. */
  protected restoreTask(row: TaskRow): void {
    if (!this.taskRows.has(row.id)) {
      let ids = this.taskOrder.get(row.ownerId);
      if (ids === undefined) this.taskOrder.set(row.ownerId, (ids = []));
      ids.push(row.id);
    }
    this.taskRows.set(row.id, row);
  }

  protected restoreVoice(row: VoiceRow): void {
    const index = this.voiceRows.findIndex((v) => v.id === row.id);
    if (index >= 0) this.voiceRows[index] = row;
    else this.voiceRows.push(row);
    this.voiceIds.advancePast(row.id);
  }

  protected restoreLedger(row: LedgerRow): void {
    this.ledgers.set(row.accountId, { accountId: row.accountId, planKey: row.planKey, periodEndsAt: row.periodEndsAt, chars: { ...row.chars } });
  }

  /** Replaces the row, then records it (an engine that keeps state may throw), then tells the listeners. */
  private putTask(row: TaskRow): TaskRow {
    this.taskRows.set(row.id, row);
    try {
      const ledger = this.ledgers.get(row.ownerId);
      this.changed({ kind: 'task', task: row, ledger: ledger === undefined ? undefined : ledgerRow(ledger) });
    } finally {
      // Waiters learn the change even when it could not be recorded (the error still reaches the caller).
      this.listeners.deliver(row);
    }
    return row;
  }

  private taskOrThrow(id: string): TaskRow {
    const row = this.taskRows.get(id);
    if (row === undefined) throw StoreError.taskNotFound(id);
    return row;
  }

  private ledgerOrThrow(accountId: string): HeldLedger {
    const ledger = this.ledgers.get(accountId);
    if (ledger === undefined) throw new TypeError(`no ledger for account ${accountId}: seed it first`);
    return ledger;
  }
}
