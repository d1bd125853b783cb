import { OUTPUT_RATE, type StreamingResampler } from './contender.js';
import { reduce } from './ratio.js';

/**
 * The naive resampler a user writes in ten minutes: linear interpolation with no anti-aliasing
 * filter. Its position is an integer phase (input index plus a numerator over `up`), not a float
 * step, so it never drifts: after N inputs it has emitted floor(N·up/down) outputs or one more
 * (like speex, it emits an output as soon as the two samples around its instant exist). A fair
 * speed floor rather than a strawman.
 *
 * Output n is x(n·down/up) = x[i] + (x[i+1] − x[i])·f, with i = ⌊n·down/up⌋ and f = (n·down mod up)/up.
 * The block's last sample is kept: the next block's first output may sit between it and that
 * block's first sample.
 */
export class LinearResampler implements StreamingResampler {
  readonly #up: number;
  readonly #down: number;
  readonly #scale: number;
  /** Index of the next output's x[i] relative to the current block; −1 is the kept sample. */
  #index = 0;
  /** Fraction numerator in [0, up). */
  #frac = 0;
  /** The previous block's last sample, standing at index −1. */
  #last = 0;

  constructor(inputRate: number) {
    const { up, down } = reduce(inputRate, OUTPUT_RATE);
    this.#up = up;
    this.#down = down;
    this.#scale = 1 / up;
  }

  process(input: Float32Array, output: Float32Array): number {
    const count = input.length;
    if (count === 0) return 0;
    const up = this.#up, down = this.#down, scale = this.#scale;
    let index = this.#index, frac = this.#frac, o = 0;
    // Index −1 (only after a first block): between the kept sample and input[0].
    while (index === -1) {
      const a = this.#last;
      output[o++] = a + (input[0] - a) * frac * scale;
      frac += down;
      while (frac >= up) { frac -= up; index++; }
    }
    while (index + 1 < count) {
      const a = input[index];
      output[o++] = a + (input[index + 1] - a) * frac * scale;
      frac += down;
      while (frac >= up) { frac -= up; index++; }
    }
    // Rebase, so this block's last sample is index −1 of the next block.
    this.#last = input[count - 1];
    this.#index = index - count;
    this.#frac = frac;
    return o;
  }
}
