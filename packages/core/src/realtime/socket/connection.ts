import type { AckView } from '../watch/ack-watchdog.js';
import { SocketWatch, type WatchDecision } from '../watch/socket-watch.js';
import { closeDuringHandoff, opensStandby, promotesStandby, standbyDeadlineMs, type HandoffView } from './handoff.js';
import { SessionSockets } from './sockets.js';
import type { ResolvedWebSocket, SocketTransport, TransportHandlers } from './transport.js';

/**
 * What the session does about its sockets, in this order:
 *
 *   promote  the standby is the current socket from now (socket/handoff.ts): a reconnect with cause
 *            `recycled` outside the budget; its connect deadline is watched
 *   drop     the current socket is lost (`terminate`: believed dead, no close will come; refusedStatus:
 *            its refused upgrade's HTTP status): recovery decides what follows
 *   forget   the standby is not wanted any more (`close`: close it first); tell `debug` why
 *   probe    send `{ type: 'ping', id }` on the ready socket (ack watchdog)
 *   health   the acks stopped (degraded) or came back (healthy)
 */
export type ConnectionDecision =
  | { readonly do: 'promote'; readonly socket: SocketTransport }
  | { readonly do: 'drop'; readonly code: number | undefined; readonly reason: string; readonly refusedStatus?: number | undefined; readonly terminate: boolean }
  | { readonly do: 'forget'; readonly close?: SocketTransport; readonly kind: string; readonly detail: Readonly<Record<string, unknown>> }
  | Exclude<WatchDecision, { readonly do: 'drop' }>;

/** Where a message of socket t goes: the current socket's, the standby's that makes it current, or nowhere. */
export type MessageRoute =
  | { readonly to: 'session'; readonly promote?: SocketTransport }
  | { readonly to: 'nowhere'; readonly forget?: ConnectionDecision };

const NOTHING: readonly ConnectionDecision[] = Object.freeze([]);

/**
 * The session's connection: the current socket and whether it said session.ready, the standby that
 * socket.recycle opens (socket/handoff.ts), the credentials for the next socket, and the watch of the
 * current one (watch/socket-watch.ts). Socket facts in (opened, ready, a message, a close, the watch
 * tick), decisions out (promote, drop, forget); a socket opens only when the session calls open(), and
 * the session runs every decision, owns the timers and tells recovery. Nothing here calls back into the
 * session: the socket handlers open() is given are the session's, passed through.
 *
 *   open ──(connectTimeoutMs without session.ready)──────────────► drop 'connect timeout'
 *   ready ─(heartbeat silence, or acks stopped and the probe
 *           unanswered)──────────────────────────────────────────► drop (terminate)
 *   close of the current socket ─(standby connecting, 4001/4002)─► promote the standby
 *                               └(anything else)─────────────────► drop
 *   standby: its session.ready or session.finished ──────────────► promote it
 *            anything else / its close / late ───────────────────► forget it
 */
export class SessionConnection {
  readonly #sockets = new SessionSockets();
  readonly #watch: SocketWatch;
  readonly #connectTimeoutMs: number;
  /** The `heartbeatTimeoutMs` option; undefined: the server's value. */
  readonly #heartbeatTimeoutMs: number | undefined;
  #everReady = false;

  constructor(options: { readonly ackWatch?: unknown; readonly connectTimeoutMs: number; readonly heartbeatTimeoutMs: number | undefined }) {
    this.#watch = new SocketWatch(options.ackWatch);
    this.#connectTimeoutMs = options.connectTimeoutMs;
    this.#heartbeatTimeoutMs = options.heartbeatTimeoutMs;
  }

  // ── Facts ──

  get current(): SocketTransport | undefined {
    return this.#sockets.current;
  }

  get standby(): SocketTransport | undefined {
    return this.#sockets.standby;
  }

  /** The current socket said session.ready. */
  get ready(): boolean {
    return this.#sockets.ready;
  }

  /** The current socket once it said session.ready: the only one audio and control messages go on. */
  get readySocket(): SocketTransport | undefined {
    return this.#sockets.readySocket;
  }

  /** Some socket of the session said session.ready (connect() resolves; later ones are reconnects). */
  get everReady(): boolean {
    return this.#everReady;
  }

  /** The latest credentials from the `credentials` provider (none: the ones given at connect/attach). */
  get credentials(): { readonly token?: string; readonly accessKey?: string } {
    return this.#sockets.credentials;
  }

  set credentials(fresh: { readonly token?: string; readonly accessKey?: string }) {
    this.#sockets.credentials = fresh;
  }

  /** Whether custom headers (accessKey) reach the server. */
  get headers(): boolean {
    return this.#sockets.headers;
  }

  /** The id the next socket gets (for the log line written before it opens). */
  get nextId(): number {
    return this.#sockets.nextId;
  }

  /** How often the session runs the watch tick (check()) of the current socket. */
  get tickMs(): number {
    return this.#watch.tickMs;
  }

  // ── What happened to the sockets ──

  /** The WebSocket implementation, resolved once when the session starts. */
  use(ws: ResolvedWebSocket): void {
    this.#sockets.use(ws);
  }

  /**
   * The session opens a socket as the current one (its connect deadline starts) or as the standby.
   * Undefined before use(); the Error of a socket the platform refused to open.
   */
  open(address: Parameters<SessionSockets['open']>[0], handlers: Pick<TransportHandlers, 'onText' | 'onClose'>, standby: boolean, now: number): SocketTransport | Error | undefined {
    const opened = this.#sockets.open(address, handlers, standby);
    if (opened !== undefined && !(opened instanceof Error) && !standby) this.#watch.opened(now, this.#connectTimeoutMs);
    return opened;
  }

  /**
   * A message arrived on socket t (`type`: its type, or how it failed to parse). The standby's session.ready
   * or session.finished promotes it first; anything else of the standby, and anything of a socket no
   * longer current, goes nowhere.
   */
  route(t: SocketTransport, type: string, now: number): MessageRoute {
    let promote: SocketTransport | undefined;
    if (t === this.#sockets.standby) {
      if (!promotesStandby(type)) return { to: 'nowhere', forget: { do: 'forget', kind: 'standby-message', detail: { type } } };
      promote = t;
    } else if (!this.#sockets.isCurrent(t)) return { to: 'nowhere' };
    this.#watch.heard(now);
    return promote === undefined ? { to: 'session' } : { to: 'session', promote };
  }

  /** session.ready arrived on the current socket: its watch runs from now. Returns whether it is a reconnect (not the first ready). */
  readied(now: number, serverHeartbeatTimeoutMs: number): boolean {
    this.#sockets.markReady();
    this.#watch.ready(now, this.#heartbeatTimeoutMs ?? serverHeartbeatTimeoutMs);
    const reconnect = this.#everReady;
    this.#everReady = true;
    return reconnect;
  }

  /** A `pong` arrived on the current socket: the ack watchdog's probe, if it is the one. */
  answered(id: unknown, now: number): void {
    this.#watch.answered(id, now);
  }

  /** Socket t closed: the standby is forgotten, the current one handed over or lost (socket/handoff.ts). */
  closed(t: SocketTransport, code: number, reason: string): readonly ConnectionDecision[] {
    const standby = this.#sockets.standby;
    if (t === standby) {
      this.#sockets.forgetStandby();
      return [{ do: 'forget', kind: 'standby-lost', detail: { code, reason } }];
    }
    if (!this.#sockets.isCurrent(t)) return NOTHING;
    if (standby !== undefined && closeDuringHandoff(code) === 'promote') return [{ do: 'promote', socket: standby }];
    return [{ do: 'drop', code, reason, refusedStatus: t.refusedStatus, terminate: false }];
  }

  /** The standby becomes the current socket (not ready until its session.ready); the old one is let go. */
  promote(next: SocketTransport, now: number): void {
    this.#sockets.promote(next);
    this.#watch.opened(now, this.#connectTimeoutMs);
  }

  /** The current socket is gone (`terminate`: believed dead, no close will come); the standby goes with it. */
  lose(terminate: boolean): void {
    this.#sockets.lose(terminate);
  }

  /** The session ended: every socket closes with `reason`. */
  closeAll(reason: string): void {
    this.#sockets.closeAll(reason);
  }

  // ── Decisions ──

  /**
   * socket.recycle arrived on the current socket `noticed`: whether to open the standby now (asked again
   * after the credentials provider ran: not once the socket that got the notice was replaced meanwhile).
   */
  wantsStandby(noticed: SocketTransport | undefined, session: Pick<HandoffView, 'terminal' | 'restFinishing'>): boolean {
    const s = this.#sockets;
    return s.current === noticed && opensStandby({ ...session, ready: s.ready, standby: s.standby !== undefined });
  }

  /** How long the standby opened for a notice of `closeInMs` may take to say session.ready (then standbyDue()). */
  standbyDeadlineMs(closeInMs: number): number {
    return standbyDeadlineMs(closeInMs, this.#connectTimeoutMs);
  }

  /** The standby's deadline passed: forgotten (and closed) unless it was promoted or is gone already. */
  standbyDue(standby: SocketTransport, closeInMs: number): readonly ConnectionDecision[] {
    if (this.#sockets.standby !== standby) return NOTHING;
    this.#sockets.forgetStandby();
    return [{ do: 'forget', close: standby, kind: 'standby-late', detail: { closeInMs } }];
  }

  /** The watch tick: probe the ready socket, tell the health, or drop a dead socket (no close will come). */
  check(view: Omit<AckView, 'ready' | 'bufferedBytes'>): readonly ConnectionDecision[] {
    const t = this.#sockets.readySocket;
    const decisions = this.#watch.check({ ...view, ready: t !== undefined, bufferedBytes: t?.bufferedAmount ?? 0 });
    if (!decisions.some((d) => d.do === 'drop')) return decisions as readonly ConnectionDecision[];
    return decisions.map((d): ConnectionDecision => (d.do === 'drop' ? { do: 'drop', code: d.code, reason: d.reason, terminate: true } : d));
  }
}
