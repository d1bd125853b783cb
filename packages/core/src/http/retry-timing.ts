import { backoffWindowMs, fullJitterMs } from '../util/backoff.js';

/**
 * Retry timing, pure (style guide "REST": a separately tested module). No timers, no clock of its own:
 * callers pass `now` and `random`, so tests pin both.
 *
 * Backoff is capped exponential with FULL jitter: delay = random() * min(maxMs, baseMs * 2^(attempt-1)).
 * Full jitter spreads a crowd of clients that failed together over the whole window instead of a
 * band around the mean, which is what stops them from retrying in lockstep. The formula is
 * util/backoff.ts, shared with socket reconnects; attempts here count from 1.
 */
export interface BackoffPolicy {
  /** Upper bound of the first retry's window (attempt 1). */
  readonly baseMs: number;
  /** Upper bound of any window. */
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 500, maxMs: 8_000 };

/** Window ceiling for a 1-based retry attempt, without jitter. */
export function backoffCeilingMs(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (!Number.isInteger(attempt) || attempt < 1) throw new RangeError(`attempt must be an integer >= 1, got ${attempt}`);
  return backoffWindowMs(attempt - 1, policy.baseMs, policy.maxMs);
}

/** Jittered delay for a 1-based retry attempt; `random` returns [0, 1). */
export function backoffDelayMs(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  return fullJitterMs(backoffCeilingMs(attempt, policy), random);
}

/**
 * Reads a Retry-After value: delta-seconds (`"3"`, `"0"`) or an HTTP-date. Returns milliseconds from
 * `nowMs` (a past date gives 0), or undefined when absent or unreadable. Fractional seconds, as some
 * services send, are accepted.
 */
export function parseRetryAfterMs(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (text === '') return undefined;
  if (/^[0-9]+(?:\.[0-9]+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP-date always names a weekday and a time; plain numbers with signs etc. are refused above.
  if (!/[A-Za-z]{3}/.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

export interface RetryDelayInput {
  /** 1-based number of the retry about to happen. */
  readonly attempt: number;
  /** Retry-After already parsed to ms, when the failure had one. */
  readonly retryAfterMs?: number | undefined;
  readonly policy?: BackoffPolicy;
  /** The most a Retry-After may make us wait. */
  readonly maxRetryAfterMs?: number;
  readonly random?: () => number;
}

/**
 * The delay before a retry: the service's Retry-After when it gave one (capped at maxRetryAfterMs,
 * default 60 s, so a hostile or broken header cannot park a call for an hour), else jittered backoff.
 */
export function retryDelayMs(input: RetryDelayInput): number {
  const cap = input.maxRetryAfterMs ?? 60_000;
  if (input.retryAfterMs !== undefined && Number.isFinite(input.retryAfterMs) && input.retryAfterMs >= 0) {
    return Math.min(input.retryAfterMs, cap);
  }
  return backoffDelayMs(input.attempt, input.policy ?? DEFAULT_BACKOFF, input.random ?? Math.random);
}
