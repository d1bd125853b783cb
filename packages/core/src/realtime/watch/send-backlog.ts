import { REALTIME, SOCKET_DEFAULTS } from '../../protocol.js';

/** Rate samples kept: at a 100 ms watch tick, about six seconds of acknowledgements. */
const SLOTS = 64;
/** The throughput is the acknowledgements of (about) the last three seconds spent sending. */
const WINDOW_MS = 3000;
/** Less observed than this, and the throughput is not known yet: the real-time rate of the audio is assumed. */
const MIN_OBSERVED_MS = 250;
/** Samples per ms of 16 kHz audio: what a path that carried a live stream carried at least. */
const REAL_TIME = REALTIME.sampleRate / 1000;
/**
 * What the estimate cannot resolve, in ms of the path's time: audio the server has but acks only up to
 * ackIntervalMs (50) later counts as queued, and the watch reads the acks every 100 ms. A path that keeps
 * up shows about this much "backlog" at any moment; waiting for it would only delay catching a half-open
 * socket by a tick.
 */
const RESOLUTION_MS = SOCKET_DEFAULTS.ackIntervalMs + 100;

/**
 * How long the path needs for the audio queued ahead of a `ping` probe (docs/protocol.md "Heartbeat and
 * half-open sockets"). The server answers a ping after every frame sent before it, so on a slow link
 * with a backlog (a reconnect resending the in-flight window, a finish sending all it owes, a server that
 * reads slowly) an honest `pong` takes as long as that backlog takes to arrive. The ack watchdog adds this
 * to the probe's deadline, so a slow but alive path is not dropped (and then sent the same backlog again
 * on the next socket: a reconnect storm on exactly the links that need patience).
 *
 * Everything here is an estimate from what the peer proved, never from what the socket accepted:
 *
 *   throughput  samples acknowledged per ms over the last ~3 s of sending, measured from one ack advance
 *               to the next (a burst of acks after a stall counts over the whole stall, so it cannot
 *               look faster than the path was). On a live stream that keeps up this is the audio's own
 *               rate, below what the path could carry: the estimate errs towards patience.
 *   queued      when an ack arrives, everything unacknowledged (the server acks within ackIntervalMs of
 *               receiving, so what it has not acked is still on its way); while acks are silent, a
 *               leaky bucket from there: what is sent goes in, the throughput drains it, and it never
 *               exceeds what is unacknowledged.
 *
 * The socket's `bufferedAmount` is only a floor under the estimate (those bytes have not even left the
 * process: a throughput measured on a faster path cannot drain them away on paper). It is no measure of
 * the backlog: it sees nothing in the kernel's send buffer or on the wire (on a real slow link nearly
 * all of it), and bytes leaving the process prove nothing about the peer: a half-open TCP connection
 * accepts them until its buffer fills.
 *
 * Counts in samples (a frame's 16-byte header is 2.5% of 20 ms of audio, and the JSON between frames
 * is smaller still). Fixed arrays, no garbage per observation.
 */
export class SendBacklog {
  readonly #acked = new Float64Array(SLOTS);
  readonly #spanMs = new Float64Array(SLOTS);
  #next = 0;
  #filled = 0;
  /** The last observation of this run (undefined: the next one starts a run). */
  #lastAt: number | undefined;
  #lastSent = 0;
  /** Where the acks last advanced, in this run (undefined: not yet). */
  #progressAt: number | undefined;
  #progressAcked = 0;
  #queued = 0;

  /**
   * Nothing is watched now (a socket lost or not ready, paused, idle): the next observation starts a new
   * run, whose first in-flight audio counts as queued (a new socket resends its window at once). The
   * throughput measured so far is kept: the next socket most likely crosses the same network.
   */
  interrupt(): void {
    this.#lastAt = undefined;
    this.#progressAt = undefined;
  }

  /**
   * One reading while acks are awaited: the acknowledged position (any advance is progress), what is
   * sent but not acknowledged, and the socket's bufferedAmount (bytes; a frame carries 2 per sample).
   */
  observe(now: number, acked: number, inFlight: number, bufferedBytes = 0): void {
    const sent = acked + inFlight;
    const progressed = this.#progressAt !== undefined && acked > this.#progressAcked;
    if (this.#lastAt === undefined || progressed) {
      // The server acks within ackIntervalMs of receiving: what is unacknowledged now is (nearly all)
      // still on its way.
      this.#queued = inFlight;
    } else {
      const drained = this.throughput() * Math.max(0, now - this.#lastAt);
      this.#queued = Math.min(inFlight, Math.max(0, this.#queued + Math.max(0, sent - this.#lastSent) - drained));
    }
    this.#queued = Math.max(this.#queued, Math.min(inFlight, bufferedBytes / 2));
    if (progressed && now > (this.#progressAt ?? now)) this.#record(acked - this.#progressAcked, now - (this.#progressAt ?? now));
    if (this.#progressAt === undefined || progressed || acked < this.#progressAcked) {
      this.#progressAt = now;
      this.#progressAcked = acked;
    }
    this.#lastAt = now;
    this.#lastSent = sent;
  }

  /** Samples per ms the acknowledgements showed lately; the real-time rate until enough was seen. */
  throughput(): number {
    let acked = 0;
    let spanMs = 0;
    for (let i = 1; i <= this.#filled && spanMs < WINDOW_MS; i++) {
      const slot = (this.#next - i + SLOTS) % SLOTS;
      acked += this.#acked[slot] ?? 0;
      spanMs += this.#spanMs[slot] ?? 0;
    }
    return spanMs < MIN_OBSERVED_MS ? REAL_TIME : acked / spanMs;
  }

  /** Samples estimated to be still on their way to the server. */
  get queued(): number {
    return this.#queued;
  }

  /** How long the path needs, at the throughput measured, for what is queued now, beyond the estimate's resolution. */
  drainMs(): number {
    return Math.max(0, Math.ceil(this.#queued / this.throughput()) - RESOLUTION_MS);
  }

  #record(acked: number, spanMs: number): void {
    this.#acked[this.#next] = acked;
    this.#spanMs[this.#next] = spanMs;
    this.#next = (this.#next + 1) % SLOTS;
    this.#filled = Math.min(SLOTS, this.#filled + 1);
  }
}
