import { DspError } from '../errors/dsp-error.js';

/** The sample rates the encode path accepts, input or output. */
export const SUPPORTED_RATES = [8000, 11025, 16000, 22050, 24000, 32000, 44100, 48000, 88200, 96000] as const;
export type SupportedRate = (typeof SUPPORTED_RATES)[number];

export function isSupportedRate(rate: number): rate is SupportedRate {
  return (SUPPORTED_RATES as readonly number[]).includes(rate);
}

export function assertSupportedRate(rate: number, what: string): asserts rate is SupportedRate {
  if (!isSupportedRate(rate)) {
    throw new DspError('DSP_UNSUPPORTED_RATE', `${what} ${String(rate)} Hz is not supported; use one of ${SUPPORTED_RATES.join(', ')}`);
  }
}

function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * The resampling ratio as integers: `up` output samples for every `down` input samples.
 * Integer ratios are why counts never drift: the phase is an integer in [0, up).
 */
export interface RateRatio {
  readonly up: number;
  readonly down: number;
}

export function reduceRatio(inputRate: number, outputRate: number): RateRatio {
  const g = gcd(inputRate, outputRate);
  return { up: outputRate / g, down: inputRate / g };
}
