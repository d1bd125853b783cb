import { SoundCloneError } from './base.js';
import type { Violation } from './api-errors.js';

/**
 * Failures found on the client's side of the wire: the network, the clock, the caller's signal, the
 * caller's input and the shape of what the service sent back. None of them is an ApiError (no HTTP
 * status exists), so a `catch` can tell "the service said no" from "we never got an answer".
 */

/** The request did not get an HTTP answer (refused, reset, DNS). `cause` is the platform's error. */
export class ConnectionError extends SoundCloneError {
  override name = 'ConnectionError' as const;
  declare readonly code: 'CONNECTION_FAILED';
  /**
   * False only when the platform says the connection was never made (ECONNREFUSED, DNS failure): then
   * even a non-idempotent call may be sent again. Otherwise the request may have arrived.
   */
  readonly requestMayHaveArrived: boolean;

  constructor(message: string, requestMayHaveArrived: boolean, options?: { cause?: unknown }) {
    super('CONNECTION_FAILED', message, options);
    this.requestMayHaveArrived = requestMayHaveArrived;
  }
}

/** One attempt took longer than its timeoutMs. */
export class RequestTimeoutError extends SoundCloneError {
  override name = 'RequestTimeoutError' as const;
  declare readonly code: 'REQUEST_TIMEOUT';
  readonly timeoutMs: number;

  constructor(timeoutMs: number, options?: { cause?: unknown }) {
    super('REQUEST_TIMEOUT', `the request took longer than ${timeoutMs} ms`, options);
    this.timeoutMs = timeoutMs;
  }
}

/** The caller's AbortSignal fired. `cause` is the signal's reason. */
export class AbortError extends SoundCloneError {
  override name = 'AbortError' as const;
  declare readonly code: 'ABORTED';

  constructor(reason?: unknown) {
    super('ABORTED', 'the operation was aborted', reason === undefined ? undefined : { cause: reason });
  }
}

/** Client-side validation before anything was sent; every violation at once. */
export class ValidationError extends SoundCloneError {
  override name = 'ValidationError' as const;
  declare readonly code: 'VALIDATION_FAILED';
  readonly violations: readonly Violation[];

  constructor(violations: readonly Violation[]) {
    super('VALIDATION_FAILED', violations.map((v) => `${v.field}: ${v.rule}`).join('; '));
    this.violations = violations;
  }
}

/**
 * `transcriptions.wait()` ran out of its budget. The task keeps running on the service (spec "Budget
 * ends first: unchanged; task keeps running"): this never means it failed. `task` is the last state
 * read, undefined when no read finished in time.
 */
export class WaitTimeoutError<Task = unknown> extends SoundCloneError {
  override name = 'WaitTimeoutError' as const;
  declare readonly code: 'WAIT_TIMEOUT';
  readonly transcriptionId: string;
  readonly task: Task | undefined;
  readonly timeoutMs: number;

  constructor(transcriptionId: string, timeoutMs: number, task: Task | undefined) {
    super('WAIT_TIMEOUT', `transcription ${transcriptionId} was not terminal after ${timeoutMs} ms; it keeps running`);
    this.transcriptionId = transcriptionId;
    this.timeoutMs = timeoutMs;
    this.task = task;
  }
}

export type ResponseFormatCode = 'MALFORMED_DECIMAL' | 'MALFORMED_RESPONSE';

/** The service answered with something the client cannot read; `path` names the field. */
export class ResponseFormatError extends SoundCloneError {
  override name = 'ResponseFormatError' as const;
  declare readonly code: ResponseFormatCode;
  readonly path: string;

  constructor(code: ResponseFormatCode, path: string, message: string, options?: { cause?: unknown }) {
    super(code, `${path}: ${message}`, options);
    this.path = path;
  }

  static malformedDecimal(path: string, value: unknown): ResponseFormatError {
    return new ResponseFormatError('MALFORMED_DECIMAL', path, `expected a non-negative decimal string, got ${describe(value)}`);
  }

  static malformed(path: string, expected: string, value: unknown): ResponseFormatError {
    return new ResponseFormatError('MALFORMED_RESPONSE', path, `expected ${expected}, got ${describe(value)}`);
  }
}

/**
 * `covers.delete()` sends batches of 500; one batch failed. `completed` holds the merged outcomes of the
 * batches that finished, `remainingIds` the ids not known to be processed, `cause` the batch's error.
 */
export class BatchIncompleteError<Result = unknown> extends SoundCloneError {
  override name = 'BatchIncompleteError' as const;
  declare readonly code: 'BATCH_INCOMPLETE';
  readonly completed: Result;
  readonly remainingIds: readonly string[];

  constructor(completed: Result, remainingIds: readonly string[], cause: unknown) {
    super('BATCH_INCOMPLETE', `a batch failed; ${remainingIds.length} ids were not processed`, { cause });
    this.completed = completed;
    this.remainingIds = remainingIds;
  }
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const text = typeof value === 'string' ? JSON.stringify(value) : typeof value === 'bigint' ? `${value}n` : JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
