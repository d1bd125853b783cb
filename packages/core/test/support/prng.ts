import { mulberry32 } from '../../src/util/prng.js';

/** Seeded randomness for the tests: core's one generator (src/util/prng.ts), so every randomized test replays exactly. */
export { mulberry32 };

/** An integer in [min, max] from `random`. */
export function randomInt(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** `length` samples of seeded uniform noise in [-amplitude, amplitude). */
export function noise(length: number, seed: number, amplitude = 1): Float32Array {
  const random = mulberry32(seed);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) out[i] = (random() * 2 - 1) * amplitude;
  return out;
}

/** Seeded int16 values, one per call: the same samples every run. */
export function int16Noise(seed: number): () => number {
  const random = mulberry32(seed);
  return () => Math.floor(random() * 65536) - 32768;
}

/** Loud noise with clipping and exact ties, so that rounding and saturation both happen. */
export function loud(length: number, seed: number): Float32Array {
  const random = mulberry32(seed);
  const out = new Float32Array(length);
  for (let i = 0; i < length; i++) {
    const kind = random();
    out[i] = kind < 0.1 ? (random() < 0.5 ? -1.5 : 1.5) : kind < 0.3 ? (Math.floor(random() * 65536) - 32768 + 0.5) / 32768 : random() * 2.2 - 1.1;
  }
  return out;
}
