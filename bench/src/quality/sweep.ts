import { aliasOf, fitTone, toDb } from '@soundclone/core/internal';
import { OUTPUT_RATE, type StreamingResampler } from '../contenders/index.js';
import { streamThrough } from './stream-through.js';

/** One tone of the sweep: input frequency, where it lands at 16 kHz, and its level there. */
export interface SweepPoint {
  readonly frequency: number;
  readonly alias: number;
  /** Output amplitude at `alias` relative to the input amplitude, dB. */
  readonly gainDb: number;
}

/** Input seconds per tone; the analysis drops MARGIN_S at each end, where the tone switches. */
const SEGMENT_S = 0.1;
const MARGIN_S = 0.025;
const AMPLITUDE = 0.5;

/**
 * Frequencies for the magnitude response, 0 to the input Nyquist: every 100 Hz, every 25 Hz across
 * the transition band (6–9.5 kHz), and exactly the points the table reports (6.8, 7, 9, 10 kHz).
 * Tones that land within 40 Hz of 0 or 8 kHz at 16 kHz are left out: over the 50 ms analysis
 * window a sine there is nearly a constant or alternates like one, and the fit is ill-conditioned.
 */
export function sweepFrequencies(inputRate: number): number[] {
  const set = new Set<number>([6800, 7000, 9000, 10000]);
  for (let f = 50; f < inputRate / 2; f += 100) set.add(f);
  for (let f = 6000; f <= 9500; f += 25) set.add(f);
  return [...set]
    .filter((f) => f < inputRate / 2 - 20)
    .filter((f) => { const a = aliasOf(f, OUTPUT_RATE); return a >= 40 && a <= OUTPUT_RATE / 2 - 40; })
    .sort((a, b) => a - b);
}

/**
 * Measures the magnitude response by streaming one long signal made of consecutive tone segments
 * (one stream, so no per-tone setup cost: libsamplerate-js takes ~50 ms per instance) and fitting
 * each tone at its alias frequency in the middle of its segment, shifted by the stream's delay.
 * The switch between tones is a click whose echo lasts one filter length (≤ 9 ms for the longest
 * filter here), well inside the 25 ms margins.
 */
export function sweep(stream: StreamingResampler, inputRate: number, delaySeconds: number, frequencies = sweepFrequencies(inputRate)): SweepPoint[] {
  const segment = Math.round(SEGMENT_S * inputRate);
  const input = new Float32Array(segment * frequencies.length);
  frequencies.forEach((f, k) => {
    const w = (2 * Math.PI * f) / inputRate;
    for (let n = 0; n < segment; n++) input[k * segment + n] = AMPLITUDE * Math.sin(w * n);
  });
  const output = streamThrough(stream, input, inputRate);
  return frequencies.map((frequency, k) => {
    const startS = (k * segment) / inputRate + delaySeconds;
    const from = Math.ceil((startS + MARGIN_S) * OUTPUT_RATE);
    const to = Math.floor((startS + SEGMENT_S - MARGIN_S) * OUTPUT_RATE);
    const alias = aliasOf(frequency, OUTPUT_RATE);
    const fit = fitTone(output, alias, OUTPUT_RATE, from, Math.min(to, output.length));
    return { frequency, alias, gainDb: toDb(fit.amplitude / AMPLITUDE) };
  });
}
