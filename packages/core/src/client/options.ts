import { ValidationError } from '../errors/client-errors.js';
import { DEFAULT_BACKOFF } from '../http/retry-timing.js';
import type { Logger, TransportConfig } from '../http/transport.js';
import { isHttpUrl } from './validation/checks.js';

export interface SoundCloneOptions {
  /** The account's API key, sent as the accessKey header (spec "Authentication"). */
  readonly accessKey: string;
  /** The service's {base_url}, without the /sound_clone/api/v1 prefix. */
  readonly baseUrl: string;
  /** A fetch implementation; defaults to globalThis.fetch (Node 20+, browsers, workers). */
  readonly fetch?: typeof globalThis.fetch;
  /** Per-attempt timeout in ms (default 60,000). */
  readonly timeoutMs?: number;
  /** Retries after the first attempt (default 2; 0 disables). */
  readonly maxRetries?: number;
  /** Backoff tuning: first window, largest window, and the most a Retry-After may make a call wait. */
  readonly retryDelay?: { readonly baseMs?: number; readonly maxMs?: number; readonly maxRetryAfterMs?: number };
  /** Receives retry notices; the SDK never logs to the console. */
  readonly logger?: Logger;
  /** Random source for backoff jitter, [0, 1) (tests pin it). */
  readonly random?: () => number;
}

export const DEFAULTS = { timeoutMs: 60_000, maxRetries: 2, maxRetryAfterMs: 60_000 } as const;

/** Checks the options (every problem at once) and fills the defaults. */
export function resolveOptions(options: SoundCloneOptions): TransportConfig {
  const problems: Array<{ field: string; rule: string }> = [];
  const o = (options ?? {}) as Partial<SoundCloneOptions>;
  if (typeof o.accessKey !== 'string' || o.accessKey.trim() === '') problems.push({ field: 'accessKey', rule: 'is required and must be a non-empty string' });
  if (typeof o.baseUrl !== 'string' || !isHttpUrl(o.baseUrl)) problems.push({ field: 'baseUrl', rule: 'must be an absolute http or https URL' });
  const fetchImpl = o.fetch ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
  if (typeof fetchImpl !== 'function') problems.push({ field: 'fetch', rule: 'no global fetch in this runtime; pass one' });
  const nonNegative = (field: string, value: unknown, integer = false): void => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value))) {
      problems.push({ field, rule: integer ? 'must be a non-negative integer' : 'must be a non-negative finite number' });
    }
  };
  nonNegative('timeoutMs', o.timeoutMs);
  nonNegative('maxRetries', o.maxRetries, true);
  nonNegative('retryDelay.baseMs', o.retryDelay?.baseMs);
  nonNegative('retryDelay.maxMs', o.retryDelay?.maxMs);
  nonNegative('retryDelay.maxRetryAfterMs', o.retryDelay?.maxRetryAfterMs);
  if (o.random !== undefined && typeof o.random !== 'function') problems.push({ field: 'random', rule: 'must be a function' });
  if (problems.length > 0) throw new ValidationError(problems);
  return {
    accessKey: o.accessKey as string,
    baseUrl: o.baseUrl as string,
    fetch: fetchImpl as typeof globalThis.fetch,
    timeoutMs: o.timeoutMs ?? DEFAULTS.timeoutMs,
    maxRetries: o.maxRetries ?? DEFAULTS.maxRetries,
    backoff: { baseMs: o.retryDelay?.baseMs ?? DEFAULT_BACKOFF.baseMs, maxMs: o.retryDelay?.maxMs ?? DEFAULT_BACKOFF.maxMs },
    maxRetryAfterMs: o.retryDelay?.maxRetryAfterMs ?? DEFAULTS.maxRetryAfterMs,
    logger: o.logger,
    random: o.random,
  };
}
