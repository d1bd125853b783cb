import { STATUS_CODES, type IncomingMessage, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { ApiError, isApiError } from '../../errors.js';
import { failureBody } from '../../http/envelope.js';
import { asApiError } from '../../http/pipeline.js';
import { injectedFailure, type Faults } from '../../http/faults.js';
import { API_PREFIX, CLOSE_CODES, FRAME, HEADERS, REALTIME_PATHS, SOCKET_QUERY } from '@soundclone/core/internal';
import { ID_PREFIXES, NODES } from '../../protocol.js';
import type { Accounts } from '../../domain/accounts/accounts.js';
import type { RealtimeSessions, Session } from '../session/sessions.js';
import { randomId } from '../../util/ids.js';
import { tokenSessionId } from '../session/token-aging.js';
import { Connection, type SocketConfig, type SocketLogEntry } from './connection.js';
// Real time even under a test's fake timers (util/real-timers.ts).
import { setTimeout, clearTimeout } from '../../util/real-timers.js';

/**
 * The realtime socket endpoint: a `ws` server in noServer mode on the HTTP server's
 * `upgrade` event, so authentication happens before the upgrade and an unauthenticated request never
 * becomes a socket (HTTP 401 with the failure envelope).
 *
 *   GET {API_PREFIX}/stt/realtime/socket?sessionId=rs_…   + header accessKey     (Node)
 *   GET {API_PREFIX}/stt/realtime/socket?token=rtt_…                             (browsers)
 *
 *   client                                  server
 *     |--- HTTP Upgrade (key or token) ------>|  401 UNAUTHORIZED / 400 INPUT_INVALID: no socket
 *     |<-- 101 Switching Protocols -----------|
 *     |<-- session.ready {epoch, cursors…} ---|  (or error + close 4404 / 4409 / 4410)
 *     |--- binary frames, JSON messages ----->|
 *     |<-- acks, transcript, usage, pings ----|
 *
 * One socket per session: a newer one replaces the older (close 4001), which is how a client that
 * suspects a half-open socket reconnects without waiting for the server to notice.
 */
export interface SocketServerDeps {
  readonly accounts: Accounts;
  readonly realtime: RealtimeSessions;
  readonly faults: Faults;
  readonly config: SocketConfig;
  /**
   * A session this node does not hold (it may live on another node sharing the store): the upgrade is
   * passed on to that node ('forwarded': the socket is theirs now), or the session ended there and its
   * stored view is known ('ended'), or there is none ('not-found'). Throws an ApiError (or the store's
   * error) to refuse the upgrade. Absent: such a session is not found.
   */
  readonly elsewhere?: (req: IncomingMessage, socket: Duplex, head: Buffer, target: { readonly sessionId: string; readonly accountId: string | undefined }) => Promise<ElsewhereOutcome>;
}

export type ElsewhereOutcome =
  | { readonly kind: 'forwarded' }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'ended'; readonly view: Record<string, unknown> }
  /** Taken over by this node (the live state): the socket attaches here. */
  | { readonly kind: 'adopted'; readonly session: Session };

/** What authentication found: the session when this node holds it, and whose it is when the key said so. */
interface Target {
  readonly session: Session | undefined;
  readonly sessionId: string;
  /** The authenticated account (accessKey); undefined for a token, which names the session itself. */
  readonly accountId: string | undefined;
}

export class SocketServer {
  private readonly wss: WebSocketServer;
  private readonly bySession = new Map<string, Connection>();
  /** Sockets another node passed on here (its hop header): that node's id. */
  private readonly forwardedBy = new Map<Connection, string>();
  private readonly connections = new Set<Connection>();
  private nextConnection = 1;
  /** The last 1,000 socket events, oldest first (tests and debugging; unknown messages land here). */
  readonly log: SocketLogEntry[] = [];

  constructor(private readonly deps: SocketServerDeps) {
    // Oversized frames get a typed FRAME_TOO_LARGE while they fit in 4 maximal frames; beyond that ws
    // closes with 1009 before we could read a header.
    // allowSynchronousEvents false: ws hands us one message per event-loop turn per socket, so a flood
    // of tiny frames (pings, malformed frames) cannot run thousands of handlers in one tick; the socket's
    // TCP reads pause while parsed messages wait (ws's receiver applies backpressure).
    this.wss = new WebSocketServer({
      noServer: true,
      maxPayload: 4 * (FRAME.headerBytes + deps.config.maxFrameSamples * FRAME.bytesPerSample),
      perMessageDeflate: false,
      allowSynchronousEvents: false,
    });
    deps.faults.socket.bind({
      rotateNow: (id) => this.bySession.get(id)?.rotateNow() ?? false,
      closeSocket: (id, code, reason) => {
        const connection = this.bySession.get(id);
        connection?.close(code, reason);
        return connection !== undefined;
      },
      halfOpen: (id) => {
        const connection = this.bySession.get(id);
        connection?.makeHalfOpen();
        return connection !== undefined;
      },
      rulesChanged: () => {
        for (const connection of this.connections) connection.faultsChanged();
      },
    });
  }

  /** Open sockets now (the leak test checks this returns to 0). */
  get size(): number {
    return this.connections.size;
  }

  attachTo(server: Server): void {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
  }

  private onUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const requestId = randomId(ID_PREFIXES.request);
    socket.on('error', () => socket.destroy());
    const url = new URL(req.url ?? '/', 'http://localhost');
    const fault = this.deps.faults.take('GET', url.pathname);
    if (fault?.kind === 'dropBeforeProcessing' || fault?.kind === 'dropAfterProcessing') {
      socket.destroy();
      return;
    }
    if (fault?.kind === 'status') {
      const { error, headers } = injectedFailure(fault);
      refuse(socket, error, requestId, headers);
      return;
    }
    let target: Target;
    try {
      if (url.pathname !== API_PREFIX + REALTIME_PATHS.socket) throw new ApiError('NOT_FOUND', `no socket endpoint at ${url.pathname}`);
      target = this.authenticate(req, url);
    } catch (caught) {
      const error = isApiError(caught) ? caught : new ApiError('INTERNAL', 'internal error');
      refuse(socket, error, requestId);
      // No connection was made: the entry carries the request id, and the session the upgrade named.
      const named = url.searchParams.get(SOCKET_QUERY.sessionId) ?? tokenSessionId(url.searchParams.get(SOCKET_QUERY.token) ?? '');
      this.record({ at: Date.now(), connectionId: requestId, sessionId: named === '' ? null : named, kind: 'refused', detail: { status: error.status, errorCode: error.code } });
      return;
    }
    if (target.session === undefined && this.deps.elsewhere !== undefined) {
      void this.fromElsewhere(req, socket, head, target, requestId);
      return;
    }
    this.accept(req, socket, head, target, undefined);
  }

  /** A session not held here: forwarded, or answered here as ended or not found, or refused (HTTP, before the upgrade). */
  private async fromElsewhere(req: IncomingMessage, socket: Duplex, head: Buffer, target: Target, requestId: string): Promise<void> {
    let outcome: ElsewhereOutcome;
    try {
      outcome = await (this.deps.elsewhere as NonNullable<SocketServerDeps['elsewhere']>)(req, socket, head, target);
    } catch (caught) {
      const error = asApiError(caught);
      refuse(socket, error, requestId, error.retryAfterSec !== undefined ? { [HEADERS.retryAfter]: String(error.retryAfterSec) } : {});
      return;
    }
    if (outcome.kind === 'forwarded' || socket.destroyed) return;
    if (outcome.kind === 'adopted') {
      this.accept(req, socket, head, { ...target, session: outcome.session }, undefined);
      return;
    }
    this.accept(req, socket, head, target, outcome.kind === 'ended' ? outcome.view : undefined);
  }

  /** The upgrade, then the connection to a session held here, or the refusal on the socket (not found, ended elsewhere). */
  private accept(req: IncomingMessage, socket: Duplex, head: Buffer, target: Target, endedView: Record<string, unknown> | undefined): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => {
      const id = `cn_${this.nextConnection++}`;
      const session = target.session;
      const log = (kind: string, detail?: Record<string, unknown>): void => this.record({ at: Date.now(), connectionId: id, sessionId: target.sessionId, kind, ...(detail !== undefined ? { detail } : {}) });
      if (session === undefined && endedView !== undefined) {
        // Ended on a node that is gone: what a finished session's socket gets, from the store.
        ws.on('error', () => {});
        ws.send(JSON.stringify({ type: 'session.finished', session: endedView }));
        ws.close(CLOSE_CODES.SESSION_FINISHED, 'session finished');
        log('refused', { code: CLOSE_CODES.SESSION_FINISHED });
        return;
      }
      if (session === undefined) {
        // Authenticated but no such session (or another account's): say so in a way browsers can read.
        ws.on('error', () => {});
        ws.send(JSON.stringify({ type: 'error', code: 'SESSION_NOT_FOUND', message: 'realtime session not found', fatal: true }));
        ws.close(CLOSE_CODES.SESSION_NOT_FOUND, 'SESSION_NOT_FOUND');
        log('refused', { code: CLOSE_CODES.SESSION_NOT_FOUND });
        return;
      }
      const connection = new Connection(id, ws, session, this.deps.realtime, this.deps.config, this.deps.faults.socket, log, (c) => this.forget(c));
      this.connections.add(connection);
      const via = req.headers[NODES.hopHeader];
      if (typeof via === 'string') this.forwardedBy.set(connection, via);
      const previous = this.bySession.get(session.id);
      this.bySession.set(session.id, connection);
      log('connected');
      void connection.start().then(() => previous?.close(CLOSE_CODES.REPLACED, 'replaced by a newer connection'));
    });
  }

  /**
   * Token (browsers) or accessKey header plus sessionId (Node). Refusals are ApiErrors answered with
   * HTTP before the upgrade. A missing or foreign session is not refused here: it is reported on the
   * socket (close 4404), because a browser cannot read the status of a refused upgrade.
   */
  private authenticate(req: IncomingMessage, url: URL): Target {
    const token = url.searchParams.get(SOCKET_QUERY.token);
    const sessionId = url.searchParams.get(SOCKET_QUERY.sessionId);
    if (token !== null) {
      const named = this.deps.realtime.verifyToken(token);
      if (named === undefined) throw new ApiError('UNAUTHORIZED', 'invalid or expired socket token');
      if (sessionId !== null && sessionId !== named) throw ApiError.invalidField(SOCKET_QUERY.sessionId, 'does not match the token');
      return { session: this.deps.realtime.byId(named), sessionId: named, accountId: undefined };
    }
    const key = req.headers[HEADERS.accessKey.toLowerCase()];
    const account = this.deps.accounts.authenticate(Array.isArray(key) ? key[0] : key);
    if (sessionId === null || sessionId === '') throw ApiError.invalidField(SOCKET_QUERY.sessionId, 'is required with the accessKey header');
    const session = this.deps.realtime.byId(sessionId);
    return { session: session !== undefined && session.ownerId === account.id ? session : undefined, sessionId, accountId: account.id };
  }

  /**
   * Recycles the sockets other nodes passed on here (tunnels through them) when those nodes drain: a
   * draining node cuts its tunnels as it closes, and a recycle lets the client move its socket first,
   * at once and as a routine recycle (socket.recycle, 4002). Returns how many were recycled.
   */
  recycleForwardedBy(nodeIds: ReadonlySet<string>): number {
    let recycled = 0;
    for (const [connection, via] of [...this.forwardedBy]) {
      if (!nodeIds.has(via)) continue;
      this.forwardedBy.delete(connection);
      connection.recycleNow();
      recycled += 1;
    }
    return recycled;
  }

  private forget(connection: Connection): void {
    this.forwardedBy.delete(connection);
    this.connections.delete(connection);
    if (this.bySession.get(connection.session.id) === connection) this.bySession.delete(connection.session.id);
  }

  private record(entry: SocketLogEntry): void {
    this.log.push(entry);
    if (this.log.length > 1000) this.log.shift();
  }

  /**
   * Server shutdown: every socket gets 4503; those that have not finished the close handshake within
   * `graceMs` are ended. Nothing stays armed.
   */
  async close(graceMs = 250): Promise<void> {
    const clients = [...this.wss.clients];
    for (const connection of [...this.connections]) connection.close(CLOSE_CODES.SERVER_GOING_AWAY, 'server going away');
    await Promise.all(
      clients.map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === ws.CLOSED) return resolve();
            const timer = setTimeout(() => {
              ws.terminate();
              resolve();
            }, graceMs);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
          }),
      ),
    );
    this.deps.faults.socket.bind(undefined);
    this.wss.close();
  }
}

/** An HTTP answer on the raw socket of a refused upgrade, with the failure envelope. */
function refuse(socket: Duplex, error: ApiError, requestId: string, headers: Record<string, string> = {}): void {
  const body = failureBody(error, requestId);
  const reason = STATUS_CODES[error.status] ?? 'Error';
  const extra = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
  socket.end(
    `HTTP/1.1 ${error.status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${HEADERS.requestId}: ${requestId}\r\n${extra}Connection: close\r\n\r\n${body}`,
  );
}
