import { RealtimeError } from '../errors/realtime-error.js';
import type { OperationOptions } from './options/options.js';
import type { SessionIntentView } from './session-intent.js';
import type { SessionState } from './session-state.js';
import { invalidTimeout, type WaitOptions } from './plumbing/waiters.js';

/**
 * When pause(), resume() and finish() may go ahead, must wait, are done already or must throw, and
 * whether one that gave up is withdrawn. Decisions only: each function reads the values it is given
 * and returns; the session changes the state, the intent and the socket.
 *
 *   call       waits while                       done when    goes ahead from   else throws
 *   pause()    a rotation, reconnect, pausing,   paused       streaming         invalidState (finishing),
 *              or paused with a resume on its way                                 the failure (ended)
 *   resume()   a rotation, reconnect, pausing    streaming    paused            the same
 *
 * A pause() or resume() that timed out or was aborted is withdrawn only if its message did not go out
 * on the live socket yet; once it did, the server may be acting on it and the session follows it.
 */

/** What an operation sees of the session at the moment it decides. */
export interface OperationView {
  readonly state: SessionState;
  readonly terminal: boolean;
  readonly intent: SessionIntentView;
  /** Why the session ended, once it failed or was closed. */
  readonly failure: Error | undefined;
}

/** After the wait: nothing to do, go ahead, or the error to throw. */
export type OperationGate = 'done' | 'go' | Error;

/** The wait of one public call: its timeout (the call's own, else the default) and signal. */
export function operationWait(call: string, options: OperationOptions, defaultTimeoutMs: number, failure: () => Error | undefined): WaitOptions {
  return { call, signal: options.signal, timeoutMs: options.timeoutMs ?? defaultTimeoutMs, failure };
}

/** What Waiters.until would refuse first, for a call that need not wait at all: a bad timeout, an aborted signal. */
export function refusedAtOnce(wait: WaitOptions): Error | undefined {
  return invalidTimeout(wait.call, wait.timeoutMs) ?? (wait.signal?.aborted === true ? RealtimeError.aborted(wait.call, wait.signal.reason) : undefined);
}

/** pause() or resume(): the rules of the table above, one object per call. */
export interface StateOperation {
  readonly call: 'pause' | 'resume';
  /** The state it goes ahead from, and the one it waits for once sent. */
  readonly from: SessionState;
  readonly to: SessionState;
  /** The state lets it decide now (else it waits until it does). */
  canDecide(v: OperationView): boolean;
  /** It gave up (timeout, abort): withdrawn, given whether its message went out on the live socket. */
  withdraws(v: OperationView, sentOnLiveSocket: boolean): boolean;
}

export const PAUSE: StateOperation = {
  call: 'pause',
  from: 'streaming',
  to: 'paused',
  // Paused with a resume on its way is not paused for long: wait for the resume, then pause.
  canDecide: (v) => v.state === 'streaming' || (v.state === 'paused' && !v.intent.resume) || v.terminal || v.state === 'finishing',
  withdraws: (v, sent) => !v.terminal && v.intent.pause && v.state !== 'paused' && !sent,
};

export const RESUME: StateOperation = {
  call: 'resume',
  from: 'paused',
  to: 'streaming',
  canDecide: (v) => v.state === 'paused' || v.state === 'streaming' || v.terminal || v.state === 'finishing',
  // A resume is settled once the session left `paused`.
  withdraws: (v, sent) => !v.terminal && v.intent.resume && v.state === 'paused' && !sent,
};

/** Once it may decide: done already (in `to`), the error to throw (ended, or a state it cannot start from), or go. */
export function operationGate(op: StateOperation, v: OperationView): OperationGate {
  if (v.state === op.to) return 'done';
  if (v.terminal) return v.failure ?? RealtimeError.ended(op.call, v.state);
  return v.state === op.from ? 'go' : RealtimeError.invalidState(op.call, v.state);
}

/**
 * finish(), or the balance running out, enters `finishing` at once, except while (re)connecting: the
 * next session.ready decides then (finish asked → finishing).
 */
export function finishesNow(state: SessionState): boolean {
  return state !== 'reconnecting' && state !== 'connecting';
}
