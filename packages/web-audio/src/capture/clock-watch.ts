/**
 * The capture clock against the wall clock, for one device's run: how far the audio delivered lags
 * the time that passed (starvation), and the rate at which the two clocks drift apart (ppm).
 *
 * Audio arrives in batches (a transfer batch, a ring drain: ~20 ms), so a single arrival says little;
 * the drift is the least-squares slope of (wall time, audio time) over the whole run, sampled at most
 * once per `sampleMs`, whose error falls with the run's length (a few ppm after a minute). The run
 * restarts at each gap and after each starvation, because audio missing from the device is not drift.
 *
 * Time comes in as arguments (performance.now() in the capture), so this is plain arithmetic.
 */
export class ClockWatch {
  readonly #minDriftMs: number;
  readonly #sampleMs: number;
  #rate = 1;
  #t0 = -1;
  #frames = 0;
  #lastArrival = 0;
  #lastSample = -Infinity;
  // Least-squares sums over points (x: wall seconds since t0, y: audio seconds since t0).
  #n = 0;
  #sx = 0;
  #sy = 0;
  #sxx = 0;
  #sxy = 0;

  constructor(options: { minDriftMs?: number; sampleMs?: number } = {}) {
    this.#minDriftMs = options.minDriftMs ?? 10_000;
    this.#sampleMs = options.sampleMs ?? 100;
  }

  /** A new run: the next frames() call sets its origin. */
  restart(sampleRate: number): void {
    this.#rate = sampleRate;
    this.#t0 = -1;
    this.#frames = 0;
    this.#lastSample = -Infinity;
    this.#n = this.#sx = this.#sy = this.#sxx = this.#sxy = 0;
  }

  /**
   * `count` frames arrived at `now` (ms). The first call of a run is its origin: the audio clock
   * counts from the end of that block.
   */
  frames(count: number, now: number): void {
    if (this.#t0 < 0) {
      this.#t0 = now;
      this.#lastArrival = now;
      return;
    }
    this.#frames += count;
    this.#lastArrival = now;
    if (now - this.#lastSample < this.#sampleMs) return;
    this.#lastSample = now;
    const x = (now - this.#t0) / 1000;
    const y = this.#frames / this.#rate;
    this.#n++;
    this.#sx += x;
    this.#sy += y;
    this.#sxx += x * x;
    this.#sxy += x * y;
  }

  /** True once the run has its first block. */
  get started(): boolean {
    return this.#t0 >= 0;
  }

  /** Wall ms since the last arrival. */
  silentFor(now: number): number {
    return this.#t0 < 0 ? 0 : Math.max(0, now - this.#lastArrival);
  }

  /** How far the audio delivered lags the wall clock since the run began, ms (0 when ahead). */
  behind(now: number): number {
    if (this.#t0 < 0) return 0;
    return Math.max(0, now - this.#t0 - (this.#frames / this.#rate) * 1000);
  }

  /** Drift in ppm (positive: the device runs fast), undefined before minDriftMs of run. */
  driftPpm(): number | undefined {
    const n = this.#n;
    if (n < 3 || this.#lastArrival - this.#t0 < this.#minDriftMs) return undefined;
    const den = n * this.#sxx - this.#sx * this.#sx;
    if (den <= 0) return undefined;
    const slope = (n * this.#sxy - this.#sx * this.#sy) / den;
    return (slope - 1) * 1e6;
  }
}
