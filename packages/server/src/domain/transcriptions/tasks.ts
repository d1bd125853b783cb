import { ApiError, Violations } from '../../errors.js';
import { type DownloadFormat, LIMITS, type TaskStatus, TERMINAL_STATUSES } from '@soundclone/core/internal';
import { dec } from '../../util/decimal.js';
import type { Account } from '../accounts/accounts.js';
import { billingView } from '../accounts/billing.js';
import type { NewTask, Store, TaskRow } from '../../store/store.js';
import { randomId } from '../../util/ids.js';
import { ID_PREFIXES } from '../../protocol.js';

/**
 * The shared History (spec "What the service does" 7): batch tasks and realtime results in one store,
 * newest first. A task's id is its History id. Status moves (spec "States and transitions"):
 *
 *   QUEUED -> PROCESSING -> RECONCILING -> COMPLETED | PARTIAL | FAILED      (batch)
 *   PROCESSING (session open) -> COMPLETED | PARTIAL | FAILED at finish     (realtime)
 */
export type { TaskError } from '../../store/store.js';
/** A History task as the store holds it (immutable: a change replaces the row). */
export type Task = TaskRow;

/** A History task as a create makes it (batch QUEUED, realtime PROCESSING): nothing recognised, nothing charged yet. */
export function newTask(fields: Pick<NewTask, 'ownerId' | 'kind' | 'modelId' | 'title' | 'languageHint' | 'requestId' | 'status' | 'options'>, now: number): NewTask {
  return {
    id: randomId(ID_PREFIXES.transcription),
    ...fields,
    createdAt: now,
    detectedLanguage: null,
    audioDurationMs: 0n,
    transcript: null,
    updatedAt: now,
    completedAt: null,
  };
}

export function isTerminal(status: TaskStatus): boolean {
  return (TERMINAL_STATUSES as readonly TaskStatus[]).includes(status);
}

/** The History over the store: owned reads, status changes, and waiting for a task to end. */
export class Tasks {
  /**
   * Pre-generated and cached downloads by task id. Kept by this process only: a format missing here is
   * rendered again from the transcript (downloads.ts), so nothing is lost when it is gone.
   */
  private readonly exportCache = new Map<string, Map<DownloadFormat, Buffer>>();

  constructor(private readonly store: Store) {}

  exportsOf(taskId: string): Map<DownloadFormat, Buffer> {
    let cache = this.exportCache.get(taskId);
    if (cache === undefined) this.exportCache.set(taskId, (cache = new Map()));
    return cache;
  }

  /** An owned task, or NOT_FOUND (another account's task is reported exactly like a missing one). */
  async get(account: Account, id: string): Promise<Task> {
    const task = await this.store.tasks.get(id);
    if (task === undefined || task.ownerId !== account.id) throw ApiError.notFound('transcription');
    return task;
  }

  /** Resolves when the task is terminal or `timeoutMs` passed, whichever first; never rejects. */
  waitForTerminal(taskId: string, timeoutMs: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      let settled = false;
      const done = (): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unsubscribe();
        signal?.removeEventListener('abort', done);
        resolve();
      };
      // Listen first, then read: a change between the two is heard either way.
      const unsubscribe = this.store.events.onTaskChanged(taskId, (row) => {
        if (isTerminal(row.status)) done();
      });
      const timer = setTimeout(done, timeoutMs);
      signal?.addEventListener('abort', done, { once: true });
      this.store.tasks.get(taskId).then((row) => {
        if (row === undefined || isTerminal(row.status)) done();
      }, done);
    });
  }

  /** Spec "GET /stt/transcriptions": page from 1, pageSize default 20 (max ours: 100). */
  async list(account: Account, query: URLSearchParams): Promise<Record<string, unknown>> {
    const v = new Violations();
    const page = positiveInt(v, 'page', query.get('page'), 1, Number.MAX_SAFE_INTEGER) ?? 1;
    const pageSize = positiveInt(v, 'pageSize', query.get('pageSize'), 1, LIMITS.historyPageSizeMax) ?? LIMITS.historyPageSizeDefault;
    v.throwIfAny();
    const { total, items } = await this.store.tasks.page(account.id, page, pageSize);
    return { page, pageSize, total, totalPage: Math.ceil(total / pageSize), items: items.map(historyItemView) };
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
