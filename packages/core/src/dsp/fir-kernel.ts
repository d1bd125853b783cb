import type { PolyphaseFilter } from './filter-design.js';

/**
 * Where the next output's taps start in the history buffer, and its phase. The kernels advance it;
 * a plain object with two number fields stays monomorphic and costs nothing to update.
 */
export interface KernelCursor {
  position: number;
  phase: number;
}

/**
 * Computes up to `maxCount` outputs into `output` from `history[0, available)`, stopping at the
 * first output whose taps would run past `available`. Returns the number written. Each output is
 * a fixed sum over a fixed window, in a fixed order, so the result does not depend on how the
 * input was chunked.
 */
export type FirKernel = (
  filter: PolyphaseFilter,
  history: Float32Array,
  available: number,
  cursor: KernelCursor,
  output: Float32Array,
  outputOffset: number,
  maxCount: number,
) => number;

/** Any ratio: one coefficient row per phase, four accumulators to break the add dependency chain. */
export const polyphaseKernel: FirKernel = (filter, history, available, cursor, output, outputOffset, maxCount) => {
  const { coefficients: c, taps, advance, nextPhase } = filter;
  let position = cursor.position;
  let phase = cursor.phase;
  let o = outputOffset;
  const end = outputOffset + maxCount;
  while (o < end && position + taps <= available) {
    const row = phase * taps;
    let a0 = 0, a1 = 0, a2 = 0, a3 = 0;
    for (let k = 0; k < taps; k += 4) {
      const h = position + k, r = row + k;
      a0 += c[r] * history[h];
      a1 += c[r + 1] * history[h + 1];
      a2 += c[r + 2] * history[h + 2];
      a3 += c[r + 3] * history[h + 3];
    }
    output[o++] = a0 + a1 + a2 + a3;
    position += advance[phase];
    phase = nextPhase[phase];
  }
  cursor.position = position;
  cursor.phase = phase;
  return o - outputOffset;
};

/**
 * Integer decimation (one phase): the row is symmetric about taps/2 - 1 and its last tap is zero,
 * so pairs of inputs are added before the multiply, halving the multiplies. Two outputs per pass
 * share each coefficient load and the loop overhead (about 1.3x faster than one per pass here);
 * each output's sum keeps the same order either way, so chunking cannot change a bit.
 */
export const symmetricKernel: FirKernel = (filter, history, available, cursor, output, outputOffset, maxCount) => {
  const c = filter.coefficients;
  const taps = filter.taps;
  const down = filter.down;
  const centre = taps / 2 - 1; // odd, since taps is a multiple of 4
  const odd = centre - 1; // the pair left over by the unrolled loop
  const cCentre = c[centre];
  const cOdd = c[odd];
  const lastStart = available - taps; // the last window start that fits
  const end = outputOffset + maxCount;
  let position = cursor.position;
  let o = outputOffset;
  while (o + 1 < end && position + down <= lastStart) {
    const next = position + down;
    const mirror = position + taps - 2;
    const mirrorNext = mirror + down;
    let a0 = cCentre * history[position + centre];
    let a1 = cOdd * (history[position + odd] + history[mirror - odd]);
    let b0 = cCentre * history[next + centre];
    let b1 = cOdd * (history[next + odd] + history[mirrorNext - odd]);
    for (let k = 0; k < odd; k += 2) {
      const c0 = c[k];
      const c1 = c[k + 1];
      a0 += c0 * (history[position + k] + history[mirror - k]);
      a1 += c1 * (history[position + k + 1] + history[mirror - k - 1]);
      b0 += c0 * (history[next + k] + history[mirrorNext - k]);
      b1 += c1 * (history[next + k + 1] + history[mirrorNext - k - 1]);
    }
    output[o] = a0 + a1;
    output[o + 1] = b0 + b1;
    o += 2;
    position = next + down;
  }
  if (o < end && position <= lastStart) {
    const mirror = position + taps - 2;
    let a0 = cCentre * history[position + centre];
    let a1 = cOdd * (history[position + odd] + history[mirror - odd]);
    for (let k = 0; k < odd; k += 2) {
      a0 += c[k] * (history[position + k] + history[mirror - k]);
      a1 += c[k + 1] * (history[position + k + 1] + history[mirror - k - 1]);
    }
    output[o++] = a0 + a1;
    position += down;
  }
  cursor.position = position;
  return o - outputOffset;
};
