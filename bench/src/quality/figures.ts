import { snrAgainstSine } from '@soundclone/core/internal';
import { OUTPUT_RATE, type Contender } from '../contenders/index.js';
import { MULTITONE, multitoneDelay, toneDelay, type Tone } from './delay.js';
import { streamThrough } from './stream-through.js';
import { sweep, type SweepPoint } from './sweep.js';

/** Quality of one contender at one input rate, measured on its float output (before PCM16). */
export interface QualityFigures {
  /** Timeline delay measured from the multitone, ms (0 for ours, asserted). */
  readonly delayMs: number;
  /** Delay the 1 kHz tone's phase implies, ns; for ours how far from exactly zero it is. */
  readonly toneDelayNs: number;
  /** 1 kHz at −3 dBFS against the ideal sine (unity gain, aligned): everything else is noise. */
  readonly snr1kDb: number;
  /** The passband gain (0–6.8 kHz) furthest from 0 dB, signed. */
  readonly worstPassbandDb: number;
  readonly level9kDb: number;
  readonly level10kDb: number;
  readonly sweep: readonly SweepPoint[];
}

/** Signals last 3 s; the analysis uses output seconds 0.5–2.5. */
const SIGNAL_S = 3;
const FROM = 0.5 * OUTPUT_RATE;
const TO = 2.5 * OUTPUT_RATE;
/** 1 kHz at −3 dBFS. */
const TONE_1K: Tone = { frequency: 1000, amplitude: 10 ** (-3 / 20), phase: 0 };
/** Ours must put output n at input instant n·fin/16000: a 1/125 output-sample error would be a bug. */
const ZERO_DELAY_TOLERANCE_S = 0.5e-6;

export async function measureQuality(contender: Contender, inputRate: number): Promise<QualityFigures> {
  const multitone = await run(contender, inputRate, tones(MULTITONE, inputRate));
  const delay = multitoneDelay(multitone, FROM, TO);
  if (contender.zeroDelay && Math.abs(delay) > ZERO_DELAY_TOLERANCE_S) {
    throw new Error(`${contender.label} at ${inputRate} Hz: timeline delay ${(delay * 1e6).toFixed(3)} µs, expected 0 by construction`);
  }

  const tone = await run(contender, inputRate, tones([TONE_1K], inputRate));
  const fine = toneDelay(tone, TONE_1K, FROM, TO, delay);
  // Ours is compared with the ideal at zero delay, as promised; the others at their best alignment.
  const align = contender.zeroDelay ? 0 : fine;
  const snr = snrAgainstSine(tone, TONE_1K.frequency, OUTPUT_RATE, TONE_1K.amplitude, TONE_1K.phase - 2 * Math.PI * TONE_1K.frequency * align, FROM, TO);

  const stream = await contender.create(inputRate);
  const points = sweep(stream, inputRate, contender.zeroDelay ? 0 : delay);
  stream.dispose?.();

  let worst = 0;
  for (const p of points) if (p.frequency <= 6800 && Math.abs(p.gainDb) > Math.abs(worst)) worst = p.gainDb;
  return {
    delayMs: delay * 1000,
    toneDelayNs: fine * 1e9,
    snr1kDb: snr,
    worstPassbandDb: worst,
    level9kDb: at(points, 9000),
    level10kDb: at(points, 10000),
    sweep: points,
  };
}

async function run(contender: Contender, inputRate: number, input: Float32Array): Promise<Float32Array> {
  const stream = await contender.create(inputRate);
  try {
    return streamThrough(stream, input, inputRate);
  } finally {
    stream.dispose?.();
  }
}

/** Σ amplitude·sin(2π·f·n/rate + phase) over SIGNAL_S seconds. */
function tones(list: readonly Tone[], rate: number): Float32Array {
  const out = new Float32Array(SIGNAL_S * rate);
  for (const t of list) {
    const w = (2 * Math.PI * t.frequency) / rate;
    for (let n = 0; n < out.length; n++) out[n] += t.amplitude * Math.sin(w * n + t.phase);
  }
  return out;
}

function at(points: readonly SweepPoint[], frequency: number): number {
  const p = points.find((q) => q.frequency === frequency);
  if (p === undefined) throw new Error(`sweep has no point at ${frequency} Hz`);
  return p.gainDb;
}
