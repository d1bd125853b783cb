/**
 * Input audio for the timed runs. Throughput does not depend on content, except that silence or
 * denormals would flatter or punish a kernel, so it is a 440 Hz tone plus seeded white noise.
 * Blocks are views made once, so the timed loop allocates nothing of its own.
 */
import { mulberry32 } from '@soundclone/core/internal';

/** Seconds of audio kept in memory; longer runs cycle through it. */
export const LOOP_SECONDS = 30;

/** Deterministic noise in [-1, 1) from core's seeded generator: the same noise on every run. */
export function seededNoise(seed: number): () => number {
  const random = mulberry32(seed);
  return () => random() * 2 - 1;
}

/** 0.5·sin(440 Hz) plus noise at 0.1, `seconds` long. Peak below 0.6, so no clipping anywhere. */
export function benchSignal(rate: number, seconds = LOOP_SECONDS): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  const noise = seededNoise(0x5eed);
  const w = (2 * Math.PI * 440) / rate;
  for (let i = 0; i < out.length; i++) out[i] = 0.5 * Math.sin(w * i) + 0.1 * noise();
  return out;
}

/** `signal` cut into consecutive views of `size` samples (a shorter tail is dropped). */
export function blocksOf(signal: Float32Array, size: number): Float32Array[] {
  const blocks: Float32Array[] = [];
  for (let at = 0; at + size <= signal.length; at += size) blocks.push(signal.subarray(at, at + size));
  return blocks;
}

/** Samples in `minutes` of audio at `rate`. */
export function samplesIn(minutes: number, rate: number): number {
  return Math.round(minutes * 60 * rate);
}
