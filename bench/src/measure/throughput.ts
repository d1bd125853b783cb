import { performance } from 'node:perf_hooks';
import Benchmark from 'benchmark';
import type { HotLoop, Throughput } from '../hot-loop.js';

export interface ThroughputOptions {
  /** Seconds benchmark.js may spend sampling each loop (its `maxTime`). */
  maxTime: number;
  /**
   * Times each loop is measured, alternating forward and reverse order; each keeps its fastest
   * round. On a shared VM a burst of load then has to hit a loop in every round to count, and no
   * loop always runs first (on a fresh JIT) or last. Default 1.
   */
  rounds?: number;
  /** Called after each benchmark, for progress output. */
  onCycle?: (loop: HotLoop, result: Throughput) => void;
}

/**
 * Times each loop with benchmark.js Suites, synchronously. benchmark.js picks the number of calls
 * per timed sample itself and reports the mean and its margin of error; one call is one block, so
 * ops/s × block size is the throughput.
 */
export function measureThroughput(name: string, loops: readonly HotLoop[], options: ThroughputOptions): Map<string, Throughput> {
  for (const loop of loops) warmUp(loop);
  const best = new Map<string, Throughput>();
  const rounds = options.rounds ?? 1;
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 0 ? loops : [...loops].reverse();
    for (const [id, result] of runSuite(`${name} #${round + 1}`, order, options)) {
      const previous = best.get(id);
      if (previous === undefined || result.usPerStep < previous.usPerStep) best.set(id, result);
    }
  }
  return best;
}

/**
 * Runs a loop for ~200 ms before it is timed. benchmark.js's own calibration is short, and a large
 * kernel function that V8 optimizes late otherwise shows its unoptimized speed in the first samples
 * (the JS kernel measured 2 Ms/s ±145 % cold and 7 Ms/s ±12 % warm in one run).
 */
function warmUp(loop: HotLoop, ms = 200): void {
  const step = loop.step;
  const end = performance.now() + ms;
  do {
    for (let i = 0; i < 64; i++) step();
  } while (performance.now() < end);
}

function runSuite(name: string, loops: readonly HotLoop[], options: ThroughputOptions): Map<string, Throughput> {
  const results = new Map<string, Throughput>();
  const suite = new Benchmark.Suite(name);
  for (const loop of loops) {
    // The step closure itself is the benchmark body. benchmark.js first tries to inline its source,
    // which fails on the closure's free variables, and then calls it from a loop compiled for this
    // benchmark alone: one monomorphic call per block, the same for every contender.
    suite.add(loop.id, loop.step, { maxTime: options.maxTime, minSamples: 5 });
  }
  suite.on('cycle', (event: Benchmark.Event) => {
    const bench = event.target;
    const loop = loops.find((l) => l.id === bench.name);
    if (loop === undefined) return;
    // benchmark.js records a throwing body on the benchmark ('error' is missing from its types).
    const error = (bench as { error?: unknown }).error;
    if (error !== undefined) throw error;
    if (bench.stats === undefined) throw new Error(`benchmark ${loop.id} has no statistics`);
    const seconds = bench.stats.mean;
    const msps = loop.samplesPerStep / seconds / 1e6;
    const result: Throughput = {
      msps,
      xRealtime: (msps * 1e6) / loop.inputRate,
      usPerStep: seconds * 1e6,
      rmePercent: bench.stats.rme,
      samples: bench.stats.sample.length,
    };
    results.set(loop.id, result);
    options.onCycle?.(loop, result);
  });
  suite.run({ async: false });
  return results;
}
