import { fitTone, fitTones } from '@soundclone/core/internal';
import { OUTPUT_RATE } from '../contenders/index.js';

/** A test tone: amplitude·sin(2π·frequency·t + phase), t in seconds from the first input sample. */
export interface Tone {
  readonly frequency: number;
  readonly amplitude: number;
  readonly phase: number;
}

/** The research's multitone: nine in-band tones, amplitudes summing to 0.7, fixed scattered phases. */
export const MULTITONE: readonly Tone[] = [150, 430, 910, 1570, 2330, 3210, 4370, 5530, 6830].map((frequency, k) => ({
  frequency,
  amplitude: 0.7 / 9,
  phase: (k * 2.399963) % (2 * Math.PI), // golden-angle steps: no two tones start in phase
}));

/**
 * Timeline delay of a resampler's output in seconds, from a multitone run: output sample i is taken
 * at time i/16000, and the output is the input delayed by d. Each tone is fitted in the output
 * (amplitude a_k, phase φ_k); the cross-correlation with the ideal multitone delayed by d is then
 *   C(d) = Σ A_k·a_k·cos(φ_k − θ_k + 2π·f_k·d),
 * evaluated on a 1 µs grid over [minDelay, maxDelay] and refined by golden-section search. The
 * tones' spread (150 Hz to 6.8 kHz) makes the peak unique over the 12 ms range searched.
 */
export function multitoneDelay(output: Float32Array, from: number, to: number, minDelay = -0.0005, maxDelay = 0.012): number {
  const fits = fitTones(output, MULTITONE.map((t) => t.frequency), OUTPUT_RATE, from, to);
  const correlation = (d: number): number => {
    let c = 0;
    for (let k = 0; k < MULTITONE.length; k++) {
      const tone = MULTITONE[k], fit = fits[k];
      c += tone.amplitude * fit.amplitude * Math.cos(fit.phase - tone.phase + 2 * Math.PI * tone.frequency * d);
    }
    return c;
  };
  let best = minDelay;
  let bestValue = -Infinity;
  for (let d = minDelay; d <= maxDelay; d += 1e-6) {
    const v = correlation(d);
    if (v > bestValue) { bestValue = v; best = d; }
  }
  return goldenMax(correlation, best - 1e-6, best + 1e-6);
}

/**
 * The delay a single tone's phase implies, taking the 1/f-periodic ambiguity from `near` (a coarse
 * estimate). Over one tone this is the least-squares alignment, so SNR against the delayed ideal
 * then measures gain error, noise and distortion, not misalignment.
 */
export function toneDelay(output: Float32Array, tone: Tone, from: number, to: number, near: number): number {
  const fit = fitTone(output, tone.frequency, OUTPUT_RATE, from, to);
  const period = 1 / tone.frequency;
  const d = (tone.phase - fit.phase) / (2 * Math.PI * tone.frequency);
  return d + Math.round((near - d) / period) * period;
}

function goldenMax(f: (x: number) => number, lo: number, hi: number): number {
  const r = (Math.sqrt(5) - 1) / 2;
  let a = lo, b = hi;
  let c = b - r * (b - a), d = a + r * (b - a);
  let fc = f(c), fd = f(d);
  for (let i = 0; i < 60; i++) {
    if (fc > fd) { b = d; d = c; fd = fc; c = b - r * (b - a); fc = f(c); }
    else { a = c; c = d; fc = fd; d = a + r * (b - a); fd = f(d); }
  }
  return (a + b) / 2;
}
