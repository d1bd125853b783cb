import { ApiError, Violations } from '../../errors.js';
import { type DownloadFormat, LIMITS, type TaskStatus, TERMINAL_STATUSES } from '@soundclone/core/internal';
import { dec } from '../../util/decimal.js';
import type { Account } from '../accounts/accounts.js';
import { billingView, release, releaseRealtime, type BillingRecord } from '../accounts/billing.js';
import { DISCARD_CHANGES, type ChangeSink } from '../state-changes.js';
import type { Transcript } from './transcript.js';
import type { TranscriptionOptions } from './request.js';

/**
 * The shared History (spec "What the service does" 7): batch tasks and realtime results in one store,
 * newest first. A task's id is its History id. Status moves (spec "States and transitions"):
 *
 *   QUEUED -> PROCESSING -> RECONCILING -> COMPLETED | PARTIAL | FAILED      (batch)
 *   PROCESSING (session open) -> COMPLETED | PARTIAL | FAILED at finish     (realtime)
 */
export interface TaskError {
  readonly errorCode: string;
  readonly message: string;
  readonly retryable: boolean;
  /** Ours: FIX_INPUT, RETRY or CONTACT_SUPPORT. */
  readonly action: 'FIX_INPUT' | 'RETRY' | 'CONTACT_SUPPORT';
  readonly requestId: string;
}

export interface Task {
  readonly id: string;
  readonly ownerId: string;
  readonly kind: 'batch' | 'realtime';
  readonly modelId: string;
  readonly title: string;
  readonly languageHint: string;
  readonly requestId: string;
  readonly createdAt: number;
  readonly options?: TranscriptionOptions;
  status: TaskStatus;
  detectedLanguage: string | null;
  audioDurationMs: bigint;
  transcript: Transcript | null;
  billing: BillingRecord;
  error?: TaskError;
  updatedAt: number;
  completedAt: number | null;
  /** Pre-generated and cached downloads. */
  readonly exports: Map<DownloadFormat, Buffer>;
  /** Called on every status change. */
  readonly listeners: Set<() => void>;
}

export function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

export class Tasks {
  private readonly tasks = new Map<string, Task>();
  /** Insertion order is creation order. */
  private readonly order: Task[] = [];

  constructor(private readonly changes: ChangeSink = DISCARD_CHANGES) {}

  add(task: Task): void {
    this.tasks.set(task.id, task);
    this.order.push(task);
    this.changes({ kind: 'task', task });
  }

  /** Kept state, oldest first: a task as last recorded (a later record of the same id replaces it). */
  restore(task: Task): void {
    if (this.tasks.has(task.id)) this.order[this.order.findIndex((t) => t.id === task.id)] = task;
    else this.order.push(task);
    this.tasks.set(task.id, task);
  }

  /**
   * After a restart: a task that was still running when the process stopped has lost its audio (uploads
   * are not kept) and its worker. It ends FAILED, retryable, with its reservation released: nothing was
   * charged for it, and the release is recorded with the task in one write, so it happens exactly once.
   * Returns how many were failed.
   */
  failInterrupted(accounts: { byId(id: string): Account | undefined }, now: number): number {
    const interrupted = this.order.filter((task) => !isTerminal(task.status) && accounts.byId(task.ownerId) !== undefined);
    // An open realtime session's reservation grows with its audio without a write per frame, so the
    // ledger kept with another task's write may hold more than the interrupted tasks' records say.
    // Every reservation of these accounts belongs to an interrupted task: make the ledger match the
    // records before releasing them, so the release leaves nothing reserved for work that is gone.
    const outstanding = new Map<Account, bigint>();
    for (const task of interrupted) {
      const account = accounts.byId(task.ownerId) as Account;
      const held = task.billing.state === 'RESERVED' || task.billing.state === 'ACCRUING' ? task.billing.reserved : 0n;
      outstanding.set(account, (outstanding.get(account) ?? 0n) + held);
    }
    for (const [account, held] of outstanding) account.chars.reserved = held;
    let failed = 0;
    for (const task of interrupted) {
      // A task of an account this server was not started with stays as recorded, for when it is.
      const account = accounts.byId(task.ownerId) as Account;
      if (task.kind === 'batch') release(account, task.billing);
      else releaseRealtime(account, task.billing);
      task.error = {
        errorCode: 'INTERNAL',
        message: 'the service stopped while this transcription was running; nothing was charged, submit it again',
        retryable: true,
        action: 'RETRY',
        requestId: task.requestId,
      };
      this.setStatus(task, 'FAILED', now);
      failed++;
    }
    return failed;
  }

  /** Any account's task, for restoring kept state (never for answering a request). */
  byId(id: string): Task | undefined {
    return this.tasks.get(id);
  }

  /** An owned task, or NOT_FOUND (another account's task is reported exactly like a missing one). */
  get(account: Account, id: string): Task {
    const task = this.tasks.get(id);
    if (task === undefined || task.ownerId !== account.id) throw ApiError.notFound('transcription');
    return task;
  }

  setStatus(task: Task, status: TaskStatus, now: number): void {
    if (task.status === status) return;
    task.status = status;
    task.updatedAt = now;
    if (isTerminal(status)) task.completedAt = now;
    try {
      this.changes({ kind: 'task', task });
    } finally {
      // Waiters learn the status even when it could not be recorded (the error still reaches the caller).
      for (const listener of [...task.listeners]) listener();
    }
  }

  /** Resolves when the task is terminal or `timeoutMs` passed, whichever first; never rejects. */
  waitForTerminal(task: Task, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    if (isTerminal(task.status)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        task.listeners.delete(check);
        signal?.removeEventListener('abort', done);
        resolve();
      };
      const check = (): void => {
        if (isTerminal(task.status)) done();
      };
      const timer = setTimeout(done, timeoutMs);
      task.listeners.add(check);
      signal?.addEventListener('abort', done, { once: true });
    });
  }

  /** Spec "GET /stt/transcriptions": page from 1, pageSize default 20 (max ours: 100). */
  list(account: Account, query: URLSearchParams): Record<string, unknown> {
    const v = new Violations();
    const page = positiveInt(v, 'page', query.get('page'), 1, Number.MAX_SAFE_INTEGER) ?? 1;
    const pageSize = positiveInt(v, 'pageSize', query.get('pageSize'), 1, LIMITS.historyPageSizeMax) ?? LIMITS.historyPageSizeDefault;
    v.throwIfAny();
    const owned = this.order.filter((t) => t.ownerId === account.id).reverse();
    const items = owned.slice((page - 1) * pageSize, page * pageSize).map(historyItemView);
    return { page, pageSize, total: owned.length, totalPage: Math.ceil(owned.length / pageSize), items };
  }
}

function positiveInt(v: Violations, field: string, raw: string | null, min: number, max: number): number | undefined {
  if (raw === null || raw === '') return undefined;
  const n = /^[0-9]+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    v.add(field, max === Number.MAX_SAFE_INTEGER ? `must be an integer of at least ${min}` : `must be an integer from ${min} to ${max}`);
    return undefined;
  }
  return n;
}

function timestamps(task: Task): Record<string, string | null> {
  return {
    createdAt: new Date(task.createdAt).toISOString(),
    updatedAt: new Date(task.updatedAt).toISOString(),
    completedAt: task.completedAt === null ? null : new Date(task.completedAt).toISOString(),
  };
}

/** Spec "History list item"; timestamps and characters (= billableCharacters) shapes are ours. */
export function historyItemView(task: Task): Record<string, unknown> {
  return {
    transcriptionId: task.id,
    modelId: task.modelId,
    title: task.title,
    status: task.status,
    audioDurationMs: dec(task.audioDurationMs),
    detectedLanguage: task.detectedLanguage,
    characters: dec(task.billing.settled),
    timestamps: timestamps(task),
  };
}

/** Spec "Transcription task": the public view (also the json download). The signing secret never appears. */
export function taskView(task: Task): Record<string, unknown> {
  const view: Record<string, unknown> = {
    transcriptionId: task.id,
    status: task.status,
    modelId: task.modelId,
    title: task.title,
    languageHint: task.languageHint,
    detectedLanguage: task.detectedLanguage,
    audioDurationMs: dec(task.audioDurationMs),
    transcript: task.transcript,
    billing: billingView(task.billing),
    timestamps: timestamps(task),
  };
  if (task.options?.clientMetadata !== undefined) view['clientMetadata'] = task.options.clientMetadata;
  if (task.error !== undefined) view['error'] = task.error;
  return view;
}
