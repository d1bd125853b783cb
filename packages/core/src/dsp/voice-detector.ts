import { DspError } from '../errors/dsp-error.js';
import { assertSupportedRate } from './rates.js';

/**
 * Classifies fixed-length frames of audio as speech or not: the engine behind `VoiceGate`. The gate
 * cuts its blocks into frames of `frameLength` samples and asks once per frame; an engine keeps
 * whatever state it needs (a noise floor, a model's memory) between frames.
 *
 * `isSpeech` runs on the audio thread: it must be synchronous and allocate nothing.
 */
export interface VoiceDetector {
  /** Samples per frame at the gate's rate. */
  readonly frameLength: number;
  /** `frame` holds exactly `frameLength` samples, in order, each frame once. True for speech. */
  isSpeech(frame: Float32Array): boolean;
  /** Forgets everything learned from earlier frames. */
  reset(): void;
}

export interface EnergyDetectorOptions {
  /**
   * How far above its noise floor a band's energy must rise for a frame to count as speech, dB.
   * Default 9.
   */
  readonly thresholdDb?: number;
  /**
   * The lowest noise floor assumed, dBFS per band: below it, a level is silence whatever the floor.
   * Default -80 (a quiet microphone's own noise; a speaker at -35 dBFS stays some 35 dB above it).
   */
  readonly absoluteFloorDb?: number;
}

/** Band edges, Hz: voicing and first formant; second and third formants; fricatives. */
const BANDS: readonly (readonly [number, number])[] = [[150, 900], [900, 3500], [3500, 7000]];
/** The noise floor is the minimum over SUBWINDOWS windows of SUBWINDOW_FRAMES frames (2 s of 10 ms frames). */
const SUBWINDOWS = 10;
const SUBWINDOW_FRAMES = 20;
/** Smoothing of the level the floor follows (not of the level the decision reads), per frame. */
const FLOOR_SMOOTHING = 0.6;

/**
 * The default engine: energy in three bands (150-900, 900-3500 and 3500-7000 Hz; the last only where
 * the rate allows) against each band's own adaptive noise floor, 10 ms frames at any rate.
 *
 * Each band is a second-order band-pass (RBJ); a frame's band level is its mean square in dB. A
 * band's noise floor is the minimum of its smoothed level over the last two seconds (minimum
 * statistics: speech has pauses between syllables, noise has none lower than itself), never below
 * `absoluteFloorDb`. A frame is speech when any band is `thresholdDb` above its floor. The bands let a
 * voiced onset show in the low band over high-frequency hiss, and a fricative onset show in the high
 * band over low-frequency rumble, where whole-band energy would hide both.
 *
 * All memory is allocated in the constructor; `isSpeech` allocates nothing.
 */
export class EnergyVoiceDetector implements VoiceDetector {
  readonly frameLength: number;
  readonly #bands: number;
  /** Per band: b0, b1(=0), b2, a1, a2 (normalized band-pass), then state x1, x2, y1, y2. */
  readonly #coef: Float64Array;
  readonly #state: Float64Array;
  readonly #smoothed: Float64Array;
  /** Per band, the minimum of each sub-window; the current one is being filled. */
  readonly #minima: Float64Array;
  /** thresholdDb, absoluteFloorDb: kept as float64 so the compiled frame loop never meets a field of another number representation. */
  readonly #params = new Float64Array(2);
  #frameInSubwindow = 0;
  #subwindow = 0;
  #frames = 0;

  constructor(sampleRate: number, options: EnergyDetectorOptions = {}) {
    assertSupportedRate(sampleRate, 'EnergyVoiceDetector sampleRate');
    const threshold = options.thresholdDb ?? 9;
    const absoluteFloor = options.absoluteFloorDb ?? -80;
    if (!(threshold > 0 && threshold < 60)) throw new DspError('DSP_INVALID_OPTION', `thresholdDb must be in (0, 60), got ${threshold}`);
    if (!(absoluteFloor >= -160 && absoluteFloor <= 0)) throw new DspError('DSP_INVALID_OPTION', `absoluteFloorDb must be in [-160, 0], got ${absoluteFloor}`);
    this.#params[0] = threshold;
    this.#params[1] = absoluteFloor;
    this.frameLength = Math.round(sampleRate / 100);
    const usable = BANDS.filter(([, high]) => high < sampleRate * 0.45);
    this.#bands = usable.length;
    this.#coef = new Float64Array(this.#bands * 5);
    this.#state = new Float64Array(this.#bands * 4);
    this.#smoothed = new Float64Array(this.#bands);
    this.#minima = new Float64Array(this.#bands * SUBWINDOWS);
    usable.forEach(([low, high], b) => {
      const centre = Math.sqrt(low * high);
      const q = centre / (high - low);
      const w = (2 * Math.PI * centre) / sampleRate;
      const alpha = Math.sin(w) / (2 * q);
      const a0 = 1 + alpha;
      this.#coef.set([alpha / a0, 0, -alpha / a0, (-2 * Math.cos(w)) / a0, (1 - alpha) / a0], b * 5);
    });
    this.reset();
  }

  reset(): void {
    const absoluteFloor = this.#params[1];
    this.#state.fill(0);
    this.#smoothed.fill(absoluteFloor);
    this.#minima.fill(Infinity);
    this.#frameInSubwindow = 0;
    this.#subwindow = 0;
    this.#frames = 0;
  }

  isSpeech(frame: Float32Array): boolean {
    const n = this.frameLength;
    const coef = this.#coef;
    const state = this.#state;
    const minima = this.#minima;
    const smoothedLevels = this.#smoothed;
    const threshold = this.#params[0];
    const absoluteFloor = this.#params[1];
    const first = this.#frames === 0;
    let speech = false;
    for (let b = 0; b < this.#bands; b++) {
      const c = b * 5;
      const s = b * 4;
      const b0 = coef[c], b2 = coef[c + 2], a1 = coef[c + 3], a2 = coef[c + 4];
      let x1 = state[s], x2 = state[s + 1], y1 = state[s + 2], y2 = state[s + 3];
      let sum = 0;
      for (let i = 0; i < n; i++) {
        const x = frame[i];
        const y = b0 * x + b2 * x2 - a1 * y1 - a2 * y2;
        x2 = x1; x1 = x; y2 = y1; y1 = y;
        sum += y * y;
      }
      state[s] = x1; state[s + 1] = x2; state[s + 2] = y1; state[s + 3] = y2;
      const level = 10 * Math.log10(sum / n + 1e-30);
      // The floor: the minimum over the finished sub-windows and the one being filled.
      let floor = Infinity;
      const m = b * SUBWINDOWS;
      for (let k = 0; k < SUBWINDOWS; k++) if (minima[m + k] < floor) floor = minima[m + k];
      // Until one sub-window has passed, the floor is what has been seen so far (the first frame itself).
      const smoothed = first ? level : FLOOR_SMOOTHING * smoothedLevels[b] + (1 - FLOOR_SMOOTHING) * level;
      smoothedLevels[b] = smoothed;
      if (smoothed < floor) floor = smoothed;
      if (floor < absoluteFloor) floor = absoluteFloor;
      if (level > floor + threshold) speech = true;
      const slot = m + this.#subwindow;
      if (smoothed < minima[slot]) minima[slot] = smoothed;
    }
    this.#frames++;
    if (++this.#frameInSubwindow === SUBWINDOW_FRAMES) {
      this.#frameInSubwindow = 0;
      this.#subwindow = (this.#subwindow + 1) % SUBWINDOWS;
      for (let b = 0; b < this.#bands; b++) minima[b * SUBWINDOWS + this.#subwindow] = Infinity;
    }
    return speech;
  }
}
