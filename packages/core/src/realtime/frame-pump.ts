import type { AudioOutbox } from './audio-outbox.js';
import type { SessionState } from './session-state.js';
import { SocketSends } from './socket-sends.js';
import type { SocketTransport } from './socket-transport.js';

/** The questions others may ask of what was sent on which socket (answers only; the pump records). */
export type SentOnSocket = Pick<SocketSends, 'finishSentOn' | 'pauseSentOn' | 'resumeSentOn'>;

/** What the pump reads from the session; every call re-reads it (the state may have moved on). */
export interface PumpHost {
  /** The current socket once session.ready arrived on it, else undefined. */
  readySocket(): SocketTransport | undefined;
  readonly state: SessionState;
  readonly epoch: number;
  onFirstFrame(startSample: number, epoch: number): void;
}

/**
 * The sending side of the session: frames from the outbox within the in-flight window, then the
 * pause or finish message once everything is acknowledged, or once the drain wait ran out.
 *
 * The drain wait bounds both the acknowledgement of what was sent and the sending of what was not:
 * with the window full and no acknowledgement coming (a stalled path, a server withholding acks), the
 * control message goes out anyway at the deadline. The server then settles on what it received; what it
 * did not is never lost silently: a finish declares it as a gap (cause `undelivered`, TRANSPORT_GAP on
 * the server), a pause keeps it in the ring and sends it in the next epoch.
 *
 * Control messages are remembered per socket (transport id): each goes out once per socket, and a new
 * socket (whose session.ready resets them and restarts the drain wait) sends what is still owed again.
 * Once one went out on a socket no more frames are sent on it: the server stops accepting there.
 */
export class FramePump {
  /** Transport id on which session.finish / session.pause / session.resume was sent, and the drain deadline. */
  readonly #sent = new SocketSends();
  #firstFrameSent = false;
  /** The server refuses all audio for good (balance used up): nothing is sent again. */
  #halted = false;

  constructor(
    private readonly outbox: AudioOutbox,
    private readonly limits: { readonly maxInFlightSamples: number; readonly drainTimeoutMs: number },
    private readonly now: () => number,
    private readonly later: (ms: number, run: () => void) => void,
    private readonly host: PumpHost,
  ) {}

  /** pause() or finish(): wait for the acknowledgement at most drainTimeoutMs, then go ahead anyway. */
  startDrain(): void {
    this.#sent.drainUntil(this.now() + this.limits.drainTimeoutMs);
    this.later(this.limits.drainTimeoutMs + 1, () => this.pump());
  }

  /**
   * A new socket said session.ready: nothing owed was sent on it yet. A drain in progress gets a fresh
   * wait on it (the old deadline may have passed during the outage; the audio buffered meanwhile
   * deserves the same chance to be acknowledged).
   */
  newSocket(draining: boolean): void {
    this.#sent.reset();
    if (draining) this.startDrain();
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

  /** Sends what the state and the in-flight window allow; then pause/finish messages once drained. */
  pump(): void {
    if (this.#halted) return;
    const t = this.host.readySocket();
    if (t === undefined || !t.open) return;
    const state = this.host.state;
    const draining = state === 'pausing' || state === 'finishing';
    if (state !== 'streaming' && !draining) return;
    const sent = this.#sent;
    if (draining && sent.resumeSentOn(t.id)) return; // a rotation must complete first
    if ((state === 'finishing' && sent.finishSentOn(t.id)) || (state === 'pausing' && sent.pauseSentOn(t.id))) return;
    const outbox = this.outbox;
    const epoch = this.host.epoch;
    while (outbox.inFlight < this.limits.maxInFlightSamples) {
      const frame = outbox.nextFrame(epoch, draining);
      if (frame === null) break;
      t.send(frame.bytes);
      if (!this.#firstFrameSent) {
        this.#firstFrameSent = true;
        this.host.onFirstFrame(frame.startSample, epoch);
      }
    }
    if (!draining) return;
    // Go ahead once everything is sent and acknowledged, or when the drain wait ran out, whatever is
    // still unsent (the in-flight window may be full with no acknowledgement coming).
    const drained = outbox.unsent === 0 && outbox.acked >= outbox.produced;
    if (!drained && this.now() < sent.drainDeadline) return;
    const captured = String(outbox.produced);
    if (state === 'finishing') {
      sent.finishSent(t.id);
      t.sendJson({ type: 'session.finish', capturedSamples: captured });
    } else {
      sent.pauseSent(t.id);
      t.sendJson({ type: 'session.pause', capturedSamples: captured });
    }
  }

  /** session.resume {epoch} once per socket (rotation or resume after pause). */
  sendResume(epoch: number): void {
    if (this.#halted) return;
    const t = this.host.readySocket();
    if (t === undefined || this.#sent.resumeSentOn(t.id)) return;
    this.#sent.resumeSent(t.id);
    t.sendJson({ type: 'session.resume', epoch });
  }
}
