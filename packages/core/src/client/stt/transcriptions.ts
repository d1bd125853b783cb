import { ValidationError, WaitTimeoutError } from '../../errors/client-errors.js';
import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { callOptionViolations, checkCallOptions } from '../../http/call-options.js';
import { HEADERS, LIMITS, PATHS } from '../../protocol.js';
import type {
  CreateTranscriptionParams, CreatedTranscription, HistoryItem, HistoryListParams, HistoryPage, TranscriptionTask,
} from '../../types/transcription.js';
import { LinkedAbort } from '../../util/abort.js';
import { newIdempotencyKey } from '../../util/ids.js';
import { string } from '../../util/read.js';
import { PageRequest } from '../pagination.js';
import { parseHistoryPage, parseTask } from '../../parse/transcription.js';
import { Checks, requireParams } from '../validation/checks.js';
import { pollTask, type PollOptions } from './task-polling.js';
import { transcriptionChecks } from './transcription-options.js';

export interface CreateTranscriptionOptions extends CallOptions {
  /**
   * Sent as Idempotency-Key. Default: a random UUID made once for this call and reused on every retry.
   * Pass your own to make a create safe across process restarts.
   */
  readonly idempotencyKey?: string;
}

export interface WaitOptions extends PollOptions {
  readonly signal?: AbortSignal;
  /** Wait budget; when it ends first, WaitTimeoutError (the task keeps running). Default: no budget. */
  readonly timeoutMs?: number;
  /** Per-read timeout, as CallOptions.timeoutMs. */
  readonly requestTimeoutMs?: number;
}

export interface WatchOptions extends PollOptions {
  /** Stops polling: the loop then throws AbortError (the read in flight is aborted). */
  readonly signal?: AbortSignal;
  /** Per-read timeout, as CallOptions.timeoutMs. */
  readonly requestTimeoutMs?: number;
}

/**
 * Batch transcriptions and the shared History (spec "POST /stt/transcriptions", "GET
 * /stt/transcriptions", "GET /stt/transcriptions/{transcriptionId}").
 *
 * create  validates first (client/stt/transcription-options.ts), then sends with one Idempotency-Key
 *         for every attempt, so retries after a dropped connection or a 503 give one task and one
 *         reservation (spec "Idempotency").
 * wait    polls until terminal; its budget running out is WaitTimeoutError, never a failure.
 * watch   status changes as an async iterable; leaving the loop or aborting stops polling at once
 *         (an rxjs Observable of it: watchTranscription in @soundclone/core/rx).
 */
export class Transcriptions {
  constructor(private readonly transport: Transport) {}

  async create(params: CreateTranscriptionParams, options: CreateTranscriptionOptions = {}): Promise<CreatedTranscription> {
    if (params === undefined) throw new ValidationError([{ field: 'params', rule: 'is required: an object with uploadId or mediaUrl' }]);
    requireParams(params);
    options = requireParams(options, 'options');
    const checks = transcriptionChecks(params);
    const key = options.idempotencyKey ?? newIdempotencyKey();
    checkIdempotencyKey(checks, key);
    checks.throwIfAny();
    // A create that waits holds the request open for up to waitTimeoutMs; the attempt timeout allows it.
    const waitMs = params.waitForCompletion === true ? (params.waitTimeoutMs ?? LIMITS.waitTimeoutMsMax) : 0;
    const timeoutMs = options.timeoutMs ?? this.transport.defaultTimeoutMs + waitMs;
    const result = await this.transport.request(
      { method: 'POST', path: buildPath(PATHS.transcriptions), json: params, headers: { [HEADERS.idempotencyKey]: key }, retry: 'repeatable' },
      { ...options, timeoutMs },
    );
    const task = parseTask(result.data);
    const requestId = string((result.data as Record<string, unknown>)['requestId'] ?? result.requestId, 'data.requestId');
    return { ...task, requestId, replayed: result.headers.get(HEADERS.idempotentReplayed) === 'true', idempotencyKey: key };
  }

  async get(transcriptionId: string, call?: CallOptions): Promise<TranscriptionTask> {
    requireId('transcriptionId', transcriptionId);
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.transcription, { transcriptionId }), retry: 'repeatable' }, call);
    return parseTask(data);
  }

  /** Awaitable (one page) and async-iterable (every History item, batch and real-time together). */
  list(params: HistoryListParams = {}, call?: CallOptions): PageRequest<HistoryPage, HistoryItem> {
    params = requireParams(params);
    checkCallOptions(call);
    const c = new Checks();
    c.integer('page', params.page, 1);
    c.integer('pageSize', params.pageSize, 1, LIMITS.historyPageSizeMax);
    c.throwIfAny();
    const fetch = async (page: number | undefined): Promise<HistoryPage> => {
      const query = { page: page ?? params.page, pageSize: params.pageSize };
      const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.transcriptions), query, retry: 'repeatable' }, call);
      return parseHistoryPage(data);
    };
    return new PageRequest<HistoryPage, HistoryItem>({
      fetch: (cursor) => fetch(cursor === undefined ? undefined : Number(cursor)),
      items: (page) => page.items,
      next: (page) => (page.page < page.totalPage ? page.page + 1 : undefined),
    });
  }

  /** Resolves with the terminal task (COMPLETED, PARTIAL or FAILED: a FAILED task resolves, see task.error). */
  async wait(transcriptionId: string, options: WaitOptions = {}): Promise<TranscriptionTask> {
    requireId('transcriptionId', transcriptionId);
    options = requireParams(options, 'options');
    checkWaitOptions(options, true);
    const budget = new LinkedAbort(options.signal, options.timeoutMs);
    let last: TranscriptionTask | undefined;
    try {
      const read = (signal: AbortSignal): Promise<TranscriptionTask> => this.get(transcriptionId, { signal, timeoutMs: options.requestTimeoutMs });
      for await (const task of pollTask(read, budget.signal, options)) last = task;
      return last as TranscriptionTask;
    } catch (error) {
      if (budget.timedOut && !budget.parentAborted) throw new WaitTimeoutError<TranscriptionTask>(transcriptionId, options.timeoutMs ?? 0, last);
      throw error;
    } finally {
      budget.dispose();
    }
  }

  /**
   * The task each time its status changes (the first read included), ending after the terminal
   * status; a failed read throws from the loop. Polling starts with the loop and stops when it ends:
   * at the terminal status, on `break` or `return`, or when `signal` aborts (the read or pause in
   * flight is cut short; the loop throws AbortError).
   *
   * ```ts
   * for await (const task of client.stt.transcriptions.watch(id)) console.log(task.status);
   * ```
   */
  watch(transcriptionId: string, options: WatchOptions = {}): AsyncIterable<TranscriptionTask> {
    requireId('transcriptionId', transcriptionId);
    options = requireParams(options, 'options');
    checkWaitOptions(options, false);
    return { [Symbol.asyncIterator]: () => this.#changes(transcriptionId, options) };
  }

  async *#changes(transcriptionId: string, options: WatchOptions): AsyncGenerator<TranscriptionTask, void, undefined> {
    // Its own controller: leaving the loop early aborts the read in flight, not the caller's signal.
    const stop = new LinkedAbort(options.signal);
    const read = (signal: AbortSignal): Promise<TranscriptionTask> => this.get(transcriptionId, { signal, timeoutMs: options.requestTimeoutMs });
    let status: string | undefined;
    try {
      for await (const task of pollTask(read, stop.signal, options)) {
        if (task.status === status) continue;
        status = task.status;
        yield task;
      }
    } finally {
      stop.controller.abort();
      stop.dispose();
    }
  }
}

/**
 * wait()/watch() options: a NaN, negative or zero poll interval would poll in a tight loop, a NaN
 * budget would silently mean none, and a non-signal would fail as a TypeError.
 */
function checkWaitOptions(options: WaitOptions, withBudget: boolean): void {
  const c = new Checks();
  const positive = (field: string, value: unknown): void => {
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value > 0)) c.add(field, 'must be a positive finite number of milliseconds');
  };
  positive('pollIntervalMs', options.pollIntervalMs);
  positive('maxPollIntervalMs', options.maxPollIntervalMs);
  if (withBudget && options.timeoutMs !== undefined && !(typeof options.timeoutMs === 'number' && !Number.isNaN(options.timeoutMs) && options.timeoutMs >= 0)) {
    c.add('timeoutMs', 'must be a non-negative number of milliseconds (Infinity: no budget)');
  }
  for (const v of callOptionViolations({ signal: options.signal, timeoutMs: options.requestTimeoutMs })) c.add(v.field === 'timeoutMs' ? 'requestTimeoutMs' : v.field, v.rule);
  c.throwIfAny();
}

/** Ours: 1 to 255 visible ASCII characters (protocol.ts LIMITS.idempotencyKeyMaxChars). */
export function checkIdempotencyKey(c: Checks, key: unknown): void {
  if (typeof key !== 'string' || key.length === 0 || key.length > LIMITS.idempotencyKeyMaxChars || !/^[\x21-\x7e]+$/.test(key)) {
    c.add('idempotencyKey', `must be 1 to ${LIMITS.idempotencyKeyMaxChars} visible ASCII characters`);
  }
}

export function requireId(field: string, value: unknown): void {
  if (typeof value !== 'string' || value === '') throw new ValidationError([{ field, rule: 'is required and must be a non-empty string' }]);
}
