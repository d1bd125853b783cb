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
  /** RMS of what is left after removing every fitted sinusoid and the mean. */
  residualRms: number;
}

/**
 * Least-squares fit of a sinusoid of known frequency (plus a constant) over `signal[from, to)`.
 * Sample n of the signal is taken at time n/rate. Broadband noise contributes to the fitted
 * amplitude only as noise/√N, so a tone 150 dB down is still measured.
 */
export function fitTone(signal: ArrayLike<number>, frequency: number, rate: number, from = 0, to = signal.length): ToneFit {
  return fitTones(signal, [frequency], rate, from, to)[0] as ToneFit;
}

/**
 * Joint least-squares fit of several known frequencies (plus a constant). A strong tone leaks into
 * a single-frequency fit at another frequency (about 1/(π·Δf·T) of its amplitude), which would hide
 * a weak image; fitting both at once removes that bias.
 */
export function fitTones(signal: ArrayLike<number>, frequencies: readonly number[], rate: number, from = 0, to = signal.length): ToneFit[] {
  const k = frequencies.length;
  const size = 2 * k + 1;
  const ata = new Float64Array(size * size);
  const atb = new Float64Array(size);
  const basis = new Float64Array(size);
  const omegas = frequencies.map((f) => (2 * Math.PI * f) / rate);
  const fill = (i: number): void => {
    for (let j = 0; j < k; j++) {
      basis[2 * j] = Math.sin(omegas[j] * i);
      basis[2 * j + 1] = Math.cos(omegas[j] * i);
    }
    basis[2 * k] = 1;
  };
  for (let i = from; i < to; i++) {
    fill(i);
    const y = signal[i];
    for (let r = 0; r < size; r++) {
      atb[r] += basis[r] * y;
      for (let c = r; c < size; c++) ata[r * size + c] += basis[r] * basis[c];
    }
  }
  for (let r = 0; r < size; r++) for (let c = 0; c < r; c++) ata[r * size + c] = ata[c * size + r];
  const x = solve(ata, atb, size);
  let residual = 0;
  for (let i = from; i < to; i++) {
    fill(i);
    let model = 0;
    for (let r = 0; r < size; r++) model += basis[r] * x[r];
    const e = signal[i] - model;
    residual += e * e;
  }
  const residualRms = Math.sqrt(residual / Math.max(1, to - from));
  return frequencies.map((_, j) => ({
    amplitude: Math.hypot(x[2 * j], x[2 * j + 1]),
    phase: Math.atan2(x[2 * j + 1], x[2 * j]),
    residualRms,
  }));
}

/** Gaussian elimination with partial pivoting; `a` is overwritten. */
function solve(a: Float64Array, b: Float64Array, n: number): Float64Array {
  const x = Float64Array.from(b);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r * n + col]) > Math.abs(a[pivot * n + col])) pivot = r;
    if (pivot !== col) {
      for (let c = 0; c < n; c++) [a[col * n + c], a[pivot * n + c]] = [a[pivot * n + c], a[col * n + c]];
      [x[col], x[pivot]] = [x[pivot], x[col]];
    }
    for (let r = col + 1; r < n; r++) {
      const factor = a[r * n + col] / a[col * n + col];
      if (factor === 0) continue;
      for (let c = col; c < n; c++) a[r * n + c] -= factor * a[col * n + c];
      x[r] -= factor * x[col];
    }
  }
  for (let r = n - 1; r >= 0; r--) {
    let sum = x[r];
    for (let c = r + 1; c < n; c++) sum -= a[r * n + c] * x[c];
    x[r] = sum / a[r * n + r];
  }
  return x;
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
