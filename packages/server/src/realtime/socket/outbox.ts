import type WebSocket from 'ws';

/**
 * Bytes handed to `ws` (and so to the TCP socket's write queue) and not yet written to the kernel,
 * above which further messages wait in the outbox instead. Small on purpose: what sits in the socket's
 * write queue is what stands between a client and a close frame, and every queued socket write is a
 * Buffer plus a write request that Node fails one by one when the socket is destroyed.
 */
export const IN_FLIGHT_MAX_BYTES = 64 << 10;

/**
 * Memory counted for each message waiting in the outbox beyond its characters: the string's header
 * and the array slot (a V8 one-byte string is ~16 bytes of header; messages are ASCII JSON apart from
 * transcript text). Counted so that a flood of tiny messages (pongs to a ping flood) reaches the cap
 * by the memory it holds, not only by its payload bytes.
 */
export const QUEUED_MESSAGE_OVERHEAD_BYTES = 32;

/**
 * The outbound side of one socket, bounded by the memory it holds rather than the bytes it sent:
 *
 *   send(text) --> [outbox: strings] --pump--> ws.send (<= IN_FLIGHT_MAX_BYTES in flight) --> kernel
 *
 * A client that reads keeps the outbox empty (each write completes and pumps the next). A client that
 * does not read fills the kernel buffers, then the in-flight window, then the outbox; once `heldBytes`
 * passes `maxHeldBytes` the outbox drops everything it holds (an O(1) release, nothing failed one
 * by one), refuses further messages and reports the overflow once, so the close frame that follows
 * waits behind at most the in-flight window.
 */
export class Outbox {
  private queue: string[] = [];
  private head = 0;
  private queuedBytes = 0;
  private inFlightBytes = 0;
  private stopped = false;
  private onDrained: (() => void) | undefined;

  constructor(
    private readonly ws: WebSocket,
    private readonly maxHeldBytes: number,
    private readonly onOverflow: (heldBytes: number) => void,
  ) {}

  /**
   * Memory held for this client now: bytes in the socket's write queue (ws counts them as
   * bufferedAmount; our in-flight count when larger) plus the outbox's strings and their overhead.
   */
  get heldBytes(): number {
    return Math.max(this.inFlightBytes, this.ws.bufferedAmount) + this.queuedBytes;
  }

  /** Messages waiting in the outbox (not yet handed to the socket). */
  get queued(): number {
    return this.queue.length - this.head;
  }

  /** Queues one text message. False when it was refused: the outbox overflowed or was stopped. */
  send(text: string): boolean {
    if (this.stopped) return false;
    if (this.queued === 0 && this.inFlightBytes < IN_FLIGHT_MAX_BYTES) {
      this.write(text);
      return true;
    }
    this.queue.push(text);
    this.queuedBytes += text.length + QUEUED_MESSAGE_OVERHEAD_BYTES;
    const held = this.heldBytes;
    if (held > this.maxHeldBytes) {
      this.stop();
      this.onOverflow(held);
      return false;
    }
    return true;
  }

  /**
   * Runs `action` once every queued message was handed to the socket (now, when none waits): a
   * normal close frame goes after the messages before it, as the client expects.
   */
  whenDrained(action: () => void): void {
    if (this.queued === 0) action();
    else this.onDrained = action;
  }

  /** Drops what waits and refuses everything from now on (the socket is closing or gone). */
  stop(): void {
    this.stopped = true;
    this.onDrained = undefined;
    this.queue = [];
    this.head = 0;
    this.queuedBytes = 0;
  }

  private write(text: string): void {
    const bytes = text.length;
    this.inFlightBytes += bytes;
    this.ws.send(text, (error) => {
      this.inFlightBytes -= bytes;
      if (error === undefined || error === null) this.pump();
    });
  }

  private pump(): void {
    while (!this.stopped && this.queued > 0 && this.inFlightBytes < IN_FLIGHT_MAX_BYTES) {
      const text = this.queue[this.head]!;
      this.head += 1;
      this.queuedBytes -= text.length + QUEUED_MESSAGE_OVERHEAD_BYTES;
      this.write(text);
    }
    if (this.queued === 0 && this.onDrained !== undefined) {
      const action = this.onDrained;
      this.onDrained = undefined;
      action();
    }
    // Compact now and then, so a long-lived backlog does not keep consumed slots (and shift() would
    // copy the whole array per message).
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
