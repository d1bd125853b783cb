import { ValidationError } from '../errors/client-errors.js';
import { DEFAULT_BACKOFF } from '../http/retry-timing.js';
import type { Logger, TransportConfig } from '../http/transport.js';
import { isHttpUrl } from './validation/checks.js';
import { API_PREFIX } from '../protocol.js';
import type { WebSocketConstructor } from '../realtime/socket/transport.js';

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
  /**
   * The largest response body the client reads, in bytes (default 64 MiB); a larger one is a
   * ResponseFormatError MALFORMED_RESPONSE instead of exhausting memory. Raise it for very large downloads.
   */
  readonly maxResponseBytes?: number;
  /**
   * The WebSocket implementation of this client's realtime sessions (connect, attach) that name none of
   * their own. Default: `ws` in Node (an optional peer dependency), globalThis.WebSocket elsewhere.
   */
  readonly WebSocket?: WebSocketConstructor;
}

export const DEFAULTS = { timeoutMs: 60_000, maxRetries: 2, maxRetryAfterMs: 60_000 } as const;

/** Every option the constructor reads: a misspelt one (`apiKey`, `timeout`) is refused, never ignored. */
const KNOWN_OPTIONS: ReadonlySet<string> = new Set(['accessKey', 'baseUrl', 'fetch', 'timeoutMs', 'maxRetries', 'retryDelay', 'logger', 'random', 'maxResponseBytes', 'WebSocket']);
const KNOWN_RETRY_DELAY: ReadonlySet<string> = new Set(['baseMs', 'maxMs', 'maxRetryAfterMs']);

/** Checks the options (every problem at once) and fills the defaults. */
export function resolveOptions(options: SoundCloneOptions): TransportConfig {
  const problems: Array<{ field: string; rule: string }> = [];
  const o = (options !== null && typeof options === 'object' ? options : {}) as Partial<SoundCloneOptions>;
  for (const key of Object.keys(o)) if (!KNOWN_OPTIONS.has(key)) problems.push({ field: key, rule: 'is not a known option' });
  if (typeof o.accessKey !== 'string' || o.accessKey.trim() === '') problems.push({ field: 'accessKey', rule: 'is required and must be a non-empty string' });
  // It travels as a header value: a newline or a non-ASCII character would fail every call as a
  // "connection" error (fetch refuses the header) instead of saying what is wrong.
  else if (!/^[\x21-\x7e]+$/.test(o.accessKey)) problems.push({ field: 'accessKey', rule: 'must be visible ASCII characters (no spaces, line breaks or other characters a header cannot carry)' });
  if (typeof o.baseUrl !== 'string' || !isHttpUrl(o.baseUrl)) problems.push({ field: 'baseUrl', rule: 'must be an absolute http or https URL' });
  else {
    // Paths are appended to the base as text: a query or fragment would swallow them, and fetch
    // refuses user info in a URL.
    const base = new URL(o.baseUrl);
    if (base.search !== '' || base.hash !== '' || o.baseUrl.includes('?') || o.baseUrl.includes('#')) problems.push({ field: 'baseUrl', rule: 'must not have a query or fragment' });
    // The client adds the API prefix itself: a base that already ends with it would double it (404s).
    if (base.pathname.replace(/\/+$/, '').endsWith(API_PREFIX)) problems.push({ field: 'baseUrl', rule: `must be the service's base URL without ${API_PREFIX} (the client adds it)` });
    if (base.username !== '' || base.password !== '') problems.push({ field: 'baseUrl', rule: 'must not carry user info (user:password@): the access key authenticates' });
  }
  const fetchImpl = o.fetch ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
  if (o.fetch !== undefined && typeof o.fetch !== 'function') problems.push({ field: 'fetch', rule: 'must be a function' });
  else if (typeof fetchImpl !== 'function') problems.push({ field: 'fetch', rule: 'no global fetch in this runtime; pass one' });
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
  if (o.maxResponseBytes !== undefined && !(typeof o.maxResponseBytes === 'number' && Number.isSafeInteger(o.maxResponseBytes) && o.maxResponseBytes >= 1)) {
    problems.push({ field: 'maxResponseBytes', rule: 'must be a positive integer' });
  }
  if (o.random !== undefined && typeof o.random !== 'function') problems.push({ field: 'random', rule: 'must be a function' });
  if (o.WebSocket !== undefined && typeof o.WebSocket !== 'function') problems.push({ field: 'WebSocket', rule: 'must be a WebSocket constructor' });
  if (o.retryDelay !== undefined) {
    if (o.retryDelay === null || typeof o.retryDelay !== 'object') problems.push({ field: 'retryDelay', rule: 'must be an object' });
    else for (const key of Object.keys(o.retryDelay)) if (!KNOWN_RETRY_DELAY.has(key)) problems.push({ field: `retryDelay.${key}`, rule: 'is not a known option' });
  }
  if (o.logger !== undefined && (o.logger === null || (typeof o.logger !== 'object' && typeof o.logger !== 'function'))) problems.push({ field: 'logger', rule: 'must be a logger object (debug/info/warn/error methods)' });
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
    maxResponseBytes: o.maxResponseBytes,
  };
}
