/** While suspended, the capture asks its own context to resume this often (ms). */
const ASK_AGAIN_MS = 1000;

/**
 * A suspended AudioContext, from the moment it stopped running until the cut made when it runs again
 * (or a loss that cuts first). `lastFrameMs` is on the capture's clock (ms since startCapture()); the
 * time of the last resume() asked is performance.now(), and it also dates the detection.
 */
export class Suspension {
  #askedAt = 0;
  #lastFrameMs: number | undefined;

  get active(): boolean {
    return this.#lastFrameMs !== undefined;
  }

  /** The context stopped running; the last frame before it arrived at `lastFrameMs`. */
  begin(lastFrameMs: number): void {
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
