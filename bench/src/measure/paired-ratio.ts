import type { HotLoop } from '../hot-loop.js';

/** The cost of one loop relative to another, from many short rounds timed back to back. */
export interface PairedRatio {
  /** Median over rounds of (a's CPU µs per step) / (b's CPU µs per step). */
  readonly median: number;
  /** Quartiles of the per-round ratios: their spread is the measurement's noise. */
  readonly q1: number;
  readonly q3: number;
  readonly rounds: number;
}

/**
 * Ratio targets ("within 20 % of the resampler") flipped from run to run on a loaded 2-core VM when
 * each loop kept its own fastest round: the two best rounds came from different moments, and a burst
 * of load in one but not the other moved the ratio by more than the margin.
 *
 * Here each round times a then b (alternating which goes first) for about `roundMs` each, by the
 * process's CPU time rather than wall time (time spent waiting for a core is not counted), and the
 * ratio is taken within the round; the median over rounds discards the rounds a burst did hit. The
 * target is unchanged, only its measurement is steadier.
 */
export function pairedRatio(a: HotLoop, b: HotLoop, options: { rounds: number; roundMs: number }): PairedRatio {
  const stepsA = calibrate(a, options.roundMs);
  const stepsB = calibrate(b, options.roundMs);
  const ratios: number[] = [];
  for (let round = 0; round < options.rounds; round++) {
    let usA: number;
    let usB: number;
    if (round % 2 === 0) {
      usA = cpuUsPerStep(a, stepsA);
      usB = cpuUsPerStep(b, stepsB);
    } else {
      usB = cpuUsPerStep(b, stepsB);
      usA = cpuUsPerStep(a, stepsA);
    }
    ratios.push(usA / usB);
  }
  ratios.sort((x, y) => x - y);
  const at = (q: number): number => ratios[Math.min(ratios.length - 1, Math.floor(q * (ratios.length - 1) + 0.5))]!;
  return { median: at(0.5), q1: at(0.25), q3: at(0.75), rounds: ratios.length };
}

/** Steps that take about `ms` of CPU (after a warm-up, so V8 has optimized the step). */
function calibrate(loop: HotLoop, ms: number): number {
  cpuUsPerStep(loop, 2000);
  let steps = 256;
  for (;;) {
    const us = cpuUsPerStep(loop, steps) * steps;
    if (us >= ms * 1000 * 0.25) return Math.max(1, Math.round((steps * ms * 1000) / us));
    steps *= 4;
  }
}

function cpuUsPerStep(loop: HotLoop, steps: number): number {
  const step = loop.step;
  const start = process.cpuUsage();
  for (let i = 0; i < steps; i++) step();
  const used = process.cpuUsage(start);
  return (used.user + used.system) / steps;
}
