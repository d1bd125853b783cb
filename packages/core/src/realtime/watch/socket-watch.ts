import { CLOSE_CODES } from '../../protocol.js';
import { ackWatchTiming } from './ack-watch-options.js';
import { AckWatchdog, type AckDecision, type AckView } from './ack-watchdog.js';
import { HeartbeatWatchdog } from './heartbeat-watchdog.js';

/**
 * What the watch says about the current socket:
 *
 *   probe   send `{ type: 'ping', id }` on it
 *   health  the acks stopped (degraded) or came back (healthy): tell the user
 *   drop    it is dead, half-open or never became ready: terminate it and recover as from a loss with `code`
 */
export type WatchDecision =
  | Exclude<AckDecision, { readonly do: 'replace' }>
  | { readonly do: 'drop'; readonly code: number | undefined; readonly reason: string };

const NOTHING: readonly WatchDecision[] = Object.freeze([]);

/**
 * Whether the current socket is still worth keeping, checked on one tick that the session runs from the
 * socket's open to its loss:
 *
 *   open ──(connectTimeoutMs without session.ready)──► drop 'connect timeout'
 *   ready ─(nothing heard for the heartbeat timeout, any state)──► drop 'heartbeat timeout'
 *         └(acks stop while sending: degraded, probe, unanswered)──► drop (ack-watchdog.ts;
 *            not with `ackWatch: false`: then the heartbeat alone watches a sending session)
 *
 * Decisions only: the session owns the socket, the tick's timer and the events; this keeps the clock
 * readings of the current socket.
 */
export class SocketWatch {
  readonly #heartbeat = new HeartbeatWatchdog();
  /** Undefined with `ackWatch: false`. */
  readonly #acks: AckWatchdog | undefined;
  /** The shortest ack timing: the tick must be fine enough for it too. */
  readonly #ackStepMs: number;
  /** Until session.ready: the connect deadline. */
  #connectBy: number | undefined;
  #tickMs = 100;

  /** `ackWatch`: the session's option, checked here (a ValidationError lists what is wrong). */
  constructor(ackWatch?: unknown) {
    const timing = ackWatchTiming(ackWatch);
    this.#acks = timing === null ? undefined : new AckWatchdog(timing);
    this.#ackStepMs = timing === null ? Number.POSITIVE_INFINITY : Math.min(timing.degradedAfterMs, timing.probeAfterMs, timing.probeTimeoutMs, timing.probeEveryMs);
  }

  /** A socket was opened: it has connectTimeoutMs to say session.ready. */
  opened(now: number, connectTimeoutMs: number): void {
    this.#connectBy = now + connectTimeoutMs;
    this.#tickMs = tickFor(connectTimeoutMs);
  }

  /** session.ready on it: the heartbeat and the acks are watched from now. */
  ready(now: number, heartbeatTimeoutMs: number): void {
    this.#connectBy = undefined;
    this.#heartbeat.start(now, heartbeatTimeoutMs);
    this.#acks?.reset();
    this.#tickMs = tickFor(Math.min(heartbeatTimeoutMs, this.#ackStepMs));
  }

  /** How often to check: fine enough for the deadline watched (a fifth of it), at most every 100 ms. */
  get tickMs(): number {
    return this.#tickMs;
  }

  /** Something arrived on the current socket. */
  heard(now: number): void {
    this.#heartbeat.touch(now);
  }

  /** A `pong` arrived on the current socket. */
  answered(id: unknown, now: number): void {
    this.#acks?.answered(id, now);
  }

  check(view: AckView): readonly WatchDecision[] {
    if (this.#connectBy !== undefined) return view.now >= this.#connectBy ? [{ do: 'drop', code: undefined, reason: 'connect timeout' }] : NOTHING;
    if (this.#heartbeat.expired(view.now)) return [{ do: 'drop', code: CLOSE_CODES.HEARTBEAT_TIMEOUT, reason: 'heartbeat timeout' }];
    if (this.#acks === undefined) return NOTHING;
    const decisions = this.#acks.check(view);
    const replace = decisions.find((d) => d.do === 'replace');
    return replace === undefined ? (decisions as readonly WatchDecision[]) : [{ do: 'drop', code: CLOSE_CODES.HEARTBEAT_TIMEOUT, reason: replace.reason }];
  }
}

function tickFor(timeoutMs: number): number {
  return Math.max(5, Math.min(100, Math.floor(timeoutMs / 5)));
}
