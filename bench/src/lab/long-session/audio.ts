import { speech } from '../speech.js';

/** 20 ms at 16 kHz: the block the long session writes, and the frame the session sends. */
export const BLOCK = 320;
const PERIOD_SECONDS = 60;

/**
 * An hour of speech-like PCM16 without holding an hour in memory: one minute of `speech()` (tone bursts
 * the reference recogniser commits as lines) cycled, each sample offset by noise seeded with its
 * absolute position, so no two blocks of the hour are equal and a block resent at the wrong place, or
 * skipped, changes the digest. `block(i)` fills one reused buffer: the writer allocates nothing per block.
 */
export class LongAudio {
  readonly #period = speech(PERIOD_SECONDS, 7);
  readonly #block = new Int16Array(BLOCK);

  /** Block `index` (samples [index·320, index·320 + 320)), valid until the next call. */
  block(index: number): Int16Array {
    const start = index * BLOCK;
    const out = this.#block;
    for (let i = 0; i < BLOCK; i++) {
      const at = start + i;
      const base = this.#period[at % this.#period.length] ?? 0;
      const noise = ((Math.imul(at, 0x9e3779b1) >>> 20) & 15) - 8;
      out[i] = Math.max(-32768, Math.min(32767, base + noise));
    }
    return out;
  }
}
