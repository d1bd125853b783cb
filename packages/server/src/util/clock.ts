/**
 * The service's time: `now()` and the timers that follow it. Injectable (ServerOptions.clock) so tests
 * can pin timestamps or drive time themselves (the testing kit's virtual time).
 *
 * What follows this clock is what the service decides by time on a session's or task's behalf: the
 * recovery window, the end of abandoned sessions, rotations on a schedule, supplement waits, batch
 * task phases. What stays on real timers is what a network peer or another process measures with its
 * own clock: socket heartbeats and acknowledgement pacing, connection and request timeouts, node
 * heartbeats and leases (judged by the store's clock), webhook retries to a real endpoint.
 */
export interface Clock {
  now(): number;
  /**
   * Runs `fn` once when this clock has moved on by `ms`; the returned function cancels it (calling it
   * again, or after `fn` ran, does nothing). `background`: the timer must not keep a process alive.
   * Optional: a clock without it (one that only shifts `now`) gets real timers (withTimers).
   */
  setTimer?(ms: number, fn: () => void, options?: { readonly background?: boolean }): () => void;
}

/** A clock with its timers: what the service's modules take. */
export interface TimedClock extends Clock {
  setTimer(ms: number, fn: () => void, options?: { readonly background?: boolean }): () => void;
}

function realTimer(ms: number, fn: () => void, options?: { readonly background?: boolean }): () => void {
  const timer = setTimeout(fn, ms);
  if (options?.background === true) timer.unref();
  return () => clearTimeout(timer);
}

export const systemClock: TimedClock = { now: () => Date.now(), setTimer: realTimer };

/** The clock as given when it has timers; else its `now` with real timers. */
export function withTimers(clock: Clock): TimedClock {
  if (clock.setTimer !== undefined) return clock as TimedClock;
  return { now: () => clock.now(), setTimer: realTimer };
}

/** A promise that resolves after `ms`, or early when `signal` aborts; it never leaves a timer behind. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepOn(systemClock, ms, signal);
}

/** sleep() by `clock`'s time: resolves when the clock has moved on by `ms`, or early when `signal` aborts. */
export function sleepOn(clock: TimedClock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = (): void => {
      cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const cancel = clock.setTimer(ms, done);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** Runs `fn` every `everyMs` by `clock`'s time until the returned function is called. */
export function repeatOn(clock: TimedClock, everyMs: number, fn: () => void, options?: { readonly background?: boolean }): () => void {
  let cancel: (() => void) | undefined;
  let stopped = false;
  const arm = (): void => {
    cancel = clock.setTimer(everyMs, () => {
      if (stopped) return;
      arm();
      fn();
    }, options);
  };
  arm();
  return () => {
    stopped = true;
    cancel?.();
  };
}
