/**
 * Speech-like PCM16 at 16 kHz made in code: tone bursts (words) and silences (line breaks) that the
 * reference recogniser commits as lines, with seeded noise so that no two sessions send the same bytes.
 * The same shape as test/realtime/support.ts, so the bench streams what the tests stream.
 */
export function speech(seconds: number, seed = 1): Int16Array {
  const rate = 16_000;
  const out = new Int16Array(Math.round(seconds * rate));
  let at = 0;
  for (let line = 0; at < out.length; line++) {
    const base = 200 + ((line * 37 + seed * 101) % 700);
    for (const part of [{ tone: base, ms: 200 + ((line * 53) % 200) }, { ms: 100 }, { tone: base + 150, ms: 240 }, { ms: 600 }]) {
      const n = Math.min(out.length - at, Math.round((part.ms * rate) / 1000));
      for (let i = 0; i < n; i++, at++) {
        const noise = ((Math.imul(at + seed * 7919, 2654435761) >>> 16) % 64) - 32;
        out[at] = part.tone === undefined ? noise : Math.round(0.5 * 32767 * Math.sin((2 * Math.PI * part.tone * i) / rate)) + noise;
      }
    }
  }
  return out;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
