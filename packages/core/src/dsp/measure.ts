/**
 * Measurements of a resampled signal against analytic sines: what the quality presets promise is
 * checked with these, in the tests and in the benchmark, so both report the same figures. Pure
 * functions over Float32Array/Float64Array; they allocate only small scratch.
 */

/** Fills `out` with amplitude·sin(2π·frequency·(start + i)/rate + phase). */
export function sine(out: Float32Array | Float64Array, frequency: number, rate: number, amplitude = 1, phase = 0, start = 0): void {
  const w = (2 * Math.PI * frequency) / rate;
  for (let i = 0; i < out.length; i++) out[i] = amplitude * Math.sin(w * (start + i) + phase);
}

export interface ToneFit {
  /** Amplitude of the best-fitting sinusoid at the given frequency. */
  amplitude: number;
  /** Its phase, in radians, for sin(ωn + phase). */
  phase: number;
  /** RMS of what is left after removing that sinusoid and the mean. */
  residualRms: number;
}

/**
 * Least-squares fit of a sinusoid of known frequency (plus a constant) over `signal[from, to)`.
 * Sample n of the signal is taken at time n/rate. Broadband noise contributes to the fitted
 * amplitude only as noise/√N, so a tone 150 dB down is still measured.
 */
export function fitTone(signal: ArrayLike<number>, frequency: number, rate: number, from = 0, to = signal.length): ToneFit {
  const w = (2 * Math.PI * frequency) / rate;
  // Normal equations for [sin, cos, 1].
  let ss = 0, sc = 0, s1 = 0, cc = 0, c1 = 0, n = 0, ys = 0, yc = 0, y1 = 0;
  for (let i = from; i < to; i++) {
    const s = Math.sin(w * i), c = Math.cos(w * i), y = signal[i];
    ss += s * s; sc += s * c; s1 += s; cc += c * c; c1 += c; n += 1;
    ys += y * s; yc += y * c; y1 += y;
  }
  const [a, b, d] = solve3([ss, sc, s1, sc, cc, c1, s1, c1, n], [ys, yc, y1]);
  let res = 0;
  for (let i = from; i < to; i++) {
    const e = signal[i] - (a * Math.sin(w * i) + b * Math.cos(w * i) + d);
    res += e * e;
  }
  return { amplitude: Math.hypot(a, b), phase: Math.atan2(b, a), residualRms: Math.sqrt(res / Math.max(1, n)) };
}

function solve3(m: number[], v: number[]): [number, number, number] {
  const [a, b, c, d, e, f, g, h, i] = m as [number, number, number, number, number, number, number, number, number];
  const det = a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g);
  const [x, y, z] = v as [number, number, number];
  return [
    (x * (e * i - f * h) - b * (y * i - f * z) + c * (y * h - e * z)) / det,
    (a * (y * i - f * z) - x * (d * i - f * g) + c * (d * z - y * g)) / det,
    (a * (e * z - y * h) - b * (d * z - y * g) + x * (d * h - e * g)) / det,
  ];
}

/**
 * Signal-to-noise ratio in dB of `signal[from, to)` against the exact sine it should be (unity gain,
 * no delay): everything that differs, droop and ripple included, counts as noise.
 */
export function snrAgainstSine(signal: ArrayLike<number>, frequency: number, rate: number, amplitude: number, phase: number, from: number, to: number): number {
  const w = (2 * Math.PI * frequency) / rate;
  let sig = 0, err = 0;
  for (let i = from; i < to; i++) {
    const ideal = amplitude * Math.sin(w * i + phase);
    const e = signal[i] - ideal;
    sig += ideal * ideal;
    err += e * e;
  }
  return 10 * Math.log10(sig / Math.max(err, 1e-300));
}

export function toDb(ratio: number): number {
  return 20 * Math.log10(Math.max(ratio, 1e-300));
}

/** Where a tone at `frequency` lands after sampling at `rate` (folding about multiples of rate/2). */
export function aliasOf(frequency: number, rate: number): number {
  const f = frequency % rate;
  return f > rate / 2 ? rate - f : f;
}
