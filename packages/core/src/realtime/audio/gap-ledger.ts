/**
 * Audio the server will never get, declared instead of papered over (spec "finish":
 * capturedSamples above what was received marks a transport gap).
 *
 * Two position spaces exist once a gap happened:
 *   captured  the client's count of samples since the session began (ring positions, capturedSamples);
 *   server    the server's stream (frame startSample, receivedSamples), which has no holes.
 * The server refuses frames beyond its cursor, so audio after a gap continues at the server's cursor:
 * server = captured - (samples skipped before it). At finish, capturedSamples - receivedSamples is
 * exactly the sum of the gaps, which the server reports as TRANSPORT_GAP (status PARTIAL, charge unchanged).
 */
export interface Gap {
  /** First captured sample lost. */
  readonly from: number;
  /** End (exclusive) of the captured samples lost. */
  readonly to: number;
  /** The server's position where the audio after the gap continues (its receivedSamples at the cut). */
  readonly serverSample: number;
  /**
   * `overflow`: the ring dropped audio the server had not acknowledged (an outage longer than bufferMs).
   * `undelivered`: the session was finished over REST while audio was still unsent (socket down).
   * `refused`: the server refused it because the account's balance was used up (BALANCE_EXHAUSTED);
   * never charged, never recognised.
   */
  readonly cause: 'overflow' | 'undelivered' | 'refused';
}

interface Skip {
  /** Server position of the cut. */
  readonly server: number;
  /** Samples skipped before any server position >= `server`. */
  readonly skipped: number;
}

/** No gap to tell: the one answer of almost every call, shared. */
export const NO_GAPS: readonly Gap[] = Object.freeze([]);

export class GapLedger {
  readonly #skips: Skip[] = [];
  /** Captured ranges already reported, merged and sorted (a widened gap reports only what is new). */
  readonly #reported: Array<[number, number]> = [];
  /** Samples skipped so far: captured - server for everything after the last cut. */
  get skipped(): number {
    return this.#skips.at(-1)?.skipped ?? 0;
  }

  /** Every captured range lost so far, merged. */
  get ranges(): ReadonlyArray<readonly [number, number]> {
    return this.#reported;
  }

  toCaptured(server: number): number {
    for (let i = this.#skips.length - 1; i >= 0; i--) {
      const skip = this.#skips[i]!;
      if (server >= skip.server) return server + skip.skipped;
    }
    return server;
  }

  toServer(captured: number): number {
    return captured - this.skipped;
  }

  /**
   * The server turned out to be behind a cut declared earlier (frames sent before it were lost with
   * the socket): forget the cuts after `server`; the caller declares one wider gap from there.
   */
  forgetAfter(server: number): void {
    while (this.#skips.length > 0 && this.#skips.at(-1)!.server > server) this.#skips.pop();
  }

  /**
   * Captured [from, to) is lost; the server's stream continues at `from`'s server position. Returns the
   * gaps to tell: the parts of the range not declared before (none when all of it was).
   */
  declare(from: number, to: number, cause: Gap['cause']): readonly Gap[] {
    if (to <= from) return NO_GAPS;
    const server = this.toServer(from);
    if (cause === 'overflow') this.#skips.push({ server, skipped: this.skipped + (to - from) });
    const gaps = this.#unreported(from, to).map(([a, b]): Gap => ({ from: a, to: b, serverSample: server, cause }));
    this.#remember(from, to);
    return gaps;
  }

  #unreported(from: number, to: number): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let at = from;
    for (const [a, b] of this.#reported) {
      if (b <= at || a >= to) continue;
      if (a > at) out.push([at, a]);
      at = Math.max(at, b);
    }
    if (at < to) out.push([at, to]);
    return out;
  }

  #remember(from: number, to: number): void {
    const all = [...this.#reported, [from, to] as [number, number]].sort((x, y) => x[0] - y[0]);
    this.#reported.length = 0;
    for (const range of all) {
      const last = this.#reported.at(-1);
      if (last !== undefined && range[0] <= last[1]) last[1] = Math.max(last[1], range[1]);
      else this.#reported.push([range[0], range[1]]);
    }
  }
}
