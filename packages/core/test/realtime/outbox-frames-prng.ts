/** Seeded int16 noise (xorshift32): the same samples every run. */
export function seeded(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    return (x & 0xffff) - 32768;
  };
}
