import { RealtimeError } from './realtime-error.js';

export interface WaitOptions {
  /** Name of the public call, for error messages. */
  readonly call: string;
  readonly signal?: AbortSignal | undefined;
  readonly timeoutMs: number;
  /** The session's failure, once it failed: a wait that cannot succeed any more rejects with it. */
  readonly failure: () => Error | undefined;
}

interface Pending {
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
    if (predicate()) return Promise.resolve();
    const early = options.failure();
    if (early !== undefined) return Promise.reject(early);
    if (options.signal?.aborted) return Promise.reject(RealtimeError.aborted(options.call, options.signal.reason));
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => entry.settle(RealtimeError.aborted(options.call, options.signal?.reason));
      const entry: Pending = {
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
      if (Number.isFinite(options.timeoutMs)) timer = setTimeout(() => entry.settle(RealtimeError.timeout(options.call, options.timeoutMs)), Math.max(0, options.timeoutMs));
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
  rejectAll(error: Error): void {
    for (const entry of [...this.#pending]) entry.settle(error);
  }
}
