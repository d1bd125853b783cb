/** What a status line needs from a gap: core's Gap (`overflow`/`undelivered`) or a microphone's own `dropped`. */
export interface GapNote {
  readonly cause: 'overflow' | 'undelivered' | 'dropped';
  /** Seconds of audio: session gaps count wire samples, microphone drops frames at the device rate. */
  readonly seconds: number;
}

const WHY: Readonly<Record<GapNote['cause'], string>> = {
  overflow: 'overflow: the connection was down longer than the send buffer holds',
  undelivered: 'undelivered: the session finished while audio was still unsent',
  dropped: 'dropped: the microphone captured faster than the session took it',
};

/**
 * Gap status lines, at most one per interval: a burst of gaps (an outage, a stalled session dropping
 * block after block) becomes one line naming each cause with its samples, plus the running totals.
 */
export class GapLines {
  #pending = new Map<GapNote['cause'], { gaps: number; seconds: number }>();
  #totalGaps = 0;
  #totalSeconds = 0;
  #lastPrinted = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly print: (text: string) => void,
    private readonly intervalMs = 1000,
  ) {}

  add(note: GapNote): void {
    const entry = this.#pending.get(note.cause) ?? { gaps: 0, seconds: 0 };
    entry.gaps += 1;
    entry.seconds += note.seconds;
    this.#pending.set(note.cause, entry);
    this.#totalGaps += 1;
    this.#totalSeconds += note.seconds;
    const wait = this.#lastPrinted + this.intervalMs - performance.now();
    if (wait <= 0) this.flush();
    else this.#timer ??= setTimeout(() => this.flush(), wait);
  }

  /** Prints what is pending now (also at the end, so the last gaps are not lost with the timer). */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.size === 0) return;
    const parts = [...this.#pending].map(([cause, { gaps, seconds }]) => `${seconds.toFixed(2)} s in ${String(gaps)} gap${gaps === 1 ? '' : 's'} (${WHY[cause]})`);
    this.#pending.clear();
    this.#lastPrinted = performance.now();
    this.print(`gap: ${parts.join('; ')}; total lost so far ${this.#totalSeconds.toFixed(2)} s in ${String(this.#totalGaps)} gap${this.#totalGaps === 1 ? '' : 's'}`);
  }

  get totalSeconds(): number {
    return this.#totalSeconds;
  }

  get totalGaps(): number {
    return this.#totalGaps;
  }
}
