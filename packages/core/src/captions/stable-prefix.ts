import { splitWords } from './cue-layout.js';

interface Seen {
  readonly word: string;
  /** Caller's clock when this word (with the same words before it) first appeared. */
  readonly sinceMs: number;
  /** Further partials that kept it unchanged. */
  updates: number;
}

/**
 * The stable prefix of the open segment's partial text. A word is stable once it, and every word before
 * it, stayed unchanged for `stableUpdates` further partials or `stableMs`. What has been shown is held:
 * a shown word the recognizer changes keeps showing until its replacement is stable itself (or the line
 * commits), so a flip-flopping word never blinks on screen. Nothing here reads a clock; times come in.
 */
export class StablePrefix {
  #seen: Seen[] = [];
  #shown: string[] = [];
  #all: string[] = [];
  #lastMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly stableUpdates: number,
    private readonly stableMs: number,
  ) {}

  /** A new partial of the open segment. */
  update(text: string, nowMs: number): void {
    const words = splitWords(text);
    const next: Seen[] = [];
    let same = true;
    for (let i = 0; i < words.length; i++) {
      const word = words[i] as string;
      const before = this.#seen[i];
      if (same && before !== undefined && before.word === word) {
        before.updates += 1;
        next.push(before);
      } else {
        same = false;
        next.push({ word, sinceMs: nowMs, updates: 0 });
      }
    }
    this.#seen = next;
    this.#all = words;
    this.#refresh(nowMs);
  }

  /** Time passed with no partial: words may have become stable by age. Returns whether the shown words changed. */
  tick(nowMs: number): boolean {
    const before = this.#shown.join(' ');
    this.#refresh(nowMs);
    return this.#shown.join(' ') !== before;
  }

  /** The earliest caller time at which a not-yet-stable word turns stable by age, or null. */
  nextStableAtMs(): number | null {
    // Stability is a prefix property: the first word not stable at the last look decides when the prefix can grow.
    const first = this.#seen[this.#stableCount(this.#lastMs)];
    return first === undefined ? null : first.sinceMs + this.stableMs;
  }

  /** Words shown (stable, or held from an earlier stable view). */
  get shown(): readonly string[] {
    return this.#shown;
  }

  /** The words after the shown ones in the latest partial (the unstable tail). */
  get tail(): readonly string[] {
    return this.#all.slice(this.#shown.length);
  }

  /** The open segment was committed (or a new epoch began): start over. */
  reset(): void {
    this.#seen = [];
    this.#shown = [];
    this.#all = [];
  }

  #stableCount(nowMs: number): number {
    let n = 0;
    for (const s of this.#seen) {
      if (s.updates >= this.stableUpdates || nowMs - s.sinceMs >= this.stableMs) n += 1;
      else break;
    }
    return n;
  }

  #refresh(nowMs: number): void {
    this.#lastMs = nowMs;
    const stable = this.#seen.slice(0, this.#stableCount(nowMs)).map((s) => s.word);
    // Hold: shown words past the stable prefix stay until something stable replaces them.
    this.#shown = stable.length >= this.#shown.length ? stable : [...stable, ...this.#shown.slice(stable.length)];
  }
}
