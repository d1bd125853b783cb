/**
 * One hot function, called once per block: what benchmark.js times, what the GC window repeats for
 * ten minutes of audio and what the allocation probe counts bytes for. Making every suite produce
 * this shape lets the three measurements share one harness.
 */
export interface HotLoop {
  /** Key in the JSON, e.g. 'resample/ours-best/48000'. */
  readonly id: string;
  readonly label: string;
  /** Input samples one step consumes. */
  readonly samplesPerStep: number;
  /** Rate of those samples, for x-realtime. */
  readonly inputRate: number;
  /**
   * Runs the hot function on the next block. A closure, called unbound (benchmark.js calls it as
   * its own method). Allocates nothing of the harness's own.
   */
  readonly step: () => void;
}

/** What benchmark.js measured for one hot loop. */
export interface Throughput {
  /** Input samples per second, in millions. */
  readonly msps: number;
  /** msps relative to the input rate: how many times faster than realtime. */
  readonly xRealtime: number;
  /** Mean time of one step (one block), µs. */
  readonly usPerStep: number;
  /** benchmark.js relative margin of error, %. */
  readonly rmePercent: number;
  readonly samples: number;
}
