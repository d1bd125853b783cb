import { REALTIME } from '../../protocol.js';
import { ACK_WATCH, type AckWatchTiming } from './ack-watch-options.js';
import type { AudioStats } from '../audio/outbox.js';
import { SendBacklog } from './send-backlog.js';
import type { SessionHealth } from '../health/health-meter.js';
import type { SessionState } from '../session-state.js';

/** What the session reads for each check. */
export interface AckView {
  readonly now: number;
  /** The current socket said session.ready. */
  readonly ready: boolean;
  readonly state: SessionState;
  /** Sent but not acknowledged. */
  readonly inFlightSamples: number;
  /** The acknowledged position; any advance is progress. */
  readonly acked: number;
  /** The socket's bufferedAmount: bytes not yet handed to the network (a floor under the backlog). */
  readonly bufferedBytes?: number;
}

/**
 * What to do, returned by check():
 *
 *   probe     send `{ type: 'ping', id }` on the current socket
 *   health    the acks stopped (degraded) or came back (healthy): tell the user
 *   replace   the probe went unanswered: drop the socket as half-open and reconnect (resume from the server's cursor)
 */
export type AckDecision =
  | { readonly do: 'probe'; readonly id: string }
  | { readonly do: 'health'; readonly state: 'healthy' | 'degraded'; readonly reason: string }
  | { readonly do: 'replace'; readonly reason: string; readonly silentMs: number; readonly waitedMs: number };

const NOTHING: readonly AckDecision[] = Object.freeze([]);

/** The states in which the server acknowledges what is sent; paused and idle the heartbeat watches alone. */
const ACKED_STATES: readonly SessionState[] = ['streaming', 'pausing', 'finishing', 'rotating'];

const SAMPLES_PER_MS = REALTIME.sampleRate / 1000;

/** The `health` event for a decision, with the audio waiting on the server from the outbox's stats. */
export function healthReport(decision: { readonly state: SessionHealth['state']; readonly reason: string }, stats: AudioStats): Pick<SessionHealth, 'state' | 'reason' | 'unackedMs' | 'bufferedMs'> {
  return {
    state: decision.state,
    reason: decision.reason,
    unackedMs: Math.round(stats.unackedSamples / SAMPLES_PER_MS),
    bufferedMs: Math.round(stats.bufferedSamples / SAMPLES_PER_MS),
  };
}

/**
 * Half-open detection driven by the acknowledgements, for a session that is sending. A socket can look
 * open and carry nothing (a NAT mapping gone, a stalled path): the acks stop first. The watchdog then
 * probes with a `ping`: the server answers it in order, after every frame sent before it, so a `pong`
 * proves the path works both ways and the socket stays (the server is slow or withholding acks, and
 * audio keeps going out; finishing, the finish follows it). No `pong` within probeTimeoutMs: replaced.
 *
 * Timing, the session's `ackWatch` option (ack-watch-options.ts; defaults ACK_WATCH). The server acks at
 * least every `ackIntervalMs` (50 ms) while frames arrive, so half a second without one is news, long
 * before the heartbeat (25 s) would tell:
 *
 *   degradedAfterMs   ack silence with audio in flight before `health` says degraded
 *   probeAfterMs      ack silence before a `ping` probes the socket
 *   probeTimeoutMs    a probe unanswered this long (plus the backlog's time): the socket is half-open.
 *                     A stall shorter than probeAfterMs + probeTimeoutMs (1.5 s) never reconnects
 *   probeEveryMs      the socket answered but acks still do not come (a server withholding or delaying
 *                     them): probe again this often, so a path that dies later is still caught
 *   maxBacklogWaitMs  the most the deadline grows for the audio queued ahead of the ping
 *
 * A pong cannot overtake the audio sent before its ping, so the deadline is set when the probe goes out:
 * probeTimeoutMs, plus the time the audio queued ahead of it needs at the throughput the acks showed
 * (SendBacklog), at most maxBacklogWaitMs more. Liveness is only ever what the peer proves (an ack
 * advancing, the pong); what is queued only buys the pong time to come. On a path that kept up with the
 * audio, little is queued, and a half-open socket is caught as fast as without it.
 *
 * Idle or paused sessions send nothing and expect no acks: the heartbeat covers them. Decisions only:
 * the session owns the socket, the timer that calls check(), and the events; this keeps the clock
 * readings of the current socket (reset() for a new one).
 */
export class AckWatchdog {
  /** Since when acks have been awaited without progress; undefined when nothing is awaited. */
  #since: number | undefined;
  #lastAcked = -1;
  #probeSeq = 0;
  #probeId: string | undefined;
  #probeSentAt = 0;
  /** How long the outstanding probe may take: probeTimeoutMs and the backlog's time ahead of it. */
  #probeWaitMs = 0;
  #answeredAt: number | undefined;
  #degraded = false;
  readonly #backlog = new SendBacklog();

  constructor(private readonly timing: AckWatchTiming = ACK_WATCH) {}

  /** Whether the last health told was degraded. */
  get degraded(): boolean {
    return this.#degraded;
  }

  /** A new socket (session.ready): timing starts afresh on it; a degraded health stays until acks move. */
  reset(): void {
    this.#since = undefined;
    this.#probeId = undefined;
    this.#answeredAt = undefined;
    this.#backlog.interrupt();
  }

  /** A `pong` arrived on the current socket. */
  answered(id: unknown, now: number): void {
    if (this.#probeId === undefined || id !== this.#probeId) return;
    this.#probeId = undefined;
    this.#answeredAt = now;
  }

  /** Called on a steady tick (and whenever convenient): what to do now. */
  check(view: AckView): readonly AckDecision[] {
    const { now } = view;
    const watching = view.ready && ACKED_STATES.includes(view.state);
    const progressed = view.acked !== this.#lastAcked;
    this.#lastAcked = view.acked;
    if (watching) this.#backlog.observe(now, view.acked, view.inFlightSamples, view.bufferedBytes);
    else this.#backlog.interrupt();
    if (!watching || view.inFlightSamples <= 0 || progressed) {
      this.#since = watching && view.inFlightSamples > 0 ? now : undefined;
      this.#probeId = undefined;
      this.#answeredAt = undefined;
      // Healthy again once acks move or everything sent is acknowledged on a ready socket; not merely
      // because nothing is watched (the socket down, paused).
      const recovered = watching && (progressed || view.inFlightSamples <= 0);
      if (!this.#degraded || !recovered) return NOTHING;
      this.#degraded = false;
      return [{ do: 'health', state: 'healthy', reason: 'acknowledgements flowing' }];
    }
    if (this.#since === undefined) {
      this.#since = now;
      return NOTHING;
    }
    const silentMs = now - this.#since;
    const waitedMs = now - this.#probeSentAt;
    if (this.#probeId !== undefined && waitedMs >= this.#probeWaitMs) {
      return [{ do: 'replace', reason: `no acknowledgement for ${silentMs} ms and the probe unanswered for ${waitedMs} ms: half-open socket`, silentMs, waitedMs }];
    }
    const decisions: AckDecision[] = [];
    if (!this.#degraded && silentMs >= this.timing.degradedAfterMs) {
      this.#degraded = true;
      decisions.push({ do: 'health', state: 'degraded', reason: `no acknowledgement for ${silentMs} ms` });
    }
    const probeDue = this.#answeredAt === undefined ? silentMs >= this.timing.probeAfterMs : now - this.#answeredAt >= this.timing.probeEveryMs;
    if (this.#probeId === undefined && probeDue) {
      this.#probeId = `ack-${++this.#probeSeq}`;
      this.#probeSentAt = now;
      this.#probeWaitMs = this.timing.probeTimeoutMs + Math.min(this.timing.maxBacklogWaitMs, this.#backlog.drainMs());
      decisions.push({ do: 'probe', id: this.#probeId });
    }
    return decisions.length === 0 ? NOTHING : decisions;
  }
}
