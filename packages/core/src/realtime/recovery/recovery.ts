import { NotFoundError } from '../../errors/api-errors.js';
import { isSoundCloneError } from '../../errors/guards.js';
import { CLOSE_CODES, TERMINAL_STATUSES } from '../../protocol.js';
import type { RealtimeSession } from '../../types/realtime.js';
import { DefaultReconnectPolicy, type ReconnectPolicy } from './reconnect-policy.js';
import { RealtimeError } from '../../errors/realtime-error.js';
import { ValidationError } from '../../errors/client-errors.js';
import type { RealtimeSessionEvents } from '../session-events.js';
import type { SessionState } from '../session-state.js';
import { ConnectionStability } from './connection-stability.js';
import { classifyLoss } from './loss-classes.js';
import { MAX_TIMER_MS } from '../plumbing/timer-set.js';
import { SESSION_OPTIONS } from '../options/defaults.js';

/** What recovery is told of the session each time it is asked (read at that moment: an await may have ended it). */
export interface RecoveryFacts {
  readonly state: SessionState;
  readonly terminal: boolean;
  /** finish() was called: a REST finish is the fallback when the socket cannot carry it. */
  readonly finishRequested: boolean;
  /** The current socket said session.ready. */
  readonly socketReady: boolean;
  /** A REST client was given: the session can be read and finished over REST. */
  readonly hasRest: boolean;
  /** A credentials provider was given: a refused credential is refreshed on the next attempt. */
  readonly canRefresh: boolean;
  readonly now: number;
}

/**
 * What the session does next about a lost socket, in this order. Recovery decides; the session (the
 * one owner of the state, the timers, the socket and the REST calls) runs these.
 *
 *   reconnecting    enter `reconnecting` (not from `connecting`); the retry, the fail or the REST finish follows
 *   retry           emit `reconnecting`, wait delayMs, attemptStarted(), then GET the session and reconnect
 *   fail            end `failed` with error
 *   finishOverRest  save the result over REST with the exact capturedSamples (expired: the recovery window)
 *   readFinalView   the server finished it (close 4409 without session.finished): GET the final view
 *   finished        the session was finished elsewhere: this is its final view
 *   openSocket      open a new socket
 *   checkDeadline   ask finishDeadlineDue() after delayMs (finish() was called with the socket down)
 */
export type RecoveryAction =
  | { readonly do: 'reconnecting'; readonly code: number | undefined; readonly reason: string }
  | { readonly do: 'retry'; readonly delayMs: number; readonly info: Parameters<RealtimeSessionEvents['reconnecting']>[0]; readonly flapping?: { readonly reason: string } }
  | { readonly do: 'fail'; readonly error: Error; readonly reason: string }
  | { readonly do: 'finishOverRest'; readonly why: string; readonly expired: boolean }
  | { readonly do: 'readFinalView'; readonly reason: string }
  | { readonly do: 'finished'; readonly view: RealtimeSession; readonly reason: string }
  | { readonly do: 'openSocket' }
  | { readonly do: 'checkDeadline'; readonly delayMs: number };

const NOTHING: readonly RecoveryAction[] = [];

/** The reason (and the health's `lastReconnect.cause`) of a reconnect because the server recycled the socket. */
export const RECYCLED = 'recycled';

/** Refused credentials in a row after which fresh ones are not believed to help. */
const MAX_REFRESHES = 3;

/**
 * The socket is gone: end, reconnect, or save the result over REST. Decisions only: every method
 * returns the actions to run and keeps the outage's bookkeeping (attempts, the policy, the finish
 * deadline); it neither changes the state nor touches a socket, a timer or the REST client.
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
  readonly #customPolicy: boolean;
  #lossStartedAt: number | undefined;
  /** Attempts of the current run: kept across connections that came back but were not stable. */
  #attempt = 0;
  readonly #stability: ConnectionStability;
  /** Credentials refused in a row (refresh losses since the last ready). */
  #refreshes = 0;
  /** finish()'s deadline (session clock), once it was called; Infinity when it has none. */
  #finishDeadline: number | undefined;
  /** A check of the finish deadline is scheduled (one at a time). */
  #fallbackArmed = false;
  /**
   * The socket is being replaced because the server recycles it (close 4002, or the standby the session
   * opened on socket.recycle): until the next ready this takes nothing from the budget.
   */
  #recycling = false;

  constructor(policy: ReconnectPolicy | undefined, recoveryWindowMs: number, private readonly restFinishReserveMs: number, stableWindowMs: number = SESSION_OPTIONS.stableWindowMs.default) {
    this.#customPolicy = policy !== undefined;
    this.#policy = policy ?? defaultPolicy(recoveryWindowMs);
    this.#stability = new ConnectionStability(stableWindowMs);
  }

  /** How long a connection must stay ready before the budget starts over: ask steady() then. */
  get stableWindowMs(): number {
    return this.#stability.stableWindowMs;
  }

  /**
   * session.ready arrived: the outage is over (its time budget ends), not the run of attempts: that
   * starts over once the connection has been stable (steady()). Returns the attempt that made it.
   */
  recovered(recoveryWindowMs: number | undefined, now: number): number {
    // A recycle is attempt 0: not one of the budget's.
    const attempt = this.#recycling ? 0 : this.#attempt;
    this.#lossStartedAt = undefined;
    this.#refreshes = 0;
    this.#stability.ready(now, this.#recycling);
    this.#recycling = false;
    if (!this.#customPolicy && recoveryWindowMs !== undefined) this.#policy = defaultPolicy(recoveryWindowMs);
    return attempt;
  }

  /**
   * The session promoted the socket it opened on socket.recycle (socket/handoff.ts): the connection
   * carries on. Nothing is counted: no attempt, no loss toward flapping, the stable time goes on.
   */
  handoff(): void {
    this.#recycling = true;
  }

  /** Milliseconds until the ready connection has been up for stableWindowMs (0: ask steady() now). */
  stableInMs(now: number): number {
    return this.#stability.remainingMs(now);
  }

  /**
   * The connection made ready at least stableWindowMs ago is still ready: the budget starts over. Returns
   * the `healthy` report to emit when this ends a flapping run.
   */
  steady(now: number): { readonly state: 'healthy'; readonly reason: string } | undefined {
    const { stable, endsFlapping } = this.#stability.steady(now);
    if (stable) this.#attempt = 0;
    return endsFlapping ? { state: 'healthy', reason: `connection stable for ${this.#stability.stableWindowMs} ms` } : undefined;
  }

  /**
   * The current socket closed or was dropped. refusedStatus: the HTTP status its upgrade was refused
   * with, where the platform tells it (`ws`; a browser does not, and its refusal is retried as a loss).
   */
  lost(code: number | undefined, reason: string, refusedStatus: number | undefined, facts: RecoveryFacts): readonly RecoveryAction[] {
    if (facts.terminal) return NOTHING;
    // loss-classes.ts: one table says fatal, refresh (fresh credentials from the provider) or retry.
    const lossClass = classifyLoss(code, refusedStatus, facts.canRefresh && this.#refreshes < MAX_REFRESHES);
    // The server's socket lifetime ran out (4002): routine. Reconnect at once, outside the policy; the
    // stability clock is not told of a loss (the link did not drop). Should that reconnect fail, the
    // failure is a loss like any other and the budget counts from there.
    this.#recycling = lossClass === 'recycle' && this.#lossStartedAt === undefined;
    if (this.#recycling) return [{ do: 'reconnecting', code, reason: RECYCLED }, ...this.#nextAttempt(code, RECYCLED, facts.now, facts), ...this.#watchFinishDeadline(facts)];
    if (lossClass === 'fatal') {
      // Bad key, token or request: asking again gets the same answer.
      if (refusedStatus !== undefined) return [{ do: 'fail', error: RealtimeError.socketRefused(`HTTP ${refusedStatus}`), reason: `socket refused (HTTP ${refusedStatus})` }];
      if (code !== undefined) return [finalClose(code, reason)];
    }
    if (lossClass === 'refresh') {
      this.#refreshes += 1;
      return this.#schedule(code, `${reason}: credentials refused, retrying with fresh ones`, facts);
    }
    return this.#schedule(code, reason, facts);
  }

  /**
   * finish() was called with this deadline (session clock; Infinity: none). While the socket is down the
   * session keeps reconnecting until restFinishReserveMs before it, then finishes over REST.
   */
  finishRequested(deadline: number, facts: RecoveryFacts): readonly RecoveryAction[] {
    this.#finishDeadline = deadline;
    return facts.socketReady ? NOTHING : this.#watchFinishDeadline(facts);
  }

  /** Checks now (and, through checkDeadline, again at deadline - reserve) whether the socket is still down. */
  #watchFinishDeadline(facts: RecoveryFacts): readonly RecoveryAction[] {
    const deadline = this.#finishDeadline;
    if (!facts.finishRequested || this.#fallbackArmed || deadline === undefined || !Number.isFinite(deadline) || !facts.hasRest) return NOTHING;
    return this.finishDeadlineDue(facts);
  }

  /** The check scheduled by checkDeadline is due. */
  finishDeadlineDue(facts: RecoveryFacts): readonly RecoveryAction[] {
    this.#fallbackArmed = false;
    if (facts.terminal || facts.socketReady) return NOTHING; // a later loss checks again (lost())
    const left = (this.#finishDeadline ?? Number.POSITIVE_INFINITY) - this.restFinishReserveMs - facts.now;
    if (left > 0) {
      this.#fallbackArmed = true;
      return [{ do: 'checkDeadline', delayMs: Math.min(left, MAX_TIMER_MS) }];
    }
    return [{ do: 'finishOverRest', why: 'socket down near the finish deadline', expired: false }];
  }

  /** Entering `reconnecting` (or still connecting): the policy says when to try again, or gives up. */
  #nextAttempt(code: number | undefined, reason: string, at: number, facts: RecoveryFacts): readonly RecoveryAction[] {
    const flapping = this.#stability.flapping;
    if (this.#recycling) return [{ do: 'retry', delayMs: 0, info: { attempt: 0, delayMs: 0, reason, closeCode: code, flapping, recycled: true } }];
    const delay = this.#policy.nextRetryDelayMs({ attempt: this.#attempt, elapsedMs: at - (this.#lossStartedAt ?? at), closeCode: code, reason, flapping });
    // A reconnectable close the server explained: typed, so an app can tell "you read too slowly"
    // from a network loss.
    const error = code === CLOSE_CODES.SLOW_CONSUMER ? RealtimeError.slowConsumer() : undefined;
    if (delay === null) {
      if (facts.finishRequested && facts.hasRest) return [{ do: 'finishOverRest', why: `reconnect gave up (${reason})`, expired: false }];
      return [{ do: 'fail', error: RealtimeError.reconnectExhausted(reason, error), reason: `reconnect gave up: ${reason}` }];
    }
    const info = { attempt: this.#attempt + 1, delayMs: delay, reason, closeCode: code, flapping, ...(error !== undefined ? { error } : {}) };
    const unstable = this.#stability.unstableLosses;
    return [{ do: 'retry', delayMs: delay, info, ...(flapping ? { flapping: { reason: `link flapping: ${unstable} connections lost within ${this.#stability.stableWindowMs} ms of coming back` } } : {}) }];
  }

  /** The retry's delay passed: this attempt counts (a recycle's does not). */
  attemptStarted(): void {
    if (!this.#recycling) this.#attempt += 1;
  }

  /** The GET before a reconnect read the session: finished elsewhere, past its recovery window, or reconnect. */
  viewRead(view: RealtimeSession): RecoveryAction {
    if ((TERMINAL_STATUSES as readonly string[]).includes(view.status)) return { do: 'finished', view, reason: 'the session was finished elsewhere' };
    // No socket will be accepted again: save the result now instead of being refused with 4410.
    if (view.connection?.recoveryExpired === true) return { do: 'finishOverRest', why: 'recovery window expired', expired: true };
    return { do: 'openSocket' };
  }

  /** The GET before a reconnect failed: a session that is gone ends here, anything else is retried. */
  viewFailed(caught: unknown, facts: RecoveryFacts): readonly RecoveryAction[] {
    if (facts.terminal) return NOTHING;
    if (isSoundCloneError(caught, NotFoundError)) return [{ do: 'fail', error: RealtimeError.sessionNotFound(), reason: 'session not found' }];
    return this.#schedule(undefined, `GET session failed: ${caught instanceof Error ? caught.message : String(caught)}`, facts, false);
  }

  /** The credentials provider failed: a provider returning the wrong thing ends the session, a failed call is retried. */
  credentialsFailed(caught: unknown, facts: RecoveryFacts): readonly RecoveryAction[] {
    if (facts.terminal) return NOTHING;
    if (caught instanceof ValidationError) return [{ do: 'fail', error: caught, reason: 'credentials provider returned no usable credentials' }];
    return this.#schedule(undefined, `credentials provider failed: ${caught instanceof Error ? caught.message : String(caught)}`, facts, false);
  }

  #schedule(code: number | undefined, reason: string, facts: RecoveryFacts, watch = true): readonly RecoveryAction[] {
    const at = facts.now;
    this.#recycling = false; // a failure on the way back from a recycle is a loss: the budget counts
    if (this.#lossStartedAt === undefined) {
      // A new outage. The run of attempts starts over only when the lost connection had been stable.
      this.#lossStartedAt = at;
      if (this.#stability.lost(at).fresh) this.#attempt = 0;
    }
    const next = this.#nextAttempt(code, reason, at, facts);
    // finish() with the socket down: its deadline is watched while the retries run (not when the policy
    // gave up: that ends it or finishes over REST already).
    const retries = next[0]?.do === 'retry';
    return [{ do: 'reconnecting', code, reason }, ...next, ...(watch && retries ? this.#watchFinishDeadline(facts) : NOTHING)];
  }
}

/** The server's final close codes: 4410 saves over REST, 4409 reads the final view, the rest fail. */
function finalClose(code: number, reason: string): RecoveryAction {
  switch (code) {
    case CLOSE_CODES.RECOVERY_WINDOW_EXPIRED:
      return { do: 'finishOverRest', why: 'recovery window expired', expired: true };
    case CLOSE_CODES.SESSION_FINISHED:
      // session.finished normally arrived just before; if not, read the final view over REST.
      return { do: 'readFinalView', reason };
    case CLOSE_CODES.REPLACED:
      return { do: 'fail', error: RealtimeError.replaced(), reason };
    case CLOSE_CODES.SESSION_NOT_FOUND:
      return { do: 'fail', error: RealtimeError.sessionNotFound(code), reason };
    default:
      return { do: 'fail', error: RealtimeError.protocolViolation(code, reason), reason };
  }
}

/**
 * The default policy retries a little past the server's recovery window: the attempt after the window
 * is answered with close 4410, which is what lets the session be finished over REST and saved.
 */
function defaultPolicy(recoveryWindowMs: number): ReconnectPolicy {
  return new DefaultReconnectPolicy({ maxElapsedMs: recoveryWindowMs + SESSION_OPTIONS.reconnect.default.pastWindowMs });
}
