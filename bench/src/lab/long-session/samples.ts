import type { Figures } from './session.js';

/**
 * Values of one measure over a whole run, in a buffer allocated up front: recording allocates nothing,
 * so the bench's own bookkeeping does not grow the heap it measures. Past capacity, values are dropped
 * (counted).
 */
export class Samples {
  readonly #values: Float64Array;
  #count = 0;

  constructor(capacity: number) {
    this.#values = new Float64Array(capacity);
  }

  add(value: number): void {
    if (this.#count < this.#values.length) this.#values[this.#count] = value;
    this.#count++;
  }

  figures(): Figures {
    const held = this.#values.slice(0, Math.min(this.#count, this.#values.length)).sort();
    const at = (p: number): number => (held.length === 0 ? Number.NaN : (held[Math.min(held.length - 1, Math.ceil(p * held.length) - 1)] ?? Number.NaN));
    return { p50: at(0.5), p99: at(0.99), max: held.length === 0 ? Number.NaN : (held[held.length - 1] ?? Number.NaN), count: this.#count };
  }
}
