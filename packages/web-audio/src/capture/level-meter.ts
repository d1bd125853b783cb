/** Input level over the last window, for a meter. Full scale is 1. */
export interface AudioLevel {
  /** Root mean square, 0..1. */
  readonly rms: number;
  /** Largest absolute sample, 0..1 (more than 1 for clipped float input). */
  readonly peak: number;
  /** rms in dB full scale, -Infinity for digital silence. */
  readonly dbfs: number;
}

export const SILENT_LEVEL: AudioLevel = { rms: 0, peak: 0, dbfs: Number.NEGATIVE_INFINITY };

/**
 * Computed on the page from the blocks the worklet delivered, not on the audio thread: the audio
 * thread only copies samples. Reports once per `windowMs` of audio (default 50 ms: 20 updates a
 * second, enough for a meter); the meter runs while muted or paused, so a user sees the microphone is live.
 */
export class LevelMeter {
  readonly #window: number;
  readonly #report: (level: AudioLevel) => void;
  #count = 0;
  #sum = 0;
  #peak = 0;

  constructor(sampleRate: number, windowMs: number, report: (level: AudioLevel) => void) {
    this.#window = Math.max(1, Math.round((sampleRate * windowMs) / 1000));
    this.#report = report;
  }

  /** `frames` the worklet's voice gate did not send: they count as silence (the page never saw them). */
  quiet(frames: number): void {
    let left = frames;
    while (left > 0) {
      const take = Math.min(left, this.#window - this.#count);
      this.#count += take;
      left -= take;
      if (this.#count === this.#window) {
        const rms = Math.sqrt(this.#sum / this.#count);
        this.#report({ rms, peak: this.#peak, dbfs: rms > 0 ? 20 * Math.log10(rms) : Number.NEGATIVE_INFINITY });
        this.#sum = 0;
        this.#peak = 0;
        this.#count = 0;
      }
    }
  }

  add(block: Float32Array): void {
    let sum = this.#sum;
    let peak = this.#peak;
    let count = this.#count;
    for (let i = 0; i < block.length; i++) {
      const v = block[i] as number;
      sum += v * v;
      const a = v < 0 ? -v : v;
      if (a > peak) peak = a;
      if (++count === this.#window) {
        const rms = Math.sqrt(sum / count);
        this.#report({ rms, peak, dbfs: rms > 0 ? 20 * Math.log10(rms) : Number.NEGATIVE_INFINITY });
        sum = 0;
        peak = 0;
        count = 0;
      }
    }
    this.#sum = sum;
    this.#peak = peak;
    this.#count = count;
  }
}
