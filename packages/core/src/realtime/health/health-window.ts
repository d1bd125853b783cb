/**
 * Figures over the most recent values of one measure (a latency, a lag, a round trip): a fixed ring,
 * so an hour-long session keeps the same few hundred numbers as a one-minute one. The percentiles are
 * of the window (the last `size` values), `count` of the whole session.
 */
export interface WindowStats {
  /** The most recent value, null before the first. */
  readonly last: number | null;
  readonly p50: number | null;
  readonly p95: number | null;
  /** The largest value in the window. */
  readonly max: number | null;
  /** Values recorded since the session began. */
  readonly count: number;
}

export const EMPTY_WINDOW: WindowStats = Object.freeze({ last: null, p50: null, p95: null, max: null, count: 0 });

export class HealthWindow {
  readonly #values: Float64Array;
  #count = 0;

  constructor(size = 128) {
    this.#values = new Float64Array(size);
  }

  add(value: number): void {
    this.#values[this.#count % this.#values.length] = value;
    this.#count++;
  }

  /** Sorts a copy of at most `size` numbers: meant for snapshots (a second or so apart), not per frame. */
  stats(): WindowStats {
    if (this.#count === 0) return EMPTY_WINDOW;
    const size = this.#values.length;
    const held = this.#values.slice(0, Math.min(this.#count, size)).sort();
    const at = (p: number): number => Math.round(held[Math.min(held.length - 1, Math.ceil(p * held.length) - 1)] ?? 0);
    return {
      last: Math.round(this.#values[(this.#count - 1) % size] ?? 0),
      p50: at(0.5),
      p95: at(0.95),
      max: Math.round(held[held.length - 1] ?? 0),
      count: this.#count,
    };
  }
}
