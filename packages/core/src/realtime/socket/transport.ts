import { RealtimeError } from '../../errors/realtime-error.js';

/**
 * The part of the WebSocket API the session uses: the browser's WebSocket and `ws` both fit. Passed in through options so core never touches a platform global at import.
 */
export interface WebSocketLike {
  readonly readyState: number;
  binaryType: string;
  readonly bufferedAmount: number;
  send(data: string | ArrayBufferView | ArrayBuffer): void;
  close(code?: number, reason?: string): void;
  addEventListener(type: string, listener: (event: never) => void): void;
  removeEventListener(type: string, listener: (event: never) => void): void;
  /** `ws` only: drop the TCP connection without a close handshake (a half-open peer never answers one). */
  terminate?(): void;
  /** `ws` only (Node's EventEmitter API): here for `unexpected-response`, the HTTP answer of a refused upgrade. */
  on?(event: 'unexpected-response', listener: (request: unknown, response: { readonly statusCode?: number | undefined }) => void): unknown;
  off?(event: 'unexpected-response', listener: (request: unknown, response: { readonly statusCode?: number | undefined }) => void): unknown;
}

/** The `ws` constructor takes `{ headers }` third; a browser's ignores it (and cannot send headers). */
export type WebSocketConstructor = new (url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) => WebSocketLike;

export interface ResolvedWebSocket {
  readonly WebSocket: WebSocketConstructor;
  /** Whether custom headers (accessKey) reach the server; false in browsers: then the token is used. */
  readonly headers: boolean;
}

const OPEN = 1;

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc?.versions?.node === 'string';
}

/**
 * options.WebSocket, else `ws` in Node (Node 20 has no global WebSocket, and Node 22's cannot send
 * headers), else globalThis.WebSocket. `ws` is an optional peer dependency of core: browsers and
 * workers never need it, so it is loaded here, when a session starts, and never at import. The module
 * name is a variable so bundlers and core's type check never pull the Node-only package into a browser
 * build. This is the only place core reaches for a platform module besides `util/node-file.ts`
 * (test/architecture/layers.test.ts holds both to it).
 */
export async function resolveWebSocket(given: WebSocketConstructor | undefined, headersSupported?: boolean): Promise<ResolvedWebSocket> {
  if (given !== undefined) return { WebSocket: given, headers: headersSupported ?? isNode() };
  let missing: unknown;
  if (isNode()) {
    const specifier = 'ws';
    try {
      const mod = (await import(/* @vite-ignore */ specifier)) as { default?: unknown; WebSocket?: unknown };
      const ctor = (mod.default ?? mod.WebSocket) as WebSocketConstructor | undefined;
      if (typeof ctor === 'function') return { WebSocket: ctor, headers: true };
      missing = new TypeError('the ws module exports no WebSocket constructor');
    } catch (caught) {
      // Not installed: a global WebSocket (Node 22+) still works, with token authentication.
      missing = caught;
    }
  }
  const global = (globalThis as { WebSocket?: unknown }).WebSocket;
  if (typeof global === 'function') return { WebSocket: global as WebSocketConstructor, headers: false };
  throw RealtimeError.noWebSocket(missing);
}

/**
 * A new socket to `address` as the transport numbered `id`, or the error to fail with when the
 * constructor threw (a malformed URL, a blocked port: asking again gets the same answer). Only text and
 * close matter to a session: an error always comes with the close that follows, and the server speaks
 * first once the socket is open (session.ready).
 */
export function openTransport(ws: ResolvedWebSocket, address: { readonly url: string; readonly headers?: Record<string, string> | undefined }, id: number, handlers: Pick<TransportHandlers, 'onText' | 'onClose'>): SocketTransport | RealtimeError {
  const { url, headers } = address;
  let socket: WebSocketLike;
  try {
    socket = headers !== undefined ? new ws.WebSocket(url, undefined, { headers }) : new ws.WebSocket(url);
  } catch (caught) {
    return RealtimeError.socketRefused(caught instanceof Error ? caught.message : String(caught), caught);
  }
  return new SocketTransport(id, socket, { onOpen: () => {}, onError: () => {}, ...handlers });
}

export interface TransportHandlers {
  onOpen(transport: SocketTransport): void;
  onText(transport: SocketTransport, text: string): void;
  onClose(transport: SocketTransport, code: number, reason: string): void;
  onError(transport: SocketTransport, message: string): void;
}

/**
 * One socket, numbered. The session compares `id` with its current transport on every callback and
 * drops what a replaced socket still says (style guide: "every socket callback checks its generation").
 * `dispose()` removes the listeners it added; `close()` and `terminate()` also dispose, so a closed
 * transport never calls back.
 *
 * A refused upgrade (the server answered HTTP 4xx/5xx instead of 101) is told by its status where the
 * platform gives it: `ws` emits `unexpected-response` with the response, and `refusedStatus` keeps its
 * statusCode before the close (1006) reaches the session. A browser's WebSocket hides the status: a
 * refused upgrade is then a close 1006 before `open` like any failed connection, `refusedStatus` stays
 * undefined, and the session treats it as a lost connection (see SessionRecovery.lost).
 */
export class SocketTransport {
  #disposed = false;
  #refusedStatus: number | undefined;
  readonly #listeners: Array<[string, (event: never) => void]>;
  readonly #onRefused: ((request: unknown, response: { readonly statusCode?: number | undefined }) => void) | undefined;

  constructor(readonly id: number, private readonly ws: WebSocketLike, handlers: TransportHandlers) {
    ws.binaryType = 'arraybuffer';
    if (typeof ws.on === 'function') {
      // With a listener `ws` leaves the refused request to us: keep the status, then abort it as `ws`
      // would without one (error, then close 1006).
      this.#onRefused = (_request, response) => {
        this.#refusedStatus = response.statusCode;
        ws.terminate?.();
      };
      ws.on('unexpected-response', this.#onRefused);
    }
    const open = (): void => handlers.onOpen(this);
    const message = (event: { data: unknown }): void => {
      if (typeof event.data === 'string') handlers.onText(this, event.data);
      // The server sends no binary messages; ignore any rather than guess their meaning.
    };
    const close = (event: { code?: number; reason?: string }): void => {
      if (this.#disposed) return;
      this.dispose();
      handlers.onClose(this, event.code ?? 1006, event.reason ?? '');
    };
    const error = (event: { message?: string; error?: { message?: string } }): void => {
      handlers.onError(this, event.message ?? event.error?.message ?? 'socket error');
    };
    this.#listeners = [['open', open], ['message', message as (e: never) => void], ['close', close as (e: never) => void], ['error', error as (e: never) => void]];
    for (const [type, listener] of this.#listeners) ws.addEventListener(type, listener);
  }

  /** The HTTP status of a refused upgrade, where the platform reports it (`ws`); undefined otherwise. */
  get refusedStatus(): number | undefined {
    return this.#refusedStatus;
  }

  get open(): boolean {
    return !this.#disposed && this.ws.readyState === OPEN;
  }

  get bufferedAmount(): number {
    return this.ws.bufferedAmount;
  }

  /** Sends when open; returns false otherwise (the caller resends from the server's cursor later). */
  send(data: string | Uint8Array): boolean {
    if (!this.open) return false;
    this.ws.send(data);
    return true;
  }

  sendJson(message: Record<string, unknown>): boolean {
    return this.send(JSON.stringify(message));
  }

  /** Close handshake; callbacks stop at once. */
  close(code = 1000, reason = ''): void {
    this.dispose();
    try {
      this.ws.close(code, reason);
    } catch {
      // Already closing or closed: nothing left to do.
    }
  }

  /** For a socket believed half-open: drop it without waiting for an answer that will not come. */
  terminate(): void {
    this.dispose();
    if (typeof this.ws.terminate === 'function') this.ws.terminate();
    else this.close(4408, 'heartbeat timeout');
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const [type, listener] of this.#listeners) this.ws.removeEventListener(type, listener);
    if (this.#onRefused !== undefined) this.ws.off?.('unexpected-response', this.#onRefused);
    // `ws` emits 'error' on a failed close of a dead socket; keep one no-op so it never goes unhandled.
    this.ws.addEventListener('error', noop);
  }
}

function noop(): void {}
