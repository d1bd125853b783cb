import { DspError } from '../errors/dsp-error.js';
import type { CaptureCause, CaptureGap, CaptureLevel } from '../types/capture-health.js';

/**
 * The measurements a capture adapter makes of its device, the same in the browser and in Node. Pure:
 * each call takes the numbers (frames captured, the adapter's clock) and returns a value; no timers,
 * no clocks read here, so a test drives them with any clock it likes.
 */

export interface DriftEstimatorOptions {
  /** The rate the device claims. */
  readonly sampleRate: number;
  /** Points older than this (on the clock given to add()) leave the fit. Default 60000 ms. */
  readonly windowMs?: number;
  /** Points closer together than this are skipped (bounded memory). Default 250 ms. */
  readonly minIntervalMs?: number;
  /** No estimate until the window spans this much. Default 10000 ms. */
  readonly minSpanMs?: number;
}

/**
 * Drift in parts per million between a capture's clock and the adapter's clock: the least-squares
 * slope of frames captured against time, over a sliding window, compared with the claimed rate.
 * Positive: the device delivers more frames per second than it claims (its clock runs fast).
 *
 * Why a regression rather than frames / elapsed: blocks arrive late by a few to tens of milliseconds
 * (scheduling, pipes, the audio server's period), never early. One late point moves a two-point
 * estimate by the whole delay. So each interval of minIntervalMs keeps only its least late block
 * (the lower envelope of the delays, close to the true clock), and the fit spreads what remains over
 * every point of the window: 1,000 ppm read within ±20 ppm after a minute with 30 ms of jitter (tests).
 *
 * Memory: one fixed array of points (windowMs / minIntervalMs + 2); add() allocates nothing.
 */
export class DriftEstimator {
  readonly #rate: number;
  readonly #windowMs: number;
  readonly #minIntervalMs: number;
  readonly #minSpanMs: number;
  readonly #frames: Float64Array;
  readonly #times: Float64Array;
  #head = 0;
  #count = 0;
  /** When the current interval began: one point per minIntervalMs. */
  #bucketMs = 0;
  #estimate: number | null = null;

  constructor(options: DriftEstimatorOptions) {
    this.#rate = positive(options.sampleRate, 'sampleRate');
    this.#windowMs = positive(options.windowMs ?? 60_000, 'windowMs');
    this.#minIntervalMs = positive(options.minIntervalMs ?? 250, 'minIntervalMs');
    this.#minSpanMs = positive(options.minSpanMs ?? 10_000, 'minSpanMs');
    if (this.#windowMs / this.#minIntervalMs > 1_000_000) throw new DspError('DSP_INVALID_OPTION', 'windowMs / minIntervalMs must be at most 1000000 points');
    const size = Math.ceil(this.#windowMs / Math.max(1, this.#minIntervalMs)) + 2;
    this.#frames = new Float64Array(size);
    this.#times = new Float64Array(size);
  }

  /** The last estimate, null until the window spans minSpanMs. */
  get ppm(): number | null {
    return this.#estimate;
  }

  /**
   * A point: `frames` captured in total by the time `nowMs` (the adapter's clock, taken when the block
   * arrived). Returns the estimate in ppm, or null while there is too little to fit.
   */
  add(frames: number, nowMs: number): number | null {
    const size = this.#frames.length;
    if (this.#count > 0 && nowMs - this.#bucketMs < this.#minIntervalMs) {
      // Same interval: keep its least late point (the largest lead of frames over time).
      const last = (this.#head + this.#count - 1) % size;
      if ((frames * 1000) / this.#rate - nowMs > (this.#frames[last]! * 1000) / this.#rate - this.#times[last]!) {
        this.#frames[last] = frames;
        this.#times[last] = nowMs;
        this.#estimate = this.#fit();
      }
      return this.#estimate;
    }
    this.#bucketMs = nowMs;
    if (this.#count === size) {
      this.#head = (this.#head + 1) % size;
      this.#count -= 1;
    }
    const at = (this.#head + this.#count) % size;
    this.#frames[at] = frames;
    this.#times[at] = nowMs;
    this.#count += 1;
    while (this.#count > 2 && nowMs - this.#times[this.#head]! > this.#windowMs) {
      this.#head = (this.#head + 1) % size;
      this.#count -= 1;
    }
    this.#estimate = this.#fit();
    return this.#estimate;
  }

  /** Forget every point: the capture broke (another device, another rate, a gap). */
  reset(): void {
    this.#bucketMs = 0;
    this.#head = 0;
    this.#count = 0;
    this.#estimate = null;
  }

  #fit(): number | null {
    const size = this.#frames.length;
    const n = this.#count;
    const first = this.#head;
    const span = this.#times[(first + n - 1) % size]! - this.#times[first]!;
    if (n < 3 || span < this.#minSpanMs) return null;
    // Centred on the first point: frames reach millions, and squares of raw values would lose digits.
    const t0 = this.#times[first]!;
    const f0 = this.#frames[first]!;
    let st = 0;
    let sf = 0;
    for (let i = 0; i < n; i++) {
      const k = (first + i) % size;
      st += this.#times[k]! - t0;
      sf += this.#frames[k]! - f0;
    }
    const mt = st / n;
    const mf = sf / n;
    let stt = 0;
    let stf = 0;
    for (let i = 0; i < n; i++) {
      const k = (first + i) % size;
      const dt = this.#times[k]! - t0 - mt;
      stt += dt * dt;
      stf += dt * (this.#frames[k]! - f0 - mf);
    }
    if (stt === 0) return null;
    const framesPerMs = stf / stt;
    return ((framesPerMs * 1000) / this.#rate - 1) * 1e6;
  }
}

export interface StarvationOptions {
  readonly sampleRate: number;
  /** Behind the clock by more than this counts as starved. Default 500 ms. */
  readonly thresholdMs?: number;
}

/** What check() found. */
export interface StarvationReading {
  /** How far the frames captured are behind what the clock says should have come, ms (≥ 0). */
  readonly behindMs: number;
  readonly starved: boolean;
  /** True on the reading that crossed the threshold (one per episode). */
  readonly started: boolean;
  /** True on the reading that found the capture back in time after an episode. */
  readonly ended: boolean;
}

/**
 * Starvation: the frames captured fall behind the clock. The reference is the point where the capture
 * was furthest ahead (the earliest-arriving block), so late blocks from ordinary jitter read as a few
 * milliseconds behind, not as starvation; a device whose clock runs slow drifts behind at its drift
 * rate and is re-based by rebase() (after a gap, or with a drift-corrected rate from setRate()).
 */
export class StarvationDetector {
  #rate: number;
  readonly #thresholdMs: number;
  /** max over readings of (frames / rate · 1000 - nowMs): how far ahead the capture has been. */
  #lead = Number.NEGATIVE_INFINITY;
  #starved = false;

  constructor(options: StarvationOptions) {
    this.#rate = positive(options.sampleRate, 'sampleRate');
    this.#thresholdMs = positive(options.thresholdMs ?? 500, 'thresholdMs');
  }

  get starved(): boolean {
    return this.#starved;
  }

  get thresholdMs(): number {
    return this.#thresholdMs;
  }

  /** The device's true rate (claimed rate corrected by the measured drift). Re-bases. */
  setRate(sampleRate: number): void {
    this.#rate = positive(sampleRate, 'sampleRate');
    this.#lead = Number.NEGATIVE_INFINITY;
  }

  /** Starts again from this point (a gap was recorded, or the device changed). */
  rebase(frames: number, nowMs: number): void {
    this.#lead = (frames * 1000) / this.#rate - nowMs;
    this.#starved = false;
  }

  /** A reading: `frames` captured in total by `nowMs`. Call it on blocks and on a timer (no block is news too). */
  check(frames: number, nowMs: number): StarvationReading {
    const lead = (frames * 1000) / this.#rate - nowMs;
    if (lead > this.#lead) this.#lead = lead;
    const behindMs = Math.max(0, this.#lead - lead);
    const starved = behindMs > this.#thresholdMs;
    const started = starved && !this.#starved;
    const ended = !starved && this.#starved;
    this.#starved = starved;
    return { behindMs, starved, started, ended };
  }
}

/**
 * Places gaps on the capture timeline (see CaptureGap): the session's positions plus every gap so far.
 * The missing length is the clock's time between the last audio before and the first after, in
 * 16 kHz samples, less what the device did deliver for that time (a starved capture that catches up
 * lost nothing).
 */
export class CaptureTimeline {
  #missing = 0;

  /** 16 kHz samples missing over every gap so far. */
  get missingSamples(): number {
    return this.#missing;
  }

  /**
   * Records a gap at session position `atSample`; `missingSamples` is how much audio is absent, in
   * 16 kHz samples (from the clock: round((toMs - fromMs) · 16) less what arrived for that time).
   */
  gap(cause: CaptureCause, atSample: number, fromMs: number, toMs: number, missingSamples = Math.max(0, Math.round((toMs - fromMs) * 16))): CaptureGap {
    const from = atSample + this.#missing;
    this.#missing += missingSamples;
    return { cause, atSample, from, to: from + missingSamples, fromMs, toMs };
  }
}

/**
 * Level of a block of interleaved samples, Int16 (full scale 32768) or Float32 (full scale 1), in
 * dBFS; -Infinity for silence. Allocates only the result.
 */
export function blockLevel(block: Int16Array | Float32Array): CaptureLevel {
  const scale = block instanceof Int16Array ? 1 / 32768 : 1;
  let sum = 0;
  let peak = 0;
  for (let i = 0; i < block.length; i++) {
    const v = block[i]! * scale;
    sum += v * v;
    const a = v < 0 ? -v : v;
    if (a > peak) peak = a;
  }
  const rms = block.length === 0 ? 0 : Math.sqrt(sum / block.length);
  return { rmsDb: 20 * Math.log10(rms), peakDb: 20 * Math.log10(peak) };
}

function positive(value: number, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw new DspError('DSP_INVALID_OPTION', `${name} must be a positive finite number, got ${String(value)}`);
  }
  return value;
}
