import { PerformanceObserver, performance, type PerformanceEntry } from 'node:perf_hooks';
import type { HotLoop } from '../hot-loop.js';

/**
 * Garbage collections while a loop streams a long stretch of audio: the target "0 GCs in 10 minutes
 * of 128-sample blocks". V8 reports every collection as a 'gc' performance entry; the ones that
 * start inside the window are counted. Run under --expose-gc: a full gc() before the window empties
 * the young generation, so a collection inside it is caused by what runs inside it.
 */
export interface GcWindow {
  /** Collections that started inside the window. */
  readonly gcs: number;
  /** Sum of the collections' durations, ms. */
  readonly pauseMs: number;
  /** Wall time of the window, ms; with the sample count, a second throughput figure. */
  readonly wallMs: number;
  /** Steps actually run: fewer than asked when the wall-time cap cut the window short. */
  readonly steps: number;
}

const entries: PerformanceEntry[] = [];
let observer: PerformanceObserver | null = null;

/** Starts recording GC entries (idempotent). Call before the first window. */
export function watchGc(): void {
  if (observer !== null) return;
  observer = new PerformanceObserver((list) => { for (const e of list.getEntries()) entries.push(e); });
  observer.observe({ entryTypes: ['gc'] });
}

export function stopWatchingGc(): void {
  observer?.disconnect();
  observer = null;
}

/** A full collection when --expose-gc is on; false otherwise (then counts may include old garbage). */
export function collectGarbage(): boolean {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc === undefined) return false;
  gc();
  return true;
}

/**
 * Runs `steps` steps, or fewer if `maxWallMs` runs out first (checked every 1024 steps): ten minutes
 * of audio through libsamplerate-js BEST takes 40 s on an idle machine and minutes on a busy one.
 */
export async function gcWindow(loop: HotLoop, steps: number, maxWallMs = Infinity): Promise<GcWindow> {
  watchGc();
  collectGarbage();
  await settle(); // deliver the entries of that gc() before the window opens
  const step = loop.step;
  const start = performance.now();
  const deadline = start + maxWallMs;
  let done = 0;
  while (done < steps) {
    const stop = Math.min(steps, done + 1024);
    for (; done < stop; done++) step();
    if (performance.now() > deadline) break;
  }
  const end = performance.now();
  await settle(); // the observer callback runs on a later turn of the event loop
  let gcs = 0;
  let pauseMs = 0;
  for (const e of entries) {
    if (e.startTime >= start && e.startTime <= end) { gcs++; pauseMs += e.duration; }
  }
  entries.length = 0;
  return { gcs, pauseMs, wallMs: end - start, steps: done };
}

function settle(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 20));
}
