import { ABANDONED_SESSIONS } from '../../protocol.js';
import { isStoreError, type RealtimeSettlement, type Store, type TaskRow } from '../../store/store.js';
import { repeatOn, sleep, systemClock, type TimedClock } from '../../util/clock.js';
import type { RecoveryWindow } from './recovery-window.js';

/**
 * Abandoned realtime sessions (docs/protocol.md "Abandoned sessions"): a session with no socket and no
 * finish whose recovery window passed `afterWindowMs` ago. Nobody can resume it any more, and the spec
 * says a plain disconnect never completes a task; without this its History task would stay PROCESSING
 * and its reservation held until someone finished it over REST.
 *
 *   detached --window passes--> expired (finish over REST still settles it)
 *   expired --afterWindowMs, no finish--> abandoned: the registry finishes it (sessions.ts endAbandoned):
 *                                          charged once for the audio received, PARTIAL, notice
 *                                          SESSION_ABANDONED
 *
 * This module decides (isAbandoned), keeps the timer that asks (AbandonedSweep) and writes the
 * settlement until the store takes it (settleUntilStored); the registry, which owns the sessions, ends
 * them. A finish that races the sweep awaits the same settlement (Session
 * `finishing`), and the store settles a task once (Store.settleRealtime answers 'already').
 */
export interface AbandonCandidate {
  readonly recovery: Pick<RecoveryWindow, 'expired' | 'expiredAt'>;
  readonly attachedSockets: number;
  readonly finishing?: Promise<void> | undefined;
}

/** Whether the service ends this session now: window passed `afterWindowMs` ago, no socket, no finish. */
export function isAbandoned(session: AbandonCandidate, now: number, afterWindowMs: number): boolean {
  const expiredAt = session.recovery.expiredAt;
  if (!session.recovery.expired || expiredAt === null) return false;
  if (session.finishing !== undefined || session.attachedSockets > 0) return false;
  return now - expiredAt >= afterWindowMs;
}

/** How often a node looks: every second, or a quarter of a shorter afterWindowMs (at least 10 ms). */
export function sweepIntervalMs(afterWindowMs: number): number {
  return Math.min(ABANDONED_SESSIONS.sweepEveryMs, Math.max(ABANDONED_SESSIONS.minSweepEveryMs, Math.floor(afterWindowMs / 4)));
}

/**
 * An abandoned session's settlement, which no client is waiting to retry: a store that cannot be
 * reached (STORE_UNAVAILABLE) is asked again, the wait doubling from `firstWaitMs` up to
 * ABANDONED_SESSIONS.maxSettleRetryMs, until it answers or `signal` aborts (server shutdown); any other
 * failure rejects at once. A write that landed although its answer was lost is answered 'already' the
 * next time (Store.settleRealtime settles a task once).
 */
export async function settleUntilStored(store: Pick<Store, 'settleRealtime'>, taskId: string, settlement: RealtimeSettlement, firstWaitMs: number, signal: AbortSignal): Promise<TaskRow | 'already'> {
  for (let waitMs = firstWaitMs; ; waitMs = Math.min(waitMs * 2, ABANDONED_SESSIONS.maxSettleRetryMs)) {
    try {
      return await store.settleRealtime(taskId, settlement);
    } catch (error) {
      if (!isStoreError(error) || error.code !== 'STORE_UNAVAILABLE' || signal.aborted) throw error;
    }
    await sleep(waitMs, signal);
  }
}

/**
 * The timer that asks the registry to end its abandoned sessions. Started when the first session is
 * made (a node without realtime sessions keeps no timer), stopped at shutdown; a background timer, so
 * it never keeps a process alive. It runs on the service's clock, as the recovery window it follows
 * does. (The settlement retries above stay on real time: they wait for a store, which keeps its own.)
 */
export class AbandonedSweep {
  private cancel: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly everyMs: number,
    private readonly sweep: () => void,
    private readonly clock: TimedClock = systemClock,
  ) {}

  /** Starts the timer once; a no-op while it runs or after stop(). */
  start(): void {
    if (this.cancel !== undefined || this.stopped) return;
    this.cancel = repeatOn(this.clock, this.everyMs, this.sweep, { background: true });
  }

  stop(): void {
    this.stopped = true;
    this.cancel?.();
    this.cancel = undefined;
  }
}
