import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { HEADERS, LANGUAGE_HINTS, LIMITS, PATHS } from '../../protocol.js';
import type { CreateRealtimeSessionParams, RealtimeSession, RealtimeSessionCreated } from '../../types/realtime.js';
import { toDecimalString, type CountInput } from '../../util/decimal.js';
import { newIdempotencyKey } from '../../util/ids.js';
import { object, string } from '../../util/read.js';
import { parseSession } from '../../parse/realtime.js';
import { Checks, isHttpUrl, isPlainObject, requireParams } from '../validation/checks.js';
import { isAbortSignalLike } from '../../http/call-options.js';
import { RealtimeError } from '../../errors/realtime-error.js';
import { AbortError } from '../../errors/client-errors.js';
import { isSoundCloneError } from '../../errors/guards.js';
import { RealtimeSocketSession } from '../../realtime/realtime-session.js';
import { socketUrlFor } from '../../realtime/socket/address.js';
import { resolveWebSocket, type WebSocketConstructor } from '../../realtime/socket/transport.js';
import type { RealtimeSocketOptions } from '../../realtime/options/options.js';
import type { SessionLogger } from '../../realtime/session-logger.js';
import { checkIdempotencyKey, requireId, type CreateTranscriptionOptions } from './transcriptions.js';

/**
 * Real-time sessions over REST (spec "GET /stt/realtime/sessions/{sessionId}", "pause", "finish";
 * creation is ours, with an Idempotency-Key like a batch create). The audio socket is in src/realtime.
 *
 * capturedSamples is a count: pass a bigint, a safe integer or a decimal string; it is always sent
 * as a decimal string, "the contract form" (spec "finish"). pause and finish are retried like reads:
 * a repeated finish "returns the same task and never charges twice" (spec "finish" 2).
 */
export class Realtime {
  constructor(
    private readonly transport: Transport,
    private readonly defaults: RealtimeDefaults = {},
  ) {}

  async create(params: CreateRealtimeSessionParams = {}, options: CreateTranscriptionOptions = {}): Promise<RealtimeSessionCreated> {
    params = requireParams(params);
    options = requireParams(options, 'options');
    const c = new Checks();
    c.string('title', params.title, LIMITS.titleMaxChars, { allowEmpty: true });
    c.oneOf('languageHint', params.languageHint, LANGUAGE_HINTS);
    if (params.options !== undefined && !isPlainObject(params.options)) c.add('options', 'must be an object');
    if (isPlainObject(params.options) && 'matchKnownSpeakers' in params.options) c.add('options.matchKnownSpeakers', 'is unavailable and must not be requested (rule 5)');
    const key = options.idempotencyKey ?? newIdempotencyKey();
    checkIdempotencyKey(c, key);
    c.throwIfAny();
    const result = await this.transport.request(
      { method: 'POST', path: buildPath(PATHS.realtimeSessions), json: params, headers: { [HEADERS.idempotencyKey]: key }, retry: 'repeatable' },
      options,
    );
    const socket = object(object(result.data, 'data')['socket'], 'data.socket');
    return {
      ...parseSession(result.data),
      socket: { url: string(socket['url'], 'data.socket.url'), token: string(socket['token'], 'data.socket.token'), expiresAt: string(socket['expiresAt'], 'data.socket.expiresAt') },
      replayed: result.headers.get(HEADERS.idempotentReplayed) === 'true',
      idempotencyKey: key,
    };
  }

  /**
   * Creates a session over REST (one Idempotency-Key, reused on retries) and opens its socket.
   * Resolves once the server said session.ready; `signal` also ends the session later. Without a
   * WebSocket (Node 20 without `ws`) it rejects with `REALTIME_NO_WEBSOCKET` before anything is sent.
   */
  async connect(params: RealtimeConnectParams = {}): Promise<RealtimeSocketSession> {
    params = requireParams(params);
    // Checked before the session is created: a bad socketUrl or signal found only at the socket would
    // leave a created session holding one of the account's slots until its recovery window passes.
    checkSocketParams(params.socketUrl, params.signal);
    const { title, languageHint, options, idempotencyKey, socketUrl, ...session } = params;
    // A runtime with no WebSocket (Node 20 without `ws`) fails here, before a session is created on
    // the server that nothing could stream into. start() resolves it again (the import is cached).
    await resolveWebSocket(this.#webSocket(session).WebSocket);
    // The session's own options (sampleRate, channels, bufferMs, ackWatch, policy options) are checked by its
    // constructor, which has no side effects: build one first, so a refused option throws before a
    // session exists on the server (it would hold one of the account's slots and a History row until
    // its recovery window passed). The logger is left out: this one is never used.
    const { logger: _unusedLogger, ...checked } = session;
    new RealtimeSocketSession({ ...checked, sessionId: 'rs_unchecked', socketUrl: socketUrl ?? 'ws://127.0.0.1/', accessKey: this.transport.endpoint.accessKey });
    // The session's signal aborting while it is created is the session's abort (REALTIME_ABORTED,
    // docs/errors.md), as it is once the socket opens, not the REST call's ABORTED.
    if (session.signal?.aborted === true) throw RealtimeError.aborted('connect', session.signal.reason);
    const created = await this.create(
      { ...(title !== undefined ? { title } : {}), ...(languageHint !== undefined ? { languageHint } : {}), ...(options !== undefined ? { options } : {}) },
      { ...(idempotencyKey !== undefined ? { idempotencyKey } : {}), ...(session.signal !== undefined ? { signal: session.signal } : {}) },
    ).catch((error: unknown) => {
      if (isSoundCloneError(error, AbortError) && session.signal?.aborted === true) throw RealtimeError.aborted('connect', session.signal.reason);
      throw error;
    });
    const live = new RealtimeSocketSession({
      ...this.#logger(),
      ...session,
      ...this.#webSocket(session),
      sessionId: created.sessionId,
      socketUrl: socketUrl ?? created.socket.url,
      accessKey: this.transport.endpoint.accessKey,
      token: created.socket.token,
      rest: this,
    });
    return live.start();
  }

  /**
   * Attaches to a session a backend created, with only its socket token (browsers: the API key never
   * reaches the page). No REST call is made; the socket's session.ready is the reconnect read.
   */
  async attach(params: RealtimeAttachParams): Promise<RealtimeSocketSession> {
    const { sessionId, token, baseUrl, socketUrl, ...session } = requireParams(params);
    checkSocketParams(socketUrl, session.signal, baseUrl);
    const c = new Checks();
    if (typeof sessionId !== 'string' || sessionId === '') c.add('sessionId', 'is required and must be a non-empty string');
    if (typeof token !== 'string' || token === '') c.add('token', 'is required and must be a non-empty string');
    c.throwIfAny();
    const live = new RealtimeSocketSession({ ...this.#logger(), ...session, ...this.#webSocket(session), sessionId, token, socketUrl: socketUrl ?? socketUrlFor(baseUrl ?? this.transport.endpoint.baseUrl) });
    return live.start();
  }

  /** The client's `logger` for a session that names none of its own. */
  #logger(): { logger?: SessionLogger } {
    const logger = this.transport.endpoint.logger;
    return logger === undefined ? {} : { logger };
  }

  /** The session's own `WebSocket`, else the client's (an explicit `WebSocket: undefined` is none). */
  #webSocket(session: RealtimeSocketOptions): { WebSocket?: WebSocketConstructor } {
    const WebSocket = session.WebSocket ?? this.defaults.WebSocket;
    return WebSocket === undefined ? {} : { WebSocket };
  }

  async get(sessionId: string, call?: CallOptions): Promise<RealtimeSession> {
    requireId('sessionId', sessionId);
    const { data } = await this.transport.request({ method: 'GET', path: buildPath(PATHS.realtimeSession, { sessionId }), retry: 'repeatable' }, call);
    return parseSession(data);
  }

  /**
   * A fresh socket token for a live session (ours, docs/protocol.md "URL and authentication"): what a
   * backend hands a browser page whose `credentials` provider asks for one before a reconnect, since a
   * token is valid 10 minutes and a session may last hours. Retried like a read: each call only issues a token.
   */
  async socketToken(sessionId: string, call?: CallOptions): Promise<RealtimeSessionCreated['socket']> {
    requireId('sessionId', sessionId);
    const { data } = await this.transport.request({ method: 'POST', path: buildPath(PATHS.realtimeSocketToken, { sessionId }), retry: 'repeatable' }, call);
    const socket = object(data, 'data');
    return { url: string(socket['url'], 'data.url'), token: string(socket['token'], 'data.token'), expiresAt: string(socket['expiresAt'], 'data.expiresAt') };
  }

  /** Pauses recording and commits the current segment. Response body: ours, the session view. */
  async pause(sessionId: string, capturedSamples: CountInput, call?: CallOptions): Promise<RealtimeSession> {
    return this.post(PATHS.realtimePause, sessionId, capturedSamples, call);
  }

  /** Finishes the session: settles once and completes the History task. May take ~8 s (supplements). */
  async finish(sessionId: string, capturedSamples: CountInput, call?: CallOptions): Promise<RealtimeSession> {
    return this.post(PATHS.realtimeFinish, sessionId, capturedSamples, call);
  }

  private async post(template: string, sessionId: string, capturedSamples: CountInput, call: CallOptions | undefined): Promise<RealtimeSession> {
    const c = new Checks();
    if (typeof sessionId !== 'string' || sessionId === '') c.add('sessionId', 'is required and must be a non-empty string');
    const captured = toDecimalString(capturedSamples);
    if (captured === undefined) c.add('capturedSamples', 'must be a non-negative integer (bigint, safe integer or decimal string)');
    c.throwIfAny();
    const { data } = await this.transport.request(
      { method: 'POST', path: buildPath(template, { sessionId }), json: { capturedSamples: captured }, retry: 'repeatable' },
      call,
    );
    return parseSession(data);
  }
}

/** What a client gives every realtime session that names none of its own (SoundCloneOptions). */
export interface RealtimeDefaults {
  readonly WebSocket?: WebSocketConstructor;
}

/** connect(): the create body, its idempotency key, and the session's options. */
export interface RealtimeConnectParams extends CreateRealtimeSessionParams, RealtimeSocketOptions {
  readonly idempotencyKey?: string;
  /** ws(s) URL of the socket endpoint instead of the creation's `socket.url` (a proxy in between). */
  readonly socketUrl?: string;
}

/** attach(): a session created elsewhere, reached with its socket token only. */
export interface RealtimeAttachParams extends RealtimeSocketOptions {
  readonly sessionId: string;
  readonly token: string;
  /** http(s) base URL of the service; default the client's. */
  readonly baseUrl?: string;
  /** Or the creation's `socket.url` as is. */
  readonly socketUrl?: string;
}

/** socketUrl: an absolute ws(s) URL without query or fragment (the session appends its own query); signal: an AbortSignal; baseUrl: http(s). */
function checkSocketParams(socketUrl: unknown, signal: unknown, baseUrl?: unknown): void {
  const c = new Checks();
  if (socketUrl !== undefined && !isWebSocketUrl(socketUrl)) c.add('socketUrl', 'must be an absolute ws or wss URL');
  if (signal !== undefined && !isAbortSignalLike(signal)) c.add('signal', 'must be an AbortSignal');
  if (baseUrl !== undefined && !(typeof baseUrl === 'string' && isHttpUrl(baseUrl))) c.add('baseUrl', 'must be an absolute http or https URL');
  c.throwIfAny();
}

function isWebSocketUrl(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'ws:' || url.protocol === 'wss:') && url.username === '' && url.password === '' && !value.includes('?') && !value.includes('#');
  } catch {
    return false;
  }
}
