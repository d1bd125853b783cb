import { SoundCloneError } from './base.js';
import { MEDIA_FAILURE_REASONS, errorCodeForStatus, type MediaFailureReason, type ServiceErrorCode } from '../protocol.js';

/**
 * Errors the service answered with (spec "Errors": every REST failure is the envelope with code -1 and
 * the error text in message). One base class keeps what every failure has: the service's errorCode as
 * `code`, the HTTP status, the request id and the envelope's details. Narrow subclasses carry a literal
 * `name` and the fields of their case. `apiErrorFromResponse` is the only way they are made from HTTP.
 */
export interface ApiErrorInit {
  readonly status: number;
  readonly requestId?: string | undefined;
  readonly details?: Readonly<Record<string, unknown>> | undefined;
  readonly cause?: unknown;
}

export class ApiError extends SoundCloneError {
  override name: string = 'ApiError';
  /** The service's errorCode (protocol.ts ERROR_STATUS), or HTTP_<status> when the failure had none. */
  declare readonly code: ServiceErrorCode | (string & {});
  readonly status: number;
  readonly requestId: string | undefined;
  readonly details: Readonly<Record<string, unknown>> | undefined;

  constructor(code: string, message: string, init: ApiErrorInit) {
    super(code, message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
  }
}

/** UNAUTHORIZED: missing or unknown accessKey (spec "Authentication"). */
export class AuthenticationError extends ApiError {
  override name = 'AuthenticationError' as const;
}

/** NOT_FOUND: also what another account's task, session or voice looks like (ownership never leaks). */
export class NotFoundError extends ApiError {
  override name = 'NotFoundError' as const;
}

/** IDEMPOTENCY_CONFLICT: the Idempotency-Key was already used with a different body. */
export class IdempotencyConflictError extends ApiError {
  override name = 'IdempotencyConflictError' as const;
}

/** One broken rule, `field` a dotted path such as `options.maxSpeakerCount`. */
export interface Violation {
  readonly field: string;
  readonly rule: string;
}

/** INPUT_INVALID: the server refused the request; `violations` lists every broken rule it found. */
export class InputInvalidError extends ApiError {
  override name = 'InputInvalidError' as const;
  readonly violations: readonly Violation[];

  constructor(code: string, message: string, init: ApiErrorInit) {
    super(code, message, init);
    this.violations = readViolations(init.details?.['violations']);
  }
}

/** MEDIA_FETCH_FAILED: spec "Errors" 4, details.reason and (when the remote host answered) sourceStatus. */
export class MediaFetchError extends ApiError {
  override name = 'MediaFetchError' as const;
  readonly reason: MediaFailureReason | (string & {}) | undefined;
  readonly sourceStatus: number | undefined;

  constructor(code: string, message: string, init: ApiErrorInit) {
    super(code, message, init);
    const reason = init.details?.['reason'];
    const sourceStatus = init.details?.['sourceStatus'];
    this.reason = typeof reason === 'string' ? reason : undefined;
    this.sourceStatus = typeof sourceStatus === 'number' ? sourceStatus : undefined;
  }

  /** True for one of the six reasons the spec lists. */
  get knownReason(): boolean {
    return (MEDIA_FAILURE_REASONS as readonly string[]).includes(this.reason ?? '');
  }
}

/** RATE_LIMITED (429). `retryAfterMs` from the Retry-After header, when it had one. */
export class RateLimitError extends ApiError {
  override name = 'RateLimitError' as const;
  readonly retryAfterMs: number | undefined;

  constructor(code: string, message: string, init: ApiErrorInit & { retryAfterMs?: number | undefined }) {
    super(code, message, init);
    this.retryAfterMs = init.retryAfterMs;
  }
}

/** INSUFFICIENT_CHARACTERS: the quote exceeds the account's available Characters. */
export class InsufficientCharactersError extends ApiError {
  override name = 'InsufficientCharactersError' as const;
}

/** QUOTA_EXCEEDED: a plan quota such as totalVoices is used up. */
export class QuotaExceededError extends ApiError {
  override name = 'QuotaExceededError' as const;
}

/** SERVICE_UNAVAILABLE (503): refused before processing; retried automatically. */
export class ServiceUnavailableError extends ApiError {
  override name = 'ServiceUnavailableError' as const;
}

/** INTERNAL or any other 5xx. */
export class ServerError extends ApiError {
  override name = 'ServerError' as const;
}

function readViolations(value: unknown): Violation[] {
  if (!Array.isArray(value)) return [];
  return value
    .filter((v): v is { field: unknown; rule: unknown } => v !== null && typeof v === 'object')
    .map((v) => ({ field: String(v.field ?? ''), rule: String(v.rule ?? '') }));
}

/** What the transport knows about one HTTP failure. */
export interface HttpFailure {
  readonly status: number;
  /** The parsed body, when it was JSON. */
  readonly body: unknown;
  readonly headers: { get(name: string): string | null };
  readonly requestIdHeader: string;
  readonly retryAfterMs?: number | undefined;
}

type ApiErrorClass = new (code: string, message: string, init: ApiErrorInit & { retryAfterMs?: number | undefined }) => ApiError;

const BY_CODE: Readonly<Record<string, ApiErrorClass>> = {
  UNAUTHORIZED: AuthenticationError,
  NOT_FOUND: NotFoundError,
  IDEMPOTENCY_CONFLICT: IdempotencyConflictError,
  INPUT_INVALID: InputInvalidError,
  MEDIA_FETCH_FAILED: MediaFetchError,
  RATE_LIMITED: RateLimitError,
  INSUFFICIENT_CHARACTERS: InsufficientCharactersError,
  QUOTA_EXCEEDED: QuotaExceededError,
  SERVICE_UNAVAILABLE: ServiceUnavailableError,
  INTERNAL: ServerError,
};

/**
 * The one factory from an HTTP failure (style guide "Errors"): keeps the status, the request id (from
 * the envelope, else the header) and the envelope's message; picks the subclass by errorCode, falling
 * back to the status when the body is not our envelope.
 */
export function apiErrorFromResponse(failure: HttpFailure): ApiError {
  const body = failure.body !== null && typeof failure.body === 'object' ? (failure.body as Record<string, unknown>) : undefined;
  const code = typeof body?.['errorCode'] === 'string' ? body['errorCode'] : errorCodeForStatus(failure.status);
  const message = typeof body?.['message'] === 'string' && body['message'] !== '' ? body['message'] : `HTTP ${failure.status}`;
  const requestId = typeof body?.['requestId'] === 'string' ? body['requestId'] : failure.headers.get(failure.requestIdHeader) ?? undefined;
  const detailsRaw = body?.['details'];
  const details = detailsRaw !== null && typeof detailsRaw === 'object' && !Array.isArray(detailsRaw) ? (detailsRaw as Record<string, unknown>) : undefined;
  const Class = BY_CODE[code] ?? (failure.status >= 500 ? ServerError : ApiError);
  return new Class(code, message, { status: failure.status, requestId, details, retryAfterMs: failure.retryAfterMs });
}
