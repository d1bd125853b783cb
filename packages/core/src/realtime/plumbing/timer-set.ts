/**
 * The session's timers in one place, so that teardown clears every one of them (finish removes
 * every listener and timer it added; the leak test counts them).
 */
/** setTimeout's largest delay (about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2_147_483_647;

export class TimerSet {
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();

  /** Timers not fired or cleared yet (leak checks). */
  get size(): number {
    return this.#timers.size;
  }

  /** Runs `run` after `ms` unless cleared first. Returns the cancel function. */
  later(ms: number, run: () => void): () => void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, ms);
    this.#timers.add(timer);
    return () => {
      if (this.#timers.delete(timer)) clearTimeout(timer);
    };
  }

  /** Runs `run` every `ms` until cancelled or cleared. Returns the cancel function. */
  every(ms: number, run: () => void): () => void {
    const timer = setInterval(run, ms);
    this.#timers.add(timer);
    return () => {
      if (this.#timers.delete(timer)) clearInterval(timer);
    };
  }

  clear(): void {
    for (const timer of this.#timers) clearTimeout(timer); // clears intervals too (one id space)
    this.#timers.clear();
  }
}
