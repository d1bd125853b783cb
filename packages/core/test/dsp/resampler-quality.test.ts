import { describe, expect, it } from 'vitest';
import { Resampler, SUPPORTED_RATES, type ResamplerQuality } from '@soundclone/core';
import { QUALITY_PRESETS, aliasOf, fitTone, fitTones, sine, snrAgainstSine, toDb } from '@soundclone/core/internal';

/**
 * The resampler's quality guarantees, for every supported rate pair and preset, measured on the float
 * output against analytic sines. Band edges scale with the lower rate (6.8 kHz and 9 kHz at 16 kHz).
 * The output has no timeline delay, so output n is compared with the sine at n/outputRate exactly.
 */
const AMPLITUDE = Math.SQRT1_2; // −3 dBFS

function resampleTone(inputRate: number, outputRate: number, quality: ResamplerQuality, frequency: number): Float32Array {
  const r = new Resampler({ inputRate, outputRate, quality });
  const input = new Float32Array(Math.round(inputRate * 0.25));
  sine(input, frequency, inputRate, AMPLITUDE);
  const out = new Float32Array(r.maxOutputFor(input.length) + r.latencyFrames + 8);
  let n = 0;
  for (let at = 0; at < input.length; at += 1000) n += r.process(input.subarray(at, at + 1000), out, n);
  n += r.flush(out, n);
  return out.subarray(0, n);
}

/** Leaves out the edges, where the stream starts from and ends in silence. */
function window(outputRate: number): [number, number] {
  return [Math.round(outputRate * 0.03), Math.round(outputRate * 0.22)];
}

function gainDb(y: Float32Array, frequency: number, outputRate: number): number {
  const [from, to] = window(outputRate);
  return toDb(fitTone(y, frequency, outputRate, from, to).amplitude / AMPLITUDE);
}

interface Measured { passWorstDb: number; stopWorstDb: number; snrDb: number }

function measure(inputRate: number, outputRate: number, quality: ResamplerQuality): Measured {
  const preset = QUALITY_PRESETS[quality];
  const low = Math.min(inputRate, outputRate);
  let passWorstDb = 0;
  for (const fraction of [0.02, 0.1, 0.2, 0.3, 0.38, preset.passEdge]) {
    const g = gainDb(resampleTone(inputRate, outputRate, quality, fraction * low), fraction * low, outputRate);
    if (Math.abs(g) > Math.abs(passWorstDb)) passWorstDb = g;
  }
  let stopWorstDb = -Infinity;
  if (outputRate < inputRate) {
    // Decimation: tones from the stopband edge up fold into the output band (9 and 10 kHz at 16 kHz).
    for (const fraction of [preset.stopEdge, 0.5875, 0.625, 0.75, 0.9]) {
      const f = fraction * outputRate;
      if (f >= inputRate / 2) continue;
      const alias = aliasOf(f, outputRate);
      stopWorstDb = Math.max(stopWorstDb, gainDb(resampleTone(inputRate, outputRate, quality, f), alias, outputRate));
    }
  } else {
    // Interpolation: a tone at f leaves an image at inputRate − f, which lies in the stopband.
    for (const fraction of [0.1, 0.3, preset.passEdge]) {
      const f = fraction * inputRate;
      const image = inputRate - f;
      if (image >= outputRate / 2) continue;
      const [from, to] = window(outputRate);
      const y = resampleTone(inputRate, outputRate, quality, f);
      const fitted = fitTones(y, [f, image], outputRate, from, to)[1]!;
      stopWorstDb = Math.max(stopWorstDb, toDb(fitted.amplitude / AMPLITUDE));
    }
  }
  const f1k = low / 16;
  const y = resampleTone(inputRate, outputRate, quality, f1k);
  const [from, to] = window(outputRate);
  const snrDb = snrAgainstSine(y, f1k, outputRate, AMPLITUDE, 0, from, to);
  return { passWorstDb, stopWorstDb, snrDb };
}

describe.each(['best', 'fast'] as const)('Resampler quality preset %s', (quality) => {
  const preset = QUALITY_PRESETS[quality];
  for (const inputRate of SUPPORTED_RATES) {
    it(`meets its guarantees from ${inputRate} Hz to every other rate`, () => {
      const failures: string[] = [];
      for (const outputRate of SUPPORTED_RATES) {
        if (outputRate === inputRate) continue;
        const m = measure(inputRate, outputRate, quality);
        const label = `${inputRate} → ${outputRate}`;
        if (Math.abs(m.passWorstDb) > preset.passToleranceDb) failures.push(`${label}: passband ${m.passWorstDb.toFixed(4)} dB`);
        if (m.stopWorstDb > -preset.stopAttenuationDb) failures.push(`${label}: stopband ${m.stopWorstDb.toFixed(1)} dB`);
        if (m.snrDb < preset.snrDb) failures.push(`${label}: SNR ${m.snrDb.toFixed(1)} dB`);
      }
      expect(failures).toEqual([]);
    });
  }
});
