import { ERROR_STATUS, type ErrorCode, type MediaFailureReason } from './protocol.js';

/** One violation of a request rule; INPUT_INVALID reports all of them in details.violations. */
export interface Violation {
  /** Dotted path of the offending field, e.g. `options.maxSpeakerCount` or `exportOptions[1].format`. */
  readonly field: string;
  /** The rule that was broken, in words, e.g. `must be an integer from 1 to 32`. */
  readonly rule: string;
}

/**
 * The one error class of the service. Every failure a client can see is an ApiError: the router turns
 * it into the failure envelope `{ code: -1, message, errorCode, requestId, details? }` with the HTTP
 * status of protocol.ts ERROR_STATUS. Static factories name the common causes.
 */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  readonly status: number;
  /** Sent as the Retry-After header (seconds): when a refusal says "not now". */
  readonly retryAfterSec?: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfterSec?: number },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.status = ERROR_STATUS[code];
    if (options?.retryAfterSec !== undefined) this.retryAfterSec = options.retryAfterSec;
  }

  static invalid(violations: readonly Violation[]): ApiError {
    const message = violations.map((v) => `${v.field}: ${v.rule}`).join('; ');
    return new ApiError('INPUT_INVALID', message, { violations });
  }

  static invalidField(field: string, rule: string): ApiError {
    return ApiError.invalid([{ field, rule }]);
  }

  static notFound(what: string): ApiError {
    return new ApiError('NOT_FOUND', `${what} not found`);
  }

  static unauthorized(reason: 'missing' | 'unknown'): ApiError {
    return new ApiError(
      'UNAUTHORIZED',
      reason === 'missing' ? 'missing accessKey header' : 'unknown accessKey',
    );
  }

  static media(reason: MediaFailureReason, message: string, extra: Record<string, unknown> = {}): ApiError {
    return new ApiError('MEDIA_FETCH_FAILED', message, { reason, ...extra });
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError || (value instanceof Error && value.name === 'ApiError');
}

/** Collects violations so a validator reports every broken rule at once. */
export class Violations {
  readonly list: Violation[] = [];

  add(field: string, rule: string): void {
    this.list.push({ field, rule });
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  throwIfAny(): void {
    if (this.list.length > 0) throw ApiError.invalid(this.list);
  }
}
