import { DspError } from '../errors/dsp-error.js';
import { besselI0, kaiserBeta, kaiserSpan, kaiserWindow } from './kaiser.js';
import { reduceRatio } from './rates.js';

export type ResamplerQuality = 'best' | 'fast';

/**
 * Band edges are fractions of the lower of the two rates, so "the same relative figures hold for
 * the other output rates". For 16 kHz output: pass 0–6.8 kHz, stop from 9 kHz.
 * `designPass` may sit below the guaranteed passband: Kaiser's transition starts flat, so the
 * guaranteed edge still meets its tolerance while the filter gets shorter.
 */
export interface QualityPreset {
  /** Guaranteed passband edge and its tolerance (checked by the tests and the benchmark). */
  readonly passEdge: number;
  readonly passToleranceDb: number;
  /** Stopband edge and the attenuation guaranteed from it on. */
  readonly stopEdge: number;
  readonly stopAttenuationDb: number;
  /** SNR of a tone at 1/16 of the lower rate (1 kHz for 16 kHz output) against the exact sine. */
  readonly snrDb: number;
  /** Design parameters (tuned against the guarantees above with a few dB of margin). */
  readonly designPass: number;
  readonly designStop: number;
  readonly designAttenuationDb: number;
}

export const QUALITY_PRESETS: Readonly<Record<ResamplerQuality, QualityPreset>> = {
  best: {
    passEdge: 0.425, passToleranceDb: 0.05, stopEdge: 0.5625, stopAttenuationDb: 120, snrDb: 110,
    designPass: 0.4, designStop: 0.5625, designAttenuationDb: 125,
  },
  fast: {
    passEdge: 0.425, passToleranceDb: 0.25, stopEdge: 0.5625, stopAttenuationDb: 100, snrDb: 100,
    designPass: 0.39, designStop: 0.5625, designAttenuationDb: 106,
  },
};

/**
 * A polyphase FIR: `phases` rows of `taps` coefficients. Row p computes the output that falls
 * p/phases of an input sample after an input sample, from `taps` consecutive inputs ending
 * taps/2 samples after it. Rows are read-only and shared by every resampler with the same design.
 */
export interface PolyphaseFilter {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly quality: ResamplerQuality;
  /** Output samples per `down` input samples, reduced. Also the number of phases. */
  readonly up: number;
  readonly down: number;
  /** Coefficients per output; even, and a multiple of 4 so vector kernels need no tail loop. */
  readonly taps: number;
  /** `up * taps` coefficients, row-major by phase. */
  readonly coefficients: Float32Array;
  /** For each phase: input samples to advance to the next output, and that output's phase. */
  readonly advance: Int32Array;
  readonly nextPhase: Int32Array;
  /** True when there is one phase and its row is symmetric about taps/2 - 1 (integer decimation). */
  readonly symmetric: boolean;
}

const cache = new Map<string, PolyphaseFilter>();

export function designPolyphase(inputRate: number, outputRate: number, quality: ResamplerQuality): PolyphaseFilter {
  const key = `${inputRate}>${outputRate}:${quality}`;
  let filter = cache.get(key);
  if (filter === undefined) {
    filter = build(inputRate, outputRate, quality);
    cache.set(key, filter);
  }
  return filter;
}

function build(inputRate: number, outputRate: number, quality: ResamplerQuality): PolyphaseFilter {
  const preset = QUALITY_PRESETS[quality];
  if (preset === undefined) throw new DspError('DSP_INVALID_OPTION', `quality must be 'best' or 'fast', got ${String(quality)}`);
  const { up, down } = reduceRatio(inputRate, outputRate);
  const base = Math.min(inputRate, outputRate) / inputRate; // band edges in cycles per input sample, per unit of edge
  const cutoff = ((preset.designPass + preset.designStop) / 2) * base;
  const transition = (preset.designStop - preset.designPass) * base;
  // Span in input samples; the +1 accounts for the open window (K - 1 non-zero taps at phase 0).
  const taps = Math.ceil((kaiserSpan(preset.designAttenuationDb, transition) + 1) / 4) * 4;
  const half = taps / 2;
  const beta = kaiserBeta(preset.designAttenuationDb);
  const i0Beta = besselI0(beta);

  const coefficients = new Float32Array(up * taps);
  const row = new Float64Array(taps);
  for (let p = 0; p < up; p++) {
    let sum = 0;
    for (let k = 0; k < taps; k++) {
      // Distance from the output instant (input index i + p/up) to input i - half + 1 + k.
      const tau = p / up + half - 1 - k;
      const x = 2 * cutoff * tau;
      const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
      const value = 2 * cutoff * sinc * kaiserWindow(tau / half, beta, i0Beta);
      row[k] = value;
      sum += value;
    }
    // Unity DC gain in every phase: no phase-dependent ripple on slow signals.
    for (let k = 0; k < taps; k++) coefficients[p * taps + k] = row[k] / sum;
  }

  const advance = new Int32Array(up);
  const nextPhase = new Int32Array(up);
  for (let p = 0; p < up; p++) {
    advance[p] = Math.floor((p + down) / up);
    nextPhase[p] = (p + down) % up;
  }
  if (half < Math.ceil(down / up) + 1) {
    throw new DspError('DSP_UNSUPPORTED_RATE', `internal: filter of ${taps} taps is too short for ${inputRate} → ${outputRate}`);
  }
  return { inputRate, outputRate, quality, up, down, taps, coefficients, advance, nextPhase, symmetric: up === 1 };
}
