/** While suspended, the capture asks its own context to resume this often (ms). */
const ASK_AGAIN_MS = 1000;

/**
 * What the capture does when its AudioContext's state changes:
 *   lose       it closed: a loss (graph-replacement.ts), detail 'context-closed'
 *   suspended  it stopped running: report it, say `reason` in the health, ask our own context to resume
 *   resumed    it runs again: cut at the last frame before the suspension, detected `sinceMs` ago
 *   none       nothing changed for the capture (still suspended, or running and never suspended)
 */
export type ContextChange =
  | { readonly next: 'lose' }
  | { readonly next: 'suspended'; readonly reason: string }
  | { readonly next: 'resumed'; readonly lastFrameMs: number; readonly sinceMs: number }
  | { readonly next: 'none' };

const NONE: ContextChange = { next: 'none' };

/**
 * A suspended AudioContext, from the moment it stopped running until the cut made when it runs again
 * (or a loss that cuts first). `lastFrameMs` is on the capture's clock (ms since startCapture()); the
 * time of the last resume() asked is performance.now(), and it also dates the detection.
 *
 * A suspension is no graph replacement: the same graph goes on. The cut is made when the context
 * runs again, not when it stops: by then the frames captured before the suspension have all reached
 * the page, so none lands after the cut.
 */
export class Suspension {
  #askedAt = 0;
  #lastFrameMs: number | undefined;

  get active(): boolean {
    return this.#lastFrameMs !== undefined;
  }

  /**
   * The context's state is now `state` ('running', 'suspended', 'interrupted' in Safari, 'closed');
   * the last frame arrived at `lastFrameMs` (the capture's clock). Begins or ends the suspension.
   */
  contextChanged(state: string, lastFrameMs: number): ContextChange {
    if (state === 'closed') return { next: 'lose' };
    if (state !== 'running') {
      if (this.active) return NONE;
      this.#begin(lastFrameMs);
      return { next: 'suspended', reason: `suspended: the AudioContext is ${state}` };
    }
    const ended = this.end();
    return ended === undefined ? NONE : { next: 'resumed', ...ended };
  }

  /** The context stopped running; the last frame before it arrived at `lastFrameMs`. */
  #begin(lastFrameMs: number): void {
    this.#askedAt = performance.now();
    this.#lastFrameMs = lastFrameMs;
  }

  /**
   * Ends it (the context runs again, or a cut comes first): the last frame before it, and how long
   * ago it was detected (ms); undefined when not suspended.
   */
  end(): { readonly lastFrameMs: number; readonly sinceMs: number } | undefined {
    const lastFrameMs = this.#lastFrameMs;
    if (lastFrameMs === undefined) return undefined;
    this.#lastFrameMs = undefined;
    return { lastFrameMs, sinceMs: performance.now() - this.#askedAt };
  }

  /**
   * Whether to ask the context to resume again now: still suspended a second after the last ask (a
   * resume may need a user gesture, or the system holds the device). Counts the ask when it says yes.
   */
  askAgain(): boolean {
    if (this.#lastFrameMs === undefined || performance.now() - this.#askedAt <= ASK_AGAIN_MS) return false;
    this.#askedAt = performance.now();
    return true;
  }
}
