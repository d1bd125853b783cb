/**
 * Captured time the voice gate decided not to send (docs/protocol.md "Skipped time"), in captured
 * positions: sorted, merged ranges [from, to). The outbox sends each as skip frames (to a server that
 * takes them) in its place in the stream, and forgets a range once the server acknowledged past it.
 *
 * Not a gap (gap-ledger.ts): a gap is audio the server will never get and the server's positions
 * close over it; skipped time keeps its place in the server's stream (the server's cursor moves over
 * it), so captured and server positions stay the same across it.
 *
 * Garbage: a range is two numbers pushed onto two arrays (a skip starts once per pause in speech); the
 * queries allocate nothing.
 */
export class SkipLedger {
  readonly #from: number[] = [];
  readonly #to: number[] = [];
  /** Samples ever declared skipped (every range once, whatever was forgotten since). */
  #total = 0;

  get totalSamples(): number {
    return this.#total;
  }

  /** Captured [from, to) is skipped; `from` is at or after every range declared before. */
  add(from: number, to: number): void {
    if (to <= from) return;
    this.#total += to - from;
    const last = this.#to.length - 1;
    if (last >= 0 && this.#to[last]! >= from) {
      this.#to[last] = Math.max(this.#to[last]!, to);
      return;
    }
    this.#from.push(from);
    this.#to.push(to);
  }

  /** The end of the range holding `position`, or -1 when it is not skipped. */
  endAt(position: number): number {
    for (let i = 0; i < this.#from.length; i++) {
      if (this.#from[i]! > position) return -1;
      if (position < this.#to[i]!) return this.#to[i]!;
    }
    return -1;
  }

  /** The start of the first range after `position` (or holding it), or +Infinity. */
  nextFrom(position: number): number {
    for (let i = 0; i < this.#from.length; i++) {
      if (this.#to[i]! > position) return Math.max(this.#from[i]!, position);
    }
    return Number.POSITIVE_INFINITY;
  }

  /** Skipped samples inside [from, to). */
  within(from: number, to: number): number {
    let n = 0;
    for (let i = 0; i < this.#from.length; i++) {
      const a = Math.max(this.#from[i]!, from);
      const b = Math.min(this.#to[i]!, to);
      if (b > a) n += b - a;
    }
    return n;
  }

  /** The server has everything before `position`: ranges ending there or before are done. */
  forgetBefore(position: number): void {
    let k = 0;
    while (k < this.#from.length && this.#to[k]! <= position) k++;
    if (k === 0) return;
    this.#from.splice(0, k);
    this.#to.splice(0, k);
  }
}
