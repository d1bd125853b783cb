import { getHeapStatistics } from 'node:v8';
import { collectGarbage } from './gc-window.js';

/**
 * Bytes of garbage one call makes, measured exactly rather than inferred from GC counts (which
 * depend on V8's adaptive young-generation size; we once saw 3 vs 49 scavenges for the same
 * garbage). Method: after a full gc(), the growth of V8's used heap plus external
 * (ArrayBuffer) memory over `calls` calls, minus the same for a no-op, divided by `calls`. A trial in
 * which a collection ran (the heap shrank) is discarded; the smallest of the trials is kept, since
 * noise (a JIT compile, a stray allocation of Node's) only ever adds bytes.
 */
export function bytesPerCall(call: () => void, calls = 200, trials = 5): number | null {
  if (!collectGarbage()) return null;
  for (let i = 0; i < calls; i++) call(); // optimized and past any first-call setup
  const baseline = minGrowth(noop, calls, trials);
  const measured = minGrowth(call, calls, trials);
  if (baseline === null || measured === null) return null;
  return Math.max(0, (measured - baseline) / calls);
}

function noop(): void {}

function minGrowth(call: () => void, calls: number, trials: number): number | null {
  let best: number | null = null;
  for (let t = 0; t < trials; t++) {
    collectGarbage();
    const before = getHeapStatistics();
    for (let i = 0; i < calls; i++) call();
    const after = getHeapStatistics();
    const growth = after.used_heap_size - before.used_heap_size + (after.external_memory - before.external_memory);
    if (growth < 0) continue; // a collection ran inside the trial
    if (best === null || growth < best) best = growth;
  }
  return best;
}
