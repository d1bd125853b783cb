/**
 * The realtime session's states. Drawn in packages/core/README.md "Realtime session":
 *
 *   idle ──► connecting ──► streaming ◄──────────► rotating      (usage.updated rotate:true → session.resume)
 *                │            │  ▲  │
 *                │            │  │  └──► pausing ──► paused ──(resume)──► streaming
 *                │            ▼  │
 *                │        reconnecting ◄── (socket lost / heartbeat timeout from any live state)
 *                │            │
 *                ▼            ▼
 *   any live state ──finish()──► finishing ──► finished | failed
 *   any live state ──close() / connect signal aborted──► closed
 *   any live state ──unrecoverable error──► failed
 *
 * Live states take socket callbacks; finished, closed and failed are terminal: nothing leaves them.
 * `closed` is the user's decision (close() or the connect signal), `failed` is everything that went
 * wrong; both leave the server's session open (not charged) until its recovery window passes.
 */
export type SessionState =
  | 'idle'
  | 'connecting'
  | 'streaming'
  | 'rotating'
  | 'pausing'
  | 'paused'
  | 'reconnecting'
  | 'finishing'
  | 'finished'
  | 'closed'
  | 'failed';

export const TERMINAL_STATES: readonly SessionState[] = ['finished', 'closed', 'failed'];

/** Which state may follow which. Anything else is a bug in the session, not a runtime condition. */
export const TRANSITIONS: Readonly<Record<SessionState, readonly SessionState[]>> = {
  idle: ['connecting', 'closed', 'failed'],
  connecting: ['streaming', 'rotating', 'paused', 'reconnecting', 'finishing', 'finished', 'closed', 'failed'],
  streaming: ['rotating', 'pausing', 'paused', 'reconnecting', 'finishing', 'finished', 'closed', 'failed'],
  rotating: ['streaming', 'paused', 'reconnecting', 'finishing', 'finished', 'closed', 'failed'],
  pausing: ['paused', 'streaming', 'reconnecting', 'finishing', 'finished', 'closed', 'failed'],
  paused: ['streaming', 'reconnecting', 'finishing', 'finished', 'closed', 'failed'],
  reconnecting: ['streaming', 'rotating', 'pausing', 'paused', 'finishing', 'finished', 'closed', 'failed'],
  finishing: ['reconnecting', 'finished', 'closed', 'failed'],
  finished: [],
  closed: [],
  failed: [],
};

export interface StateChange {
  readonly from: SessionState;
  readonly to: SessionState;
  /** Why, in words a log line can carry (e.g. "socket closed 1006", "rotate", "recovery window expired"). */
  readonly reason: string;
}

/**
 * The one place the state changes: `set(next, reason)` checks the transition table and tells the
 * listener old, new and reason. Returns false (and changes nothing) for a transition the table forbids,
 * so a late callback can never drag a finished session back to life.
 */
export class StateMachine {
  #state: SessionState = 'idle';

  constructor(private readonly onChange: (change: StateChange) => void) {}

  get state(): SessionState {
    return this.#state;
  }

  get terminal(): boolean {
    return TERMINAL_STATES.includes(this.#state);
  }

  can(next: SessionState): boolean {
    return TRANSITIONS[this.#state].includes(next);
  }

  set(next: SessionState, reason: string): boolean {
    if (next === this.#state) return true;
    if (!this.can(next)) return false;
    const from = this.#state;
    this.#state = next;
    this.onChange({ from, to: next, reason });
    return true;
  }
}
