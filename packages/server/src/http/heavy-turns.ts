/**
 * Request bodies above this size wait for a turn of their own before they are parsed.
 * Smaller ones (every well-formed request but the largest) parse at once.
 */
export const HEAVY_BODY_BYTES = 64 << 10;

/** Returned by `heavyTurn`: call it when the heavy work is done (always, also when it threw). */
export type ReleaseTurn = () => void;

const waiting: Array<(release: ReleaseTurn) => void> = [];
let busy = false;
let scheduled = false;

/**
 * Resolves when it is this caller's turn to do heavy synchronous work (parsing a large body): one
 * caller at a time, in order, and after a turn that took T ms the next starts no sooner than T ms
 * later, so heavy work gets at most half of the event loop.
 *
 * Twenty 1 MiB bodies that finish arriving in the same poll phase would otherwise be parsed back to
 * back (10-30 ms each), holding the event loop for hundreds of ms while every realtime socket's acks
 * wait. With turns, a stall is at most one parse, and the I/O that arrived meanwhile runs between
 * turns; the large requests wait instead.
 */
export function heavyTurn(): Promise<ReleaseTurn> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    schedule(0);
  });
}

function schedule(afterMs: number): void {
  if (busy || scheduled || waiting.length === 0) return;
  scheduled = true;
  const run = (): void => {
    scheduled = false;
    const next = waiting.shift();
    if (next === undefined) return;
    busy = true;
    const started = performance.now();
    let released = false;
    next(() => {
      if (released) return;
      released = true;
      busy = false;
      schedule(performance.now() - started);
    });
  };
  if (afterMs < 1) setImmediate(run);
  else setTimeout(run, afterMs);
}

const starts: Array<() => void> = [];
let startsScheduled = false;

/**
 * Resolves in a later event-loop iteration, one caller per iteration, in order: every REST request
 * starts this way. Twenty connections that each have a 250 kB page to build (pipelined requests
 * released by their clients reading, or simply arriving together) are built one per iteration, with
 * the I/O that arrived meanwhile (realtime audio, acks) handled in between, instead of back to back
 * in one microtask drain. An idle server pays one loop iteration per request.
 */
export function requestTurn(): Promise<void> {
  return new Promise((resolve) => {
    starts.push(resolve);
    if (!startsScheduled) {
      startsScheduled = true;
      setImmediate(runStart);
    }
  });
}

function runStart(): void {
  starts.shift()?.();
  // Queued from inside the check phase: runs in the next iteration, after its poll phase.
  if (starts.length > 0) setImmediate(runStart);
  else startsScheduled = false;
}
