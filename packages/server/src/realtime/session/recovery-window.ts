import type { TimedClock } from '../../util/clock.js';

/**
 * The recovery window of one realtime session: while no socket is attached a deadline runs;
 * a socket that attaches before it cancels it and resumes the same session from the received cursor.
 * When it passes the session stops accepting audio for good, but stays unfinished for a while: the
 * spec says a plain disconnect never completes the task, so a finish (REST, which still works) settles
 * it; one that never comes is ended by the service later (abandoned.ts, docs/protocol.md "Abandoned
 * sessions"), counted from `expiredAt`.
 *
 *   created / socket detached --start()--> running (deadline = now + windowMs)
 *   running --attach()--> cancelled (deadline null)
 *   running --timer--> expired (onExpire called once; attach refused from then on)
 *
 * It starts when the session is created, so a session no socket ever reaches expires as well. Its
 * deadline and timer follow the service's clock (util/clock.ts), so a test can drive it.
 */
export class RecoveryWindow {
  private cancelTimer: (() => void) | undefined;
  private deadlineMs: number | null = null;
  private expiredFlag = false;
  private expiredAtMs: number | null = null;

  constructor(
    private readonly windowMs: number,
    private readonly clock: TimedClock,
    private readonly onExpire: () => void,
  ) {}

  /** Epoch milliseconds when the running window ends; null while a socket is attached. */
  get deadline(): number | null {
    return this.deadlineMs;
  }

  get expired(): boolean {
    return this.expiredFlag;
  }

  /** Epoch milliseconds when the window passed; null until it has. */
  get expiredAt(): number | null {
    return this.expiredAtMs;
  }

  /** Milliseconds left: the whole window while attached, 0 once expired. */
  remainingMs(): number {
    if (this.expiredFlag) return 0;
    if (this.deadlineMs === null) return this.windowMs;
    return Math.max(0, this.deadlineMs - this.clock.now());
  }

  /** A socket detached (or the session was just created). */
  start(): void {
    if (this.expiredFlag || this.cancelTimer !== undefined) return;
    this.deadlineMs = this.clock.now() + this.windowMs;
    this.cancelTimer = this.clock.setTimer(this.windowMs, () => {
      this.cancelTimer = undefined;
      this.expiredFlag = true;
      this.expiredAtMs = this.clock.now();
      this.onExpire();
    });
  }

  /** A socket attached: stops the clock. Returns false once expired (the attach must be refused). */
  cancel(): boolean {
    if (this.expiredFlag) return false;
    this.dispose();
    return true;
  }

  /** Clears the timer without expiring (finish, server shutdown). */
  dispose(): void {
    this.cancelTimer?.();
    this.cancelTimer = undefined;
    this.deadlineMs = null;
  }
}
