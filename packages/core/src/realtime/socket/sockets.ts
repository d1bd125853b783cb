import { CLOSE_CODES } from '../../protocol.js';
import { openTransport, type ResolvedWebSocket, type SocketTransport, type TransportHandlers } from './transport.js';

/**
 * The session's sockets: the current one, whether it said session.ready, and the standby that
 * socket.recycle opens while the current one still works (handoff.ts). Socket facts only, held by
 * SessionConnection (connection.ts), which decides what happens to them; the session acts (opens,
 * promotes, drops) and decides what that means for its state.
 */
export class SessionSockets {
  #ws: ResolvedWebSocket | undefined;
  #current: SocketTransport | undefined;
  #standby: SocketTransport | undefined;
  #seq = 0;
  #ready = false;
  /** The latest credentials from the `credentials` provider (none: the ones given at connect/attach). */
  credentials: { readonly token?: string; readonly accessKey?: string } = {};

  /** The WebSocket implementation, resolved once when the session starts. */
  use(ws: ResolvedWebSocket): void {
    this.#ws = ws;
  }

  get headers(): boolean {
    return this.#ws?.headers ?? false;
  }

  /** The id the next socket gets (for the log line written before it opens). */
  get nextId(): number {
    return this.#seq + 1;
  }

  get current(): SocketTransport | undefined {
    return this.#current;
  }

  get standby(): SocketTransport | undefined {
    return this.#standby;
  }

  get ready(): boolean {
    return this.#ready;
  }

  /** The current socket once it said session.ready: the only one audio and control messages go on. */
  get readySocket(): SocketTransport | undefined {
    return this.#ready ? this.#current : undefined;
  }

  isCurrent(t: SocketTransport | undefined): boolean {
    return t !== undefined && t.id === this.#current?.id;
  }

  /**
   * Opens a socket as the current one (not ready until its session.ready) or as the standby. Undefined
   * before use(); the Error of a socket the platform refused to open.
   */
  open(address: Parameters<typeof openTransport>[1], handlers: Pick<TransportHandlers, 'onText' | 'onClose'>, standby: boolean): SocketTransport | Error | undefined {
    const ws = this.#ws;
    if (ws === undefined) return undefined;
    const opened = openTransport(ws, address, ++this.#seq, handlers);
    if (opened instanceof Error) return opened;
    if (standby) this.#standby = opened;
    else {
      this.#ready = false;
      this.#current = opened;
    }
    return opened;
  }

  markReady(): void {
    this.#ready = true;
  }

  /** The standby becomes the current socket (not ready until its session.ready); the old one is let go. */
  promote(next: SocketTransport): void {
    this.#current?.close(CLOSE_CODES.normal, 'recycled');
    this.#standby = undefined;
    this.#current = next;
    this.#ready = false;
  }

  /** The standby closed before it was promoted: forgotten. */
  forgetStandby(): void {
    this.#standby = undefined;
  }

  /** The current socket is gone (`terminate`: believed dead, no close will come); the standby goes with it. */
  lose(terminate: boolean): void {
    this.#current?.[terminate ? 'terminate' : 'dispose']();
    this.#current = undefined;
    this.#standby?.close(CLOSE_CODES.normal, 'lost');
    this.#standby = undefined;
    this.#ready = false;
  }

  /** The session ended: every socket closes with `reason`. */
  closeAll(reason: string): void {
    const t = this.#current;
    this.#current = undefined;
    this.#ready = false;
    t?.close(CLOSE_CODES.normal, reason);
    this.#standby?.close(CLOSE_CODES.normal, reason);
    this.#standby = undefined;
  }
}
