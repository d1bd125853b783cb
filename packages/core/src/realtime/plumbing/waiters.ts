import { ValidationError } from '../../errors/client-errors.js';
import { RealtimeError } from '../../errors/realtime-error.js';
import { MAX_TIMER_MS } from './timer-set.js';

/**
 * A timeoutMs the caller gave: a non-negative number of milliseconds, or Infinity for none. NaN, a
 * negative number or a non-number would arm no timer (or an immediate one) and is refused instead.
 */
export function invalidTimeout(call: string, timeoutMs: unknown): ValidationError | undefined {
  if (typeof timeoutMs === 'number' && timeoutMs >= 0) return undefined;
  return new ValidationError([{ field: 'timeoutMs', rule: `must be a non-negative number of milliseconds or Infinity (no timeout); ${call}() got ${String(timeoutMs)}` }]);
}

export interface WaitOptions {
  /** Name of the public call, for error messages. */
  readonly call: string;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
  /** The session's failure, once it failed: a wait that cannot succeed any more rejects with it. */
  readonly failure: () => Error | undefined;
}

interface Pending {
  readonly call: string;
  readonly predicate: () => boolean;
  readonly settle: (error?: Error) => void;
  readonly failure: () => Error | undefined;
}

/**
 * Promises that wait for a condition on the session's state. The session calls `check()` after
 * every state change and message. Each wait settles exactly once, on success, failure, timeout or
 * abort, and removes its timer and abort listener when it does (style guide: every pending operation
 * settles and cleans up).
 */
export class Waiters {
  readonly #pending = new Set<Pending>();

  /** Number of waits not settled yet (leak checks). */
  get size(): number {
    return this.#pending.size;
  }

  until(predicate: () => boolean, options: WaitOptions): Promise<void> {
    const invalid = invalidTimeout(options.call, options.timeoutMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    if (predicate()) return Promise.resolve();
    const early = options.failure();
    if (early !== undefined) return Promise.reject(early);
    if (options.signal?.aborted) return Promise.reject(RealtimeError.aborted(options.call, options.signal.reason));
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => entry.settle(RealtimeError.aborted(options.call, options.signal?.reason));
      const entry: Pending = {
        call: options.call,
        predicate,
        failure: options.failure,
        settle: (error) => {
          if (!this.#pending.delete(entry)) return;
          if (timer !== undefined) clearTimeout(timer);
          options.signal?.removeEventListener('abort', onAbort);
          if (error === undefined) resolve();
          else reject(error);
        },
      };
      this.#pending.add(entry);
      // Past the largest timer delay (about 24.8 days) setTimeout would fire at once: no timer is as good.
      if (options.timeoutMs <= MAX_TIMER_MS) timer = setTimeout(() => entry.settle(RealtimeError.timeout(options.call, options.timeoutMs)), options.timeoutMs);
      options.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Settles every wait whose condition now holds, or whose session failed. */
  check(): void {
    for (const entry of [...this.#pending]) {
      if (entry.predicate()) entry.settle();
      else {
        const failure = entry.failure();
        if (failure !== undefined) entry.settle(failure);
      }
    }
  }

  /** Terminal state reached without the condition: reject what is left with `error`. */
  rejectAll(errorFor: (call: string) => Error): void {
    for (const entry of [...this.#pending]) entry.settle(errorFor(entry.call));
  }
}
