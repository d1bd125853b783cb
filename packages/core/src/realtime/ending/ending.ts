import { REALTIME } from '../../protocol.js';
import type { RealtimeNotice, RealtimeSession } from '../../types/realtime.js';
import { isSoundCloneError } from '../../errors/guards.js';
import { RealtimeError } from '../../errors/realtime-error.js';

/**
 * How the session ends, decided from the values given: the final view (over the socket, over REST, or
 * read after the server finished it), a REST finish that failed, the balance running out, a finish()
 * that gave up. Decisions only: the session runs the REST calls and applies the ending it is handed.
 *
 *   finished   the final view arrived: resolve finish() with it (REALTIME_SESSION_FAILED for connect()
 *              when the service failed the session before session.ready)
 *   failed     something went wrong: pending calls reject with `error`
 *   closed     the user ended it (close(), the connect signal, an aborted finish())
 */
export type Ending =
  | { readonly to: 'finished'; readonly view: RealtimeSession; readonly reason: string }
  | { readonly to: 'failed' | 'closed'; readonly error: Error; readonly reason: string };

/** A REST call's outcome as a value (never rejects), so a decision can be taken from it. */
export type Settled<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly caught: unknown };

export async function settle<T>(call: () => Promise<T>): Promise<Settled<T>> {
  try {
    return { ok: true, value: await call() };
  } catch (caught) {
    return { ok: false, caught };
  }
}

/**
 * finish over REST with the exact capturedSamples: the server settles what it received. Failed, the
 * session fails with the REST error. (The socket's session.finished may have won the race: the same
 * settlement, and the session ignores the second final view.)
 */
export function restFinishEnding(why: string, outcome: Settled<RealtimeSession>): Ending {
  if (outcome.ok) return { to: 'finished', view: outcome.value, reason: `${why}: finished over REST` };
  return { to: 'failed', error: asError(outcome.caught, RealtimeError.recoveryWindowExpired()), reason: `${why}; REST finish failed` };
}

/** A REST finish was needed but the session holds only a socket token: the result cannot be saved from here. */
export function unsavedEnding(why: string, expired: boolean): Ending {
  return { to: 'failed', error: expired ? RealtimeError.recoveryWindowExpired() : RealtimeError.closed('finish'), reason: why };
}

/** Close 4409 without session.finished before it: the final view read over REST (undefined: no REST client). */
export function finalViewEnding(reason: string, outcome: Settled<RealtimeSession> | undefined): Ending {
  if (outcome?.ok === true) return { to: 'finished', view: outcome.value, reason: 'the session was finished elsewhere' };
  return { to: 'failed', error: outcome === undefined ? RealtimeError.closed('finish') : asError(outcome.caught, RealtimeError.closed('finish')), reason };
}

/**
 * finish() timed out or was aborted: it ends the session here, `failed` on a timeout and `closed` when
 * the user aborted (the server keeps the session open until its recovery window passes; a REST finish
 * can still save it).
 */
export function finishGaveUp(caught: unknown): Ending {
  const timedOut = isSoundCloneError(caught, RealtimeError) && caught.code === 'REALTIME_TIMEOUT';
  return { to: timedOut ? 'failed' : 'closed', error: caught as Error, reason: timedOut ? 'finish timed out' : 'finish aborted' };
}

/** connect() waits for session.ready: a session the service failed before that rejects it with the why. */
export function failedBeforeReady(view: RealtimeSession, everReady: boolean): RealtimeError | undefined {
  return !everReady && view.status === 'FAILED' ? RealtimeError.sessionFailed(view) : undefined;
}

/**
 * The balance ran out (session.notice BALANCE_EXHAUSTED): where the server stopped taking audio, and the
 * captured range it refused. The server finishes the session by itself; not a fault to recover from:
 * nothing more is sent (no frame, no finish, no resume), write() takes nothing, the refused range is
 * declared as a gap, and the session waits for session.finished (a socket lost meanwhile reconnects
 * only to hear it) to end `failed` with balanceError(), whose `session` is that final view.
 */
export interface Exhaustion {
  readonly receivedSamples: number;
  readonly notAccepted: { readonly from: number; readonly to: number } | null;
}

/** Where the server stopped taking audio: the notice's receivedSamples, else its last acknowledged cursor. */
export function exhaustedAt(notice: RealtimeNotice, ackedServer: number): number {
  const parsed = Number(notice.receivedSamples);
  return Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : ackedServer;
}

/** The typed end of a session whose balance ran out; `session` is the final view with the charge, once it arrived. */
export function balanceError(exhaustion: Exhaustion, view?: RealtimeSession): RealtimeError {
  return RealtimeError.balanceExhausted({ ...exhaustion, sampleRate: REALTIME.sampleRate, ...(view !== undefined ? { session: view } : {}) });
}

function asError(caught: unknown, fallback: Error): Error {
  return caught instanceof Error ? caught : fallback;
}
