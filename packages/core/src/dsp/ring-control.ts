/**
 * The control block in front of a SampleRing's samples, and the exact-counter protocol its cursors use.
 *
 * Layout (Int32 words; one 64-byte line per writer so the producer and the consumer never write the
 * same cache line):
 *
 *   bytes   0..63   header     magic, kind, capacity, retain, start   (written once, at construction)
 *   bytes  64..127  producer   write counter, overflow counter        (written by the producer only)
 *   bytes 128..191  consumer   read counter, release counter          (written by the consumer only)
 *   bytes 192..     samples    capacity × 4 (float32) or × 2 (int16)
 *
 * A counter is an exact integer up to 2^53 kept in three words: [lo, hi, seq], value = hi·2^32 + lo.
 * The hot path never needs hi: each side knows its own cursor exactly and learns the other side's as
 * its own plus the wrapped 32-bit difference of the lo words, which is exact because the two are
 * always less than 2^31 apart (capacity ≤ 2^30). hi is there for readers with no cursor of their own
 * to start from (attach, the cursor getters, the overflow count) and changes once per 2^32 samples;
 * those changes are bracketed by a sequence word (a seqlock), so a reader never combines a new hi
 * with an old lo.
 *
 * A ring over a plain ArrayBuffer can only be seen by one thread, so there is no reader to order
 * against: it uses the *Plain functions below, ordinary typed-array loads and stores of the same
 * words (the same layout, so objects attached in the same thread still see each other's cursors),
 * which cost a fraction of the Atomics calls on the per-block path.
 */

export const CONTROL_BYTES = 192;

export const HEADER_MAGIC = 0x53524e47; // 'SRNG'
export const W_MAGIC = 0;
export const W_KIND = 1;
export const W_CAPACITY = 2;
export const W_RETAIN = 3;
/** startPosition, as a counter (words 4..6), so reset() in any object returns to the same place. */
export const W_START = 4;

/** Producer-owned counters. */
export const C_WRITE = 16;
export const C_OVERFLOW = 20;
/** Consumer-owned counters. */
export const C_READ = 32;
export const C_RELEASE = 36;

/** The largest exact cursor: a ring whose write cursor reaches it accepts nothing more. */
export const MAX_POSITION = Number.MAX_SAFE_INTEGER;

const TWO_32 = 4294967296;

/**
 * Stores `next` into the counter at word `at`; `previous` is its current value (the owner knows it).
 * Only the owner of a counter may call this. Inside the seqlock the order is hi, then lo, so that
 * after the closing increment both are current.
 */
export function publishCounter(ctl: Int32Array, at: number, previous: number, next: number): void {
  const hi = Math.floor(next / TWO_32);
  if (hi === Math.floor(previous / TWO_32)) {
    Atomics.store(ctl, at, next | 0);
    return;
  }
  Atomics.add(ctl, at + 2, 1);
  Atomics.store(ctl, at + 1, hi);
  Atomics.store(ctl, at, next | 0);
  Atomics.add(ctl, at + 2, 1);
}

/** Sets a counter with no concurrent reader (construction, reset). */
export function initCounter(ctl: Int32Array, at: number, value: number): void {
  Atomics.store(ctl, at + 1, Math.floor(value / TWO_32));
  Atomics.store(ctl, at, value | 0);
}

/**
 * The exact value of a counter, from any thread. Retries only while its owner is inside a hi change
 * (three stores, once per 2^32 samples), so in practice it never loops.
 */
export function loadCounter(ctl: Int32Array, at: number): number {
  for (;;) {
    const seq = Atomics.load(ctl, at + 2);
    const hi = Atomics.load(ctl, at + 1);
    const lo = Atomics.load(ctl, at) >>> 0;
    if ((seq & 1) === 0 && Atomics.load(ctl, at + 2) === seq) return hi * TWO_32 + lo;
  }
}

/** The low word of a counter, as published (a signed int32 holding the value mod 2^32). */
export function loadLow(ctl: Int32Array, at: number): number {
  return Atomics.load(ctl, at);
}

/** publishCounter() for a non-shared buffer: one thread, so no seqlock and no Atomics. */
export function publishPlain(ctl: Int32Array, at: number, next: number): void {
  ctl[at] = next | 0;
  // next - (next mod 2^32) is a multiple of 2^32, so the division is exact.
  ctl[at + 1] = (next - (next >>> 0)) / TWO_32;
}

/** loadCounter() for a non-shared buffer. */
export function loadPlain(ctl: Int32Array, at: number): number {
  return ctl[at + 1] * TWO_32 + (ctl[at] >>> 0);
}
