import {
  ApiError, AuthenticationError, IdempotencyConflictError, InputInvalidError, InsufficientCharactersError, MediaFetchError,
  NotFoundError, QuotaExceededError, RateLimitError, ServerError, ServiceUnavailableError,
} from './api-errors.js';
import { SoundCloneError } from './base.js';
import { CaptionError } from './caption-error.js';
import {
  AbortError, BatchIncompleteError, ConnectionError, RequestTimeoutError, ResponseFormatError, ValidationError, WaitTimeoutError,
} from './client-errors.js';
import { DspError } from './dsp-error.js';
import { RealtimeError } from './realtime-error.js';
import { WebhookVerificationError } from './webhook-errors.js';

/** An error class of this package (or a subclass of one), as isSoundCloneError() takes it. */
export type SoundCloneErrorClass<E extends SoundCloneError = SoundCloneError> = abstract new (...args: never[]) => E;

/**
 * Every class, keyed by the literal `name` its instances carry (the key is the class's own name, and
 * an object key survives minification where a class name may not). A second copy of this package
 * (two bundles, a worker, an iframe) throws instances of its own classes: they are recognised by
 * that name and a string `code`, and family membership follows this copy's classes.
 */
const CLASSES: Readonly<Record<string, SoundCloneErrorClass>> = {
  SoundCloneError, DspError, RealtimeError, CaptionError, WebhookVerificationError,
  ApiError, AuthenticationError, NotFoundError, IdempotencyConflictError, InputInvalidError, MediaFetchError, RateLimitError,
  InsufficientCharactersError, QuotaExceededError, ServiceUnavailableError, ServerError,
  ConnectionError, RequestTimeoutError, AbortError, ValidationError, WaitTimeoutError, ResponseFormatError, BatchIncompleteError,
};

/**
 * True when `value` is an error of this SDK and, given `kind`, one of that class or a subclass of it
 * (`isSoundCloneError(e, ApiError)` is true for a NotFoundError). Matches by class, or across package
 * copies and realms by `name` and a string `code` (an Error of any realm: its class is not this
 * copy's, so `instanceof` alone would miss it). Every code: docs/errors.md.
 *
 * ```ts
 * try { await client.stt.transcriptions.get(id); }
 * catch (e) { if (isSoundCloneError(e, NotFoundError)) return null; throw e; }
 * ```
 */
export function isSoundCloneError(value: unknown): value is SoundCloneError;
export function isSoundCloneError<E extends SoundCloneError>(value: unknown, kind: SoundCloneErrorClass<E>): value is E;
export function isSoundCloneError(value: unknown, kind: SoundCloneErrorClass = SoundCloneError): boolean {
  if (value instanceof kind) return true;
  if (!isErrorWithCode(value)) return false;
  const local = Object.hasOwn(CLASSES, value.name) ? CLASSES[value.name] : undefined;
  if (local !== undefined) return local === kind || local.prototype instanceof kind;
  // A name this copy does not know (a newer copy's class): only the family as a whole can be told.
  return kind === SoundCloneError && /^[A-Z][A-Za-z]*Error$/.test(value.name);
}

/** An Error from any realm (its [[ErrorData]] slot, which `instanceof` cannot see across realms) with a string code. */
function isErrorWithCode(value: unknown): value is Error & { code: string } {
  if (typeof value !== 'object' || value === null) return false;
  if (!(value instanceof Error) && Object.prototype.toString.call(value) !== '[object Error]') return false;
  return typeof (value as { name?: unknown }).name === 'string' && typeof (value as { code?: unknown }).code === 'string';
}
