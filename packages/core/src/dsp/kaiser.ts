/** Zeroth-order modified Bessel function of the first kind, by its power series (converges fast for x < 50). */
export function besselI0(x: number): number {
  const q = (x * x) / 4;
  let term = 1;
  let sum = 1;
  for (let k = 1; k < 500; k++) {
    term *= q / (k * k);
    sum += term;
    if (term < sum * 1e-21) break;
  }
  return sum;
}

/** Kaiser's β for a stopband attenuation in dB (Kaiser 1974; the A > 50 branch is all we use). */
export function kaiserBeta(attenuationDb: number): number {
  if (attenuationDb > 50) return 0.1102 * (attenuationDb - 8.7);
  if (attenuationDb >= 21) return 0.5842 * (attenuationDb - 21) ** 0.4 + 0.07886 * (attenuationDb - 21);
  return 0;
}

/**
 * Kaiser's estimate of the filter span, in samples, for a stopband attenuation and a transition
 * width given as a fraction of the sample rate.
 */
export function kaiserSpan(attenuationDb: number, transitionWidth: number): number {
  return (attenuationDb - 7.95) / (2.285 * 2 * Math.PI * transitionWidth);
}

/** The Kaiser window at `t` in [-1, 1], open at the ends so a span of K holds K - 1 non-zero taps. */
export function kaiserWindow(t: number, beta: number, i0Beta: number): number {
  if (t <= -1 || t >= 1) return 0;
  return besselI0(beta * Math.sqrt(1 - t * t)) / i0Beta;
}
