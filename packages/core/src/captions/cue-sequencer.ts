import type { Cue, CueChange } from './cue.js';

/**
 * Orders final cues for a file: a cue is released once it is settled and every cue before it was
 * released (a file is written front to back; WebVTT wants start times in order). `end()` releases the
 * rest. Cues a revision emptied are released as empty: writers skip them. A revision of a cue already
 * released (only a reconnect's late view can cause one) cannot reach a file written so far; it is counted.
 */
export class CueSequencer {
  readonly #held = new Map<number, Cue>();
  #next = 0;
  #lateRevisions = 0;

  /** Revisions that arrived after their cue was released. */
  get lateRevisions(): number {
    return this.#lateRevisions;
  }

  /** Takes one engine decision; returns the cues now ready, in order. */
  take(change: CueChange): Cue[] {
    const { cue } = change;
    if (!cue.final || change.kind === 'live' || change.kind === 'removed') return [];
    if (cue.index < this.#next) {
      this.#lateRevisions += 1;
      return [];
    }
    this.#held.set(cue.index, cue);
    return this.#release(false);
  }

  /** The session ended: everything held goes out, in order. */
  end(): Cue[] {
    return this.#release(true);
  }

  #release(all: boolean): Cue[] {
    const out: Cue[] = [];
    if (all) {
      for (const index of [...this.#held.keys()].sort((a, b) => a - b)) {
        out.push(this.#held.get(index) as Cue);
        this.#next = index + 1;
      }
      this.#held.clear();
      return out;
    }
    for (;;) {
      const cue = this.#held.get(this.#next);
      if (cue === undefined || !cue.settled) return out;
      this.#held.delete(this.#next);
      this.#next += 1;
      out.push(cue);
    }
  }
}
