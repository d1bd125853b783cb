import { apiErrorFromResponse, type ApiError } from '../errors/api-errors.js';
import { AbortError, ConnectionError, RequestTimeoutError, ResponseFormatError } from '../errors/client-errors.js';
import { ENVELOPE_CODE, HEADERS, RETRY_STATUSES } from '../protocol.js';
import { LinkedAbort, sleep, throwIfAborted } from '../util/abort.js';
import { checkCallOptions } from './call-options.js';
import { parseRetryAfterMs, retryDelayMs, type BackoffPolicy } from './retry-timing.js';

/**
 * The one place that talks HTTP. Every call goes through `request()`:
 *
 *   attempt ──ok──────────────────────────────────────────▶ result
 *      │ fail: ApiError | ConnectionError | RequestTimeoutError
 *      ├─ caller aborted ───────────────────────────────────▶ AbortError (at once)
 *      ├─ retry policy says no, or retries used up ─────────▶ that error
 *      └─ sleep(Retry-After or full-jitter backoff) ──▶ attempt again (same headers, same key)
 *
 * Retry policy per call (README "Retries"):
 *   'repeatable'  reads, set-style writes and creates with an Idempotency-Key: retried on connection
 *                 errors, timeouts, 408, 429 and 5xx.
 *   'once'        calls that create something without a key (voice create, design save, uploads):
 *                 retried only when the service cannot have acted on them: a connection that was never
 *                 made, or a status that means "refused before processing" (429, 503).
 */
export type RetryMode = 'repeatable' | 'once';

/** The client's `logger`: retry notices here; realtime sessions send it their records too (session-logger.ts). */
export interface Logger {
  debug?(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
  warn?(message: string, fields?: Record<string, unknown>): void;
  error?(message: string, fields?: Record<string, unknown>): void;
}

export interface TransportConfig {
  readonly accessKey: string;
  readonly baseUrl: string;
  readonly fetch: typeof globalThis.fetch;
  readonly timeoutMs: number;
  readonly maxRetries: number;
  readonly backoff: BackoffPolicy;
  readonly maxRetryAfterMs: number;
  readonly logger?: Logger | undefined;
  readonly random?: (() => number) | undefined;
  /** The largest response body read (default DEFAULT_MAX_RESPONSE_BYTES); a larger one is MALFORMED_RESPONSE. */
  readonly maxResponseBytes?: number | undefined;
}

/**
 * 64 MiB: many times the largest answer the service gives (the json view of a 4-hour transcript with
 * character alignments is some 15 MB), small enough that a broken or hostile server streaming an
 * endless body cannot exhaust the client's memory (the body is held as text and then parsed).
 */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

export type TransportEndpoint = Pick<TransportConfig, 'accessKey' | 'baseUrl' | 'logger'>;

/** Options every public call takes. */
export interface CallOptions {
  /** Aborts the call, including retries and waits; it rejects with AbortError. */
  readonly signal?: AbortSignal | undefined;
  /** Per-attempt timeout, overriding the client's timeoutMs. */
  readonly timeoutMs?: number | undefined;
  /** Overrides the client's maxRetries for this call (0 disables retries). */
  readonly maxRetries?: number | undefined;
}

export type Expect = 'envelope' | 'text' | 'bytes' | 'json';

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Full path including API_PREFIX (http/path.ts). */
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | undefined>>;
  /** JSON body; serialised once and reused on every attempt. */
  readonly json?: unknown;
  /** Raw body (multipart FormData, bytes); must be reusable across attempts. */
  readonly body?: BodyInit;
  readonly headers?: Readonly<Record<string, string>>;
  readonly retry: RetryMode;
  readonly expect?: Expect;
}

export interface HttpResult<T = unknown> {
  readonly data: T;
  readonly status: number;
  readonly requestId: string | undefined;
  readonly headers: Headers;
}

type Attempt =
  | { readonly ok: true; readonly result: HttpResult }
  | { readonly ok: false; readonly error: ApiError | ConnectionError | RequestTimeoutError | ResponseFormatError; readonly retryAfterMs?: number | undefined };

/** Platform error codes that mean no connection was ever made, so nothing can have arrived. */
const NEVER_CONNECTED = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export class Transport {
  constructor(private readonly config: TransportConfig) {}

  /**
   * The key and base URL, for the one caller that talks to the service outside HTTP: the realtime
   * socket authenticates with the same key and derives its URL from the same base.
   */
  get endpoint(): TransportEndpoint {
    return { accessKey: this.config.accessKey, baseUrl: this.config.baseUrl, ...(this.config.logger !== undefined ? { logger: this.config.logger } : {}) };
  }

  /** The client's per-attempt timeout (calls that hold the request open add their wait to it). */
  get defaultTimeoutMs(): number {
    return this.config.timeoutMs;
  }

  async request<T = unknown>(spec: RequestSpec, call: CallOptions = {}): Promise<HttpResult<T>> {
    checkCallOptions(call);
    call ??= {};
    const url = this.url(spec);
    const init = this.init(spec);
    const maxRetries = call.maxRetries ?? this.config.maxRetries;
    const timeoutMs = call.timeoutMs ?? this.config.timeoutMs;
    for (let retry = 0; ; retry++) {
      throwIfAborted(call.signal);
      const outcome = await this.attempt(url, init, spec.expect ?? 'envelope', call.signal, timeoutMs);
      if (outcome.ok) return outcome.result as HttpResult<T>;
      if (retry >= maxRetries || !retryable(outcome.error, spec.retry)) throw outcome.error;
      const delay = retryDelayMs({
        attempt: retry + 1,
        retryAfterMs: outcome.retryAfterMs,
        policy: this.config.backoff,
        maxRetryAfterMs: this.config.maxRetryAfterMs,
        ...(this.config.random ? { random: this.config.random } : {}),
      });
      this.#log('soundclone: retrying', { method: spec.method, path: spec.path, retry: retry + 1, delayMs: delay, code: outcome.error.code });
      await sleep(delay, call.signal);
    }
  }

  /** A retry notice; a logger that throws (or whose debug is not a function) never turns a retry into a failure. */
  #log(message: string, fields: Record<string, unknown>): void {
    const debug = this.config.logger?.debug;
    if (typeof debug !== 'function') return;
    try {
      debug.call(this.config.logger, message, fields);
    } catch {
      // The application's logger failed; the call goes on.
    }
  }

    private url(spec: RequestSpec): string {
    const url = new URL(this.config.baseUrl.replace(/\/+$/, '') + spec.path);
    for (const [key, value] of Object.entries(spec.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    return url.toString();
  }

  private init(spec: RequestSpec): RequestInit {
    const headers: Record<string, string> = { Accept: 'application/json', [HEADERS.accessKey]: this.config.accessKey, ...spec.headers };
    let body: BodyInit | undefined = spec.body;
    if (spec.json !== undefined) {
      body = JSON.stringify(spec.json);
      headers['Content-Type'] = 'application/json';
    }
    // Redirects are not followed: fetch would send the accessKey header on to whatever host the
    // Location names (only Authorization is dropped across origins), and a 307/308 would replay a
    // create there. A redirect is answered as an ApiError instead (redirectError below).
    return { method: spec.method, headers, redirect: 'manual', ...(body !== undefined ? { body } : {}) };
  }

  /** One attempt: send, read the whole body, classify. Never throws except AbortError for the caller. */
  private async attempt(url: string, init: RequestInit, expect: Expect, signal: AbortSignal | undefined, timeoutMs: number): Promise<Attempt> {
    const link = new LinkedAbort(signal, timeoutMs);
    try {
      const response = await this.config.fetch(url, { ...init, signal: link.signal });
      const requestId = response.headers.get(HEADERS.requestId) ?? undefined;
      if (isRedirect(response)) return { ok: false, error: redirectError(response, url) };
      const maxBytes = this.config.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
      if (response.ok) {
        const data = await readSuccess(response, expect, maxBytes);
        return { ok: true, result: { data, status: response.status, requestId, headers: response.headers } };
      }
      const text = decodeUtf8(await readBounded(response, maxBytes));
      const retryAfterMs = parseRetryAfterMs(response.headers.get(HEADERS.retryAfter), Date.now());
      const error = apiErrorFromResponse({ status: response.status, body: tryJson(text), headers: response.headers, requestIdHeader: HEADERS.requestId, retryAfterMs });
      return { ok: false, error, retryAfterMs };
    } catch (caught) {
      if (link.parentAborted) throw new AbortError(signal?.reason);
      if (caught instanceof ResponseFormatError) return { ok: false, error: caught };
      if (link.timedOut) return { ok: false, error: new RequestTimeoutError(timeoutMs, { cause: caught }) };
      return { ok: false, error: new ConnectionError(`${init.method ?? 'GET'} ${redactedUrl(url)} failed: ${describeNetworkError(caught)}`, !neverConnected(caught), { cause: caught }) };
    } finally {
      link.dispose();
    }
  }
}

async function readSuccess(response: Response, expect: Expect, maxBytes: number): Promise<unknown> {
  const bytes = await readBounded(response, maxBytes);
  if (expect === 'bytes') return bytes;
  const text = decodeUtf8(bytes);
  if (expect === 'text') return text;
  const parsed = tryJson(text);
  if (parsed === undefined) throw ResponseFormatError.malformed('body', 'JSON', text.slice(0, 40));
  if (expect === 'json') return parsed;
  // Spec "REST response envelope": code 1 on success; data present where the call returns data.
  if (parsed === null || typeof parsed !== 'object' || (parsed as { code?: unknown }).code !== ENVELOPE_CODE.success) {
    throw ResponseFormatError.malformed('body.code', `the success envelope (code ${ENVELOPE_CODE.success})`, (parsed as { code?: unknown } | null)?.code);
  }
  return (parsed as { data?: unknown }).data;
}

/**
 * The whole body, refused past `maxBytes` (by its Content-Length before reading, else as it streams in):
 * the stream is cancelled, so the connection stops delivering it.
 */
async function readBounded(response: Response, maxBytes: number): Promise<Uint8Array> {
  const tooLarge = (): ResponseFormatError =>
    new ResponseFormatError('MALFORMED_RESPONSE', 'body', `larger than the client's maxResponseBytes (${maxBytes} bytes)`);
  const declared = Number(response.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge();
  }
  if (response.body === null) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const take = (value: Uint8Array): boolean => {
    total += value.byteLength;
    chunks.push(value);
    return total <= maxBytes;
  };
  const body = response.body as unknown as Partial<ReadableStream<Uint8Array>> & Partial<AsyncIterable<Uint8Array>> & { destroy?: () => void };
  if (typeof body.getReader === 'function') {
    const reader = body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!take(value)) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
    }
  } else if (typeof body[Symbol.asyncIterator] === 'function') {
    // A user-supplied fetch whose body is a Node stream (node-fetch 2): read as it comes, still bounded.
    for await (const value of body as AsyncIterable<Uint8Array>) {
      if (!take(value instanceof Uint8Array ? value : new TextEncoder().encode(String(value)))) {
        body.destroy?.();
        throw tooLarge();
      }
    }
  } else if (!take(new Uint8Array(await response.arrayBuffer()))) throw tooLarge();
  // One array of its own, as arrayBuffer() gave: a caller may view `bytes.buffer` whole.
  const only = chunks.length === 1 ? (chunks[0] as Uint8Array) : undefined;
  if (only !== undefined && only.byteOffset === 0 && only.byteLength === only.buffer.byteLength) return only;
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

const utf8 = new TextDecoder();

/** As Response.text(): UTF-8, a leading BOM dropped, malformed sequences replaced. */
function decodeUtf8(bytes: Uint8Array): string {
  return utf8.decode(bytes);
}

/** A 3xx answer, or a browser's opaque one for `redirect: 'manual'` (status 0, no headers). */
function isRedirect(response: Response): boolean {
  return response.type === 'opaqueredirect' || (response.status >= 300 && response.status < 400);
}

/**
 * ApiError `HTTP_<status>` (docs/errors.md: a failure without an errorCode), not retried. The message
 * names where the service pointed, so the caller can fix its baseUrl; the body is not read.
 */
function redirectError(response: Response, url: string): ApiError {
  const location = response.headers.get('location');
  const target = location === null ? undefined : safeResolve(location, url);
  const message =
    `the service answered ${response.status === 0 ? 'with a redirect' : `${response.status}, a redirect`}` +
    (target !== undefined ? ` to ${redactedUrl(target)}` : '') +
    '; the SDK does not follow redirects (the access key would go along): set baseUrl to the address that answers';
  void response.body?.cancel().catch(() => undefined);
  return apiErrorFromResponse({
    status: response.status,
    body: { message, ...(target !== undefined ? { details: { location: redactedUrl(target) } } : {}) },
    headers: response.headers,
    requestIdHeader: HEADERS.requestId,
  });
}

function safeResolve(location: string, base: string): string | undefined {
  try {
    return new URL(location, base).toString();
  } catch {
    return undefined;
  }
}

function tryJson(text: string): unknown {
  if (text.trim() === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function retryable(error: ApiError | ConnectionError | RequestTimeoutError | ResponseFormatError, mode: RetryMode): boolean {
  if (error instanceof ResponseFormatError) return false;
  if (error instanceof ConnectionError) return mode === 'repeatable' || !error.requestMayHaveArrived;
  if (error instanceof RequestTimeoutError) return mode === 'repeatable';
  const statuses = mode === 'repeatable' ? RETRY_STATUSES.retryable : RETRY_STATUSES.notProcessed;
  return statuses.includes(error.status);
}

function neverConnected(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e !== null && typeof e === 'object' && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && NEVER_CONNECTED.has(code)) return true;
  }
  return false;
}

/**
 * The URL as an error message may show it: scheme, host, port and path only. The access key travels in
 * a header and never appears; user info, the query (which may carry tokens or file names) and the
 * fragment are dropped.
 */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { message?: unknown; code?: unknown } } | null)?.cause;
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : undefined;
  const message = error instanceof Error ? error.message : String(error);
  return detail !== undefined ? `${message} (${detail})` : message;
}
