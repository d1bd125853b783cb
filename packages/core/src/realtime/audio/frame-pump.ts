import type { AudioOutbox, Gap } from './outbox.js';
import type { SessionState } from '../session-state.js';
import { SocketSends } from './socket-sends.js';
import type { SocketTransport } from '../socket/transport.js';

/** The questions others may ask of what was sent on which socket (answers only; the pump records). */
export type SentOnSocket = Pick<SocketSends, 'finishSentOn' | 'pauseSentOn' | 'resumeSentOn'>;

/** What one pump() works with, read by the session at the moment of the call (the state may have moved on since the last). */
export interface PumpInput {
  /** The current socket once session.ready arrived on it, else undefined. */
  readonly socket: SocketTransport | undefined;
  readonly state: SessionState;
  readonly epoch: number;
}

/**
 * What one pump() did that the session acts on (plain frames going out need nothing from it):
 *
 *   gaps        audio the ring dropped before it was sent (an overflow): emit a `gap` for each
 *   firstFrame  the session's very first frame went out: emit `first.frame` with it
 *   control     the drain ended and this message went out (the server settles on it)
 */
export interface PumpResult {
  readonly gaps?: readonly Gap[];
  readonly firstFrame?: { readonly startSample: number; readonly epoch: number };
  readonly control?: 'session.pause' | 'session.finish';
}

/** Nothing beyond plain frames: the one result of almost every call, shared so a call makes no garbage. */
const QUIET: PumpResult = Object.freeze({});

/**
 * The sending side of the session: frames from the outbox within the in-flight window, then the
 * pause or finish message once everything is acknowledged, or once the drain wait ran out.
 *
 * Frames stay within the in-flight window (the acknowledgements pace the sending) except in one case:
 * finishing, once the drain wait ran out with audio still unsent (no acknowledgement came: a stalled
 * path, a server withholding acks), nothing more is captured and the rest is bounded by the ring, so
 * every frame still owed goes out at once, past the window, and the finish message follows them on the
 * same ordered socket: the server has every sample when it settles. Only a socket that is really gone
 * (the ack watchdog's probe unanswered, or a close) loses what was written to it: the next socket
 * resends from the server's cursor and sends the finish again; a finish over REST declares what never
 * arrived as a gap (cause `undelivered`, TRANSPORT_GAP).
 *
 * The drain wait bounds the acknowledgement: the control message goes out once everything is sent and
 * acknowledged, or at the deadline anyway. A pause that goes ahead undrained keeps the rest (unsent
 * past the window, or unacknowledged) in the ring and sends it in the next epoch.
 *
 * Control messages are remembered per socket (transport id): each goes out once per socket, and a new
 * socket (whose session.ready resets them and restarts the drain wait) sends what is still owed again.
 * Once one went out on a socket no more frames are sent on it: the server stops accepting there.
 *
 * The pump holds no socket, state or timer of the session: each call is given the socket, the state and
 * the epoch, and returns what happened; a drain that starts returns when to pump again, and the session
 * owns that timer. Garbage: a result object only when a gap was declared, or the first frame or a control
 * message went out.
 */
export class FramePump {
  /** Transport id on which session.finish / session.pause / session.resume was sent, and the drain deadline. */
  readonly #sent = new SocketSends();
  #firstFrameSent = false;
  #framesSent = 0;
  #bytesSent = 0;
  /** The server refuses all audio for good (balance used up): nothing is sent again. */
  #halted = false;
  readonly #outbox: AudioOutbox;
  readonly #limits: { readonly maxInFlightSamples: number; readonly drainTimeoutMs: number };
  readonly #now: () => number;

  constructor(outbox: AudioOutbox, limits: { readonly maxInFlightSamples: number; readonly drainTimeoutMs: number }, now: () => number) {
    this.#outbox = outbox;
    this.#limits = limits;
    this.#now = now;
  }

  /**
   * pause() or finish(): wait for the acknowledgement at most drainTimeoutMs, then go ahead anyway.
   * Returns the ms after which to pump again: the deadline then has passed and the control message goes.
   */
  startDrain(): number {
    this.#sent.drainUntil(this.#now() + this.#limits.drainTimeoutMs);
    return this.#limits.drainTimeoutMs + 1;
  }

  /** Milliseconds until the drain deadline by the pump's clock (0 once it passed or with no drain). */
  drainLeftMs(): number {
    return Math.max(0, this.#sent.drainDeadline - this.#now());
  }

  /**
   * A new socket said session.ready: nothing owed was sent on it yet. A drain in progress gets a fresh
   * wait on it (the old deadline may have passed during the outage; the audio buffered meanwhile
   * deserves the same chance to be acknowledged): returns when to pump again then, else undefined.
   */
  newSocket(draining: boolean): number | undefined {
    this.#sent.reset();
    return draining ? this.startDrain() : undefined;
  }

  /** What went out on which socket, to ask (finishSentOn(id) …). */
  get sent(): SentOnSocket {
    return this.#sent;
  }

  /** A new pause(): the session.pause sent on this socket earlier was answered already. */
  newPause(): void {
    this.#sent.pauseAnswered();
  }

  /** session.resumed: the resume was taken; a later rotation or resume() sends a new one. */
  resumeAnswered(): void {
    this.#sent.resumeAnswered();
  }

  /** No frame, pause, finish or resume goes out again: the server ended the session itself. */
  halt(): void {
    this.#halted = true;
  }

  /** Audio frames handed to sockets since the session began (resends included), and their bytes: for `health`. */
  get framesSent(): number {
    return this.#framesSent;
  }

  get bytesSent(): number {
    return this.#bytesSent;
  }

  /** Sends on `socket` what the state and the in-flight window allow; then pause/finish once drained. */
  pump({ socket: t, state, epoch }: PumpInput): PumpResult {
    if (this.#halted || t === undefined || !t.open) return QUIET;
    const draining = state === 'pausing' || state === 'finishing';
    if (state !== 'streaming' && !draining) return QUIET;
    const sent = this.#sent;
    if (draining && sent.resumeSentOn(t.id)) return QUIET; // a rotation must complete first
    if ((state === 'finishing' && sent.finishSentOn(t.id)) || (state === 'pausing' && sent.pauseSentOn(t.id))) return QUIET;
    const outbox = this.#outbox;
    let firstFrame: PumpResult['firstFrame'];
    // Finishing past the drain wait (acks stalled, the socket alive), every remaining sample goes out at
    // once, past the window: the socket is ordered, so the finish that follows reaches the server after
    // all of them. Before the deadline the window paces as ever: a burst is only for a stalled path.
    const windowed = state !== 'finishing' || this.#now() < sent.drainDeadline;
    while (!windowed || outbox.inFlight < this.#limits.maxInFlightSamples) {
      const frame = outbox.nextFrame(epoch, draining);
      if (frame === null) break;
      t.send(frame.bytes);
      this.#framesSent++;
      this.#bytesSent += frame.bytes.byteLength;
      if (!this.#firstFrameSent) {
        this.#firstFrameSent = true;
        firstFrame = { startSample: frame.startSample, epoch };
      }
    }
    const control = draining ? this.#endDrain(t, state) : undefined;
    const gaps = outbox.takeGaps(); // an overflow nextFrame() found
    const declared = gaps.length > 0;
    if (!declared && firstFrame === undefined && control === undefined) return QUIET;
    return { ...(declared ? { gaps } : {}), ...(firstFrame !== undefined ? { firstFrame } : {}), ...(control !== undefined ? { control } : {}) };
  }

  /**
   * Go ahead once everything is sent and acknowledged, or when the drain wait ran out (finishing,
   * everything is sent by then; pausing, the window may be full with no acknowledgement coming).
   * Returns what went out.
   */
  #endDrain(t: SocketTransport, state: SessionState): PumpResult['control'] {
    const outbox = this.#outbox;
    const drained = outbox.unsent === 0 && outbox.acked >= outbox.produced;
    if (!drained && this.#now() < this.#sent.drainDeadline) return undefined;
    const capturedSamples = String(outbox.produced);
    if (state === 'finishing') {
      this.#sent.finishSent(t.id);
      t.sendJson({ type: 'session.finish', capturedSamples });
      return 'session.finish';
    }
    this.#sent.pauseSent(t.id);
    t.sendJson({ type: 'session.pause', capturedSamples });
    return 'session.pause';
  }

  /** session.resume {epoch} on `socket`, once per socket (rotation or resume after pause). Returns whether it went out. */
  resume(socket: SocketTransport | undefined, epoch: number): boolean {
    if (this.#halted || socket === undefined || this.#sent.resumeSentOn(socket.id)) return false;
    this.#sent.resumeSent(socket.id);
    socket.sendJson({ type: 'session.resume', epoch });
    return true;
  }
}
