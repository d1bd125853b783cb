import type {
  ApiError, AuthenticationError, IdempotencyConflictError, InputInvalidError, InsufficientCharactersError, MediaFetchError,
  NotFoundError, QuotaExceededError, RateLimitError, ServerError, ServiceUnavailableError,
} from './api-errors.js';
import type {
  AbortError, BatchIncompleteError, ConnectionError, RequestTimeoutError, ResponseFormatError, ValidationError, WaitTimeoutError,
} from './client-errors.js';
import type { WebhookVerificationError } from './webhook-errors.js';

/**
 * Type guards that match by `name` as well as by class, so an error thrown by a second copy of this
 * package (two bundles, a worker) is still recognised (style guide "Errors").
 */
const API_ERROR_NAMES = new Set([
  'ApiError', 'AuthenticationError', 'NotFoundError', 'IdempotencyConflictError', 'InputInvalidError', 'MediaFetchError',
  'RateLimitError', 'InsufficientCharactersError', 'QuotaExceededError', 'ServiceUnavailableError', 'ServerError',
]);

function named(value: unknown, name: string): boolean {
  return value instanceof Error && value.name === name && typeof (value as { code?: unknown }).code === 'string';
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof Error && API_ERROR_NAMES.has(value.name) && typeof (value as { status?: unknown }).status === 'number';
}

export const isAuthenticationError = (v: unknown): v is AuthenticationError => named(v, 'AuthenticationError');
export const isNotFoundError = (v: unknown): v is NotFoundError => named(v, 'NotFoundError');
export const isIdempotencyConflictError = (v: unknown): v is IdempotencyConflictError => named(v, 'IdempotencyConflictError');
export const isInputInvalidError = (v: unknown): v is InputInvalidError => named(v, 'InputInvalidError');
export const isMediaFetchError = (v: unknown): v is MediaFetchError => named(v, 'MediaFetchError');
export const isRateLimitError = (v: unknown): v is RateLimitError => named(v, 'RateLimitError');
export const isInsufficientCharactersError = (v: unknown): v is InsufficientCharactersError => named(v, 'InsufficientCharactersError');
export const isQuotaExceededError = (v: unknown): v is QuotaExceededError => named(v, 'QuotaExceededError');
export const isServiceUnavailableError = (v: unknown): v is ServiceUnavailableError => named(v, 'ServiceUnavailableError');
export const isServerError = (v: unknown): v is ServerError => named(v, 'ServerError');
export const isConnectionError = (v: unknown): v is ConnectionError => named(v, 'ConnectionError');
export const isRequestTimeoutError = (v: unknown): v is RequestTimeoutError => named(v, 'RequestTimeoutError');
export const isAbortError = (v: unknown): v is AbortError => named(v, 'AbortError');
export const isValidationError = (v: unknown): v is ValidationError => named(v, 'ValidationError');
export const isWaitTimeoutError = (v: unknown): v is WaitTimeoutError => named(v, 'WaitTimeoutError');
export const isResponseFormatError = (v: unknown): v is ResponseFormatError => named(v, 'ResponseFormatError');
export const isBatchIncompleteError = (v: unknown): v is BatchIncompleteError => named(v, 'BatchIncompleteError');
export const isWebhookVerificationError = (v: unknown): v is WebhookVerificationError => named(v, 'WebhookVerificationError');
