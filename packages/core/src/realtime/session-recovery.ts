import { isNotFoundError } from '../errors/guards.js';
import { CLOSE_CODES, FINAL_CLOSE_CODES, TERMINAL_STATUSES } from '../protocol.js';
import type { RealtimeSession } from '../types/realtime.js';
import { DefaultReconnectPolicy, type ReconnectPolicy } from './reconnect-policy.js';
import { RealtimeError } from './realtime-error.js';
import type { SessionOwnEvents } from './session-events.js';
import type { RealtimeRest } from './session-options.js';
import type { SessionState } from './session-state.js';
import { MAX_TIMER_MS } from './timer-set.js';

/** What recovery needs from the session. Every callback re-reads state: an await may have ended it. */
export interface RecoveryHost {
  readonly sessionId: string;
  readonly rest: RealtimeRest | undefined;
  /** Aborted when the session ends (close(), the connect signal, an aborted or timed-out finish): stops REST calls. */
  readonly signal: AbortSignal;
  readonly state: SessionState;
  readonly terminal: boolean;
  /** A socket said session.ready at least once (a reconnect, not the first connect). */
  readonly everReady: boolean;
  /** finish() was called: a REST finish is the fallback when the socket cannot carry it. */
  readonly finishRequested: boolean;
  /** The current socket said session.ready. */
  readonly socketReady: boolean;
  readonly lastSocketError: string;
  readonly capturedSamples: number;
  setState(next: SessionState, reason: string): void;
  fail(error: Error, reason: string): void;
  openSocket(): void;
  /** The final view arrived (socket, REST finish or GET of a session finished elsewhere). */
  finished(view: RealtimeSession, reason: string): void;
  later(ms: number, run: () => void): void;
  now(): number;
  emitReconnecting(info: Parameters<SessionOwnEvents['reconnecting']>[0]): void;
  emitRecoveryExpired(info: Parameters<SessionOwnEvents['recovery.expired']>[0]): void;
}

/**
 * The socket is gone: end, reconnect, or save the result over REST.
 *
 *   socket lost ──final close code──► 4410: finish over REST · 4409: read the final view · else failed
 *        │
 *        └──► reconnecting ──(policy delay)──► GET session ──► socket ──► session.ready
 *                   │                              │ finished elsewhere ─► finished
 *                   │                              │ recoveryExpired ────► finish over REST
 *                   └─ policy gives up ─► finish requested and REST: finish over REST, else failed
 *
 * finish() while the socket is down keeps reconnecting: a socket that comes back carries the buffered
 * audio and the finish with nothing lost. It finishes over REST instead (exact capturedSamples; audio
 * not delivered is declared as a gap and the server marks it TRANSPORT_GAP) only when the recovery
 * window expired, the policy gave up, or the finish's own deadline is restFinishReserveMs away (a REST
 * finish needs that time: the server may wait ~8 s for supplements). finish always settles and always
 * saves what the server received.
 */
export class SessionRecovery {
  #policy: ReconnectPolicy;
  #customPolicy: boolean;
  #lossStartedAt: number | undefined;
  #attempt = 0;
  /** finish()'s deadline (host clock), once it was called; Infinity when it has none. */
  #finishDeadline: number | undefined;
  /** A check of the finish deadline is scheduled (one at a time). */
  #fallbackArmed = false;
  #restFinishing = false;

  constructor(private readonly host: RecoveryHost, policy: ReconnectPolicy | undefined, recoveryWindowMs: number, private readonly restFinishReserveMs: number) {
    this.#customPolicy = policy !== undefined;
    this.#policy = policy ?? defaultPolicy(recoveryWindowMs);
  }

  /** session.ready arrived: the outage is over. Returns the attempt that made it. */
  recovered(recoveryWindowMs: number | undefined): number {
    const attempt = this.#attempt;
    this.#lossStartedAt = undefined;
    this.#attempt = 0;
    if (!this.#customPolicy && recoveryWindowMs !== undefined) this.#policy = defaultPolicy(recoveryWindowMs);
    return attempt;
  }

  /** The current socket closed or was dropped (its listeners are already gone). */
  lost(code: number | undefined, reason: string): void {
    const host = this.host;
    if (host.terminal) return;
    if (code !== undefined && FINAL_CLOSE_CODES.includes(code)) {
      this.#finalClose(code, reason);
      return;
    }
    // A refused upgrade (`ws`: "Unexpected server response: 401") will be refused again.
    const refused = /Unexpected server response: (400|401|403|404)/.exec(host.lastSocketError);
    if (refused !== null) {
      host.fail(RealtimeError.socketRefused(`HTTP ${refused[1]}`), `socket refused (HTTP ${refused[1]})`);
      return;
    }
    this.#schedule(code, reason);
    if (host.finishRequested) this.#watchFinishDeadline();
  }

  /**
   * finish() was called with this deadline (host clock; Infinity: none). While the socket is down the
   * session keeps reconnecting until restFinishReserveMs before it, then finishes over REST.
   */
  finishRequested(deadline: number): void {
    this.#finishDeadline = deadline;
    if (!this.host.socketReady) this.#watchFinishDeadline();
  }

  /** Checks now and again at (deadline - reserve) whether the socket is still down; then REST. */
  #watchFinishDeadline(): void {
    const deadline = this.#finishDeadline;
    if (this.#fallbackArmed || deadline === undefined || !Number.isFinite(deadline) || this.host.rest === undefined) return;
    const check = (): void => {
      this.#fallbackArmed = false;
      if (this.host.terminal || this.host.socketReady) return; // a later loss checks again (lost())
      const left = deadline - this.restFinishReserveMs - this.host.now();
      if (left > 0) {
        this.#fallbackArmed = true;
        this.host.later(Math.min(left, MAX_TIMER_MS), check); // checked again then
      } else {
        void this.finishOverRest('socket down near the finish deadline', false);
      }
    };
    check();
  }

  /**
   * Saves the result over REST with the exact capturedSamples: the server settles what it received,
   * and what it did not is declared a gap here and a TRANSPORT_GAP there.
   */
  async finishOverRest(why: string, expired: boolean): Promise<void> {
    const host = this.host;
    const rest = host.rest;
    if (host.terminal || this.#restFinishing) return;
    if (rest === undefined) {
      if (expired) host.emitRecoveryExpired({ finishedOverRest: false });
      host.fail(expired ? RealtimeError.recoveryWindowExpired() : RealtimeError.closed('finish'), why);
      return;
    }
    this.#restFinishing = true;
    if (expired) host.emitRecoveryExpired({ finishedOverRest: true });
    host.setState('finishing', why);
    try {
      const view = await rest.finish(host.sessionId, String(host.capturedSamples), { signal: host.signal });
      // The socket's session.finished may have won the race (same settlement): finished() ignores this one.
      host.finished(view, `${why}: finished over REST`);
    } catch (caught) {
      host.fail(caught instanceof Error ? caught : RealtimeError.recoveryWindowExpired(), `${why}; REST finish failed`);
    } finally {
      this.#restFinishing = false;
    }
  }

  #finalClose(code: number, reason: string): void {
    const host = this.host;
    switch (code) {
      case CLOSE_CODES.RECOVERY_WINDOW_EXPIRED:
        void this.finishOverRest('recovery window expired', true);
        return;
      case CLOSE_CODES.SESSION_FINISHED:
        // session.finished normally arrived just before; if not, read the final view over REST.
        void this.#finishedElsewhere(reason);
        return;
      case CLOSE_CODES.REPLACED:
        host.fail(RealtimeError.replaced(), reason);
        return;
      case CLOSE_CODES.SESSION_NOT_FOUND:
        host.fail(RealtimeError.sessionNotFound(code), reason);
        return;
      default:
        host.fail(RealtimeError.protocolViolation(code, reason), reason);
    }
  }

  #schedule(code: number | undefined, reason: string): void {
    const host = this.host;
    const now = host.now();
    if (this.#lossStartedAt === undefined) {
      this.#lossStartedAt = now;
      this.#attempt = 0;
    }
    if (host.state !== 'connecting') host.setState('reconnecting', reason);
    const delay = this.#policy.nextRetryDelayMs({ attempt: this.#attempt, elapsedMs: now - this.#lossStartedAt, closeCode: code, reason });
    // A reconnectable close the server explained: typed, so an app can tell "you read too slowly"
    // from a network loss.
    const error = code === CLOSE_CODES.SLOW_CONSUMER ? RealtimeError.slowConsumer() : undefined;
    if (delay === null) {
      if (host.finishRequested && host.rest !== undefined) void this.finishOverRest(`reconnect gave up (${reason})`, false);
      else host.fail(RealtimeError.reconnectExhausted(reason, error), `reconnect gave up: ${reason}`);
      return;
    }
    host.emitReconnecting({ attempt: this.#attempt + 1, delayMs: delay, reason, closeCode: code, ...(error !== undefined ? { error } : {}) });
    host.later(delay, () => {
      this.#attempt += 1;
      void this.#reconnect();
    });
  }

  /** One attempt: read the session over REST when we can (it may have ended meanwhile), then the socket. */
  async #reconnect(): Promise<void> {
    const host = this.host;
    const waiting = (): boolean => !this.#restFinishing && (host.state === 'reconnecting' || host.state === 'connecting');
    if (!waiting()) return;
    const rest = host.rest;
    if (rest !== undefined && host.everReady) {
      let view: RealtimeSession;
      try {
        view = await rest.get(host.sessionId, { signal: host.signal });
      } catch (caught) {
        if (host.terminal) return;
        if (isNotFoundError(caught)) {
          host.fail(RealtimeError.sessionNotFound(), 'session not found');
          return;
        }
        this.#schedule(undefined, `GET session failed: ${caught instanceof Error ? caught.message : String(caught)}`);
        return;
      }
      if (!waiting()) return;
      if ((TERMINAL_STATUSES as readonly string[]).includes(view.status)) {
        host.finished(view, 'the session was finished elsewhere');
        return;
      }
      if (view.connection?.recoveryExpired === true) {
        // No socket will be accepted again: save the result now instead of being refused with 4410.
        void this.finishOverRest('recovery window expired', true);
        return;
      }
    }
    host.openSocket();
  }

  async #finishedElsewhere(reason: string): Promise<void> {
    const host = this.host;
    const rest = host.rest;
    if (rest === undefined) {
      host.fail(RealtimeError.closed('finish'), reason);
      return;
    }
    try {
      const view = await rest.get(host.sessionId, { signal: host.signal });
      host.finished(view, 'the session was finished elsewhere');
    } catch (caught) {
      host.fail(caught instanceof Error ? caught : RealtimeError.closed('finish'), reason);
    }
  }
}

/**
 * The default policy retries a little past the server's recovery window: the attempt after the window
 * is answered with close 4410, which is what lets the session be finished over REST and saved.
 */
function defaultPolicy(recoveryWindowMs: number): ReconnectPolicy {
  return new DefaultReconnectPolicy({ maxElapsedMs: recoveryWindowMs + 5000 });
}
