import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** Limits on what the server holds for a client that does not read its responses. */
export interface ResponseLimits {
  /**
   * Response bytes held for one connection (written, not yet taken by the kernel) above which its next
   * request waits: pipelined requests are answered as earlier answers are read, not all at once.
   */
  readonly maxHeldBytes: number;
  /** A connection holding more than `stallBytes` that makes no progress for `stallMs` is destroyed. */
  readonly stallMs: number;
  readonly stallBytes: number;
}

/**
 * Per-connection accounting of REST responses a client has not read yet.
 *
 * Without it a client that pipelines hundreds of requests in one TCP segment and never reads gets
 * every response built and buffered (Node parses the whole segment before pausing the socket), and a
 * response nobody reads stays in memory for as long as the TCP connection lives. Here:
 *
 *   request --admit()--> waits while another request of this connection is being handled or
 *                        > maxHeldBytes are held for it; done() when its answer is written
 *   reply   --track()--> counted until the response finished (handed to the kernel) or closed
 *   watchdog (while anything is held): no progress for stallMs with > stallBytes held -> destroy
 *
 * Progress is a response finishing or the socket's write queue shrinking (the client reads).
 */
export class ResponseBudget {
  private heldBytes = 0;
  /** A request of this connection is being handled (they are handled one at a time, in order). */
  private busy = false;
  private readonly waiting: Array<(admitted: boolean) => void> = [];
  private watchdog: ReturnType<typeof setInterval> | undefined;
  private lastQueued = 0;
  private lastProgressAt = 0;

  constructor(
    private readonly socket: Socket,
    private readonly limits: ResponseLimits,
  ) {
    socket.once('close', () => {
      this.stopWatchdog();
      for (const wake of this.waiting.splice(0)) wake(false);
    });
  }

  /**
   * True (or a promise of true) when the request may be handled now, false when the connection went
   * away meanwhile. Pipelined requests are handled one at a time: HTTP/1.1 answers them in order
   * anyway, and this way a segment of hundreds of requests does not start hundreds of handlers.
   */
  admit(): Promise<boolean> | true {
    if (!this.busy && this.waiting.length === 0 && this.heldBytes <= this.limits.maxHeldBytes) {
      this.busy = true;
      return true;
    }
    if (this.socket.destroyed) return Promise.resolve(false);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /** The admitted request was answered (or abandoned): the next one may run. */
  done(): void {
    this.busy = false;
    this.wakeNext();
  }

  private wakeNext(): void {
    if (this.busy || this.heldBytes > this.limits.maxHeldBytes) return;
    const next = this.waiting.shift();
    if (next === undefined) return;
    this.busy = true;
    next(true);
  }

  /** A response was written: its bytes count until it finishes or its connection closes. */
  track(res: ServerResponse): void {
    // What this response holds now: its own buffer while it waits its turn behind earlier answers,
    // or what is left in the socket's write queue once it is the one being sent. Nothing: already
    // handed to the kernel.
    const bytes = res.writableLength;
    if (res.writableFinished || bytes === 0) return;
    this.heldBytes += bytes;
    let settled = false;
    const release = (): void => {
      if (settled) return;
      settled = true;
      this.heldBytes -= bytes;
      this.progress();
      this.wakeNext();
      if (this.heldBytes <= 0) this.stopWatchdog();
    };
    res.once('finish', release);
    res.once('close', release);
    this.startWatchdog();
  }

  private progress(): void {
    this.lastProgressAt = performance.now();
    this.lastQueued = this.socket.writableLength;
  }

  private startWatchdog(): void {
    if (this.watchdog !== undefined) return;
    this.progress();
    const every = Math.max(50, Math.min(1000, Math.floor(this.limits.stallMs / 4)));
    this.watchdog = setInterval(() => this.check(), every);
    this.watchdog.unref();
  }

  private stopWatchdog(): void {
    if (this.watchdog !== undefined) clearInterval(this.watchdog);
    this.watchdog = undefined;
  }

  private check(): void {
    const queued = this.socket.writableLength;
    if (queued < this.lastQueued) this.progress();
    else this.lastQueued = queued;
    if (this.heldBytes > this.limits.stallBytes && performance.now() - this.lastProgressAt >= this.limits.stallMs) {
      this.stopWatchdog();
      this.socket.destroy();
    }
  }
}
