import { AbortError } from '../errors/client-errors.js';

/**
 * Small helpers so that every wait settles on success, abort or timeout and removes what it added
 * (style guide: "Every pending operation settles ... and removes every listener and timer it added").
 */

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new AbortError(signal.reason);
}

/** Resolves after `ms`; rejects with AbortError as soon as `signal` aborts. Leaves no timer or listener. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortError(signal.reason));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      reject(new AbortError(signal?.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, Math.max(0, ms));
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * One AbortController that follows a parent signal and an optional deadline. `dispose()` removes the
 * parent listener and clears the timer; call it in `finally`. `timedOut` says which one fired.
 */
export class LinkedAbort {
  readonly controller = new AbortController();
  timedOut = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onParentAbort = (): void => this.controller.abort(this.parent?.reason);

  constructor(private readonly parent: AbortSignal | undefined, timeoutMs?: number) {
    if (parent?.aborted) this.controller.abort(parent.reason);
    else parent?.addEventListener('abort', this.onParentAbort, { once: true });
    if (timeoutMs !== undefined && Number.isFinite(timeoutMs)) {
      this.timer = setTimeout(() => {
        this.timedOut = true;
        this.controller.abort();
      }, Math.max(0, timeoutMs));
    }
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True when the parent (the caller) aborted, as opposed to the deadline. */
  get parentAborted(): boolean {
    return this.parent?.aborted === true;
  }

  dispose(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    this.parent?.removeEventListener('abort', this.onParentAbort);
  }
}

