import { ERROR_STATUS, type MediaFailureReason, type ServiceErrorCode } from '@soundclone/core/internal';

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
    readonly code: ServiceErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    options?: { cause?: unknown; retryAfterSec?: number },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.status = ERROR_STATUS[code];
    if (options?.retryAfterSec !== undefined) this.retryAfterSec = options.retryAfterSec;
  }

  /**
   * INPUT_INVALID with at most MAX_REPORTED_VIOLATIONS violations, so a hostile body cannot make the
   * error larger than the request. `details.omittedViolations` counts the further ones found (`omitted`
   * adds those a collector already left out); `details.checkingStopped: true` says some array elements
   * were not checked at all once the report was full.
   */
  static invalid(violations: readonly Violation[], omitted = 0, checkingStopped = false): ApiError {
    const reported = violations.slice(0, MAX_REPORTED_VIOLATIONS);
    const more = omitted + violations.length - reported.length;
    const tail = more > 0 ? `; and ${more} more` : checkingStopped ? '; and possibly more (checking stopped)' : '';
    const message = reported.map((v) => `${v.field}: ${v.rule}`).join('; ') + tail;
    return new ApiError('INPUT_INVALID', message, {
      violations: reported,
      ...(more > 0 ? { omittedViolations: more } : {}),
      ...(checkingStopped ? { checkingStopped: true } : {}),
    });
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

/** Ours: the most violations one INPUT_INVALID lists; the rest are only counted. */
export const MAX_REPORTED_VIOLATIONS = 20;

/**
 * Collects violations so a validator reports every broken rule at once, up to MAX_REPORTED_VIOLATIONS;
 * past that it only counts, and `full` tells array loops they may stop checking elements.
 */
export class Violations {
  readonly list: Violation[] = [];
  /** Every violation added, kept or not. */
  count = 0;

  add(field: string, rule: string): void {
    this.count++;
    if (this.list.length < MAX_REPORTED_VIOLATIONS) this.list.push({ field, rule });
  }

  get empty(): boolean {
    return this.count === 0;
  }

  /** Set by a loop that stopped checking elements because the report was full. */
  checkingStopped = false;

  /** True once the report holds as many violations as it will list. */
  get full(): boolean {
    return this.list.length >= MAX_REPORTED_VIOLATIONS;
  }

  /** For array loops: true (and remembered) when the report is full and the loop should stop. */
  stopChecking(): boolean {
    if (this.full) this.checkingStopped = true;
    return this.checkingStopped;
  }

  throwIfAny(): void {
    if (this.count > 0) throw ApiError.invalid(this.list, this.count - this.list.length, this.checkingStopped);
  }
}
