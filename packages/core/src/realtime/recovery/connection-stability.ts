/**
 * Whether the reconnect budget may start over. A connection that came back earns a fresh budget only
 * once it has stayed ready for `stableWindowMs`; a loss before that continues the same run of attempts,
 * so a link that drops every few seconds backs off further each time instead of reconnecting at full
 * speed for ever. Two such short-lived connections in a row are flapping.
 *
 * Bookkeeping only, handed the clock on each call: recovery.ts asks it and acts.
 */
export class ConnectionStability {
  /** When the current connection said session.ready; undefined while none is ready. */
  #readyAt: number | undefined;
  /** Connections of this run that came back and were lost before they were stable. */
  #unstableLosses = 0;
  #flapping = false;

  constructor(readonly stableWindowMs: number) {}

  get flapping(): boolean {
    return this.#flapping;
  }

  /** Losses of connections that came back but did not stay (0 once a connection was stable). */
  get unstableLosses(): number {
    return this.#unstableLosses;
  }

  /**
   * A connection is ready. `continued`: it took over from one the server recycled (docs/protocol.md
   * "Socket lifetime"), so the link has been up since the earlier one's ready and that time still counts.
   */
  ready(now: number, continued = false): void {
    if (!continued || this.#readyAt === undefined) this.#readyAt = now;
  }

  /**
   * Milliseconds until the ready connection has been up for the window (0: due, or none is ready). A
   * timer set for the window can run early by this clock: Node starts timers from the event loop's
   * cached time, which lags behind when the loop was busy, so the session asks again for the rest.
   */
  remainingMs(now: number): number {
    return this.#readyAt === undefined ? 0 : Math.max(0, this.#readyAt + this.stableWindowMs - now);
  }

  /**
   * The connection is still up at `now` (the session asks once stableWindowMs after its ready): `stable`
   * when this made it stable, so the budget starts over; `endsFlapping` when the session was flapping.
   */
  steady(now: number): { readonly stable: boolean; readonly endsFlapping: boolean } {
    if (this.#readyAt === undefined || now - this.#readyAt < this.stableWindowMs) return { stable: false, endsFlapping: false };
    const endsFlapping = this.#flapping;
    this.#unstableLosses = 0;
    this.#flapping = false;
    return { stable: true, endsFlapping };
  }

  /**
   * The connection was lost at `now`. Returns `fresh` when the run of attempts starts over (first loss,
   * or the lost connection had been stable), and whether the session is now flapping.
   */
  lost(now: number): { readonly fresh: boolean; readonly flapping: boolean } {
    const readyAt = this.#readyAt;
    this.#readyAt = undefined;
    if (readyAt === undefined) return { fresh: this.#unstableLosses === 0, flapping: this.#flapping };
    if (now - readyAt >= this.stableWindowMs) {
      this.#unstableLosses = 0;
      this.#flapping = false;
      return { fresh: true, flapping: false };
    }
    this.#unstableLosses += 1;
    // One short connection is a loss; two in a row, each lost before it was stable, is a flapping link.
    this.#flapping = this.#unstableLosses >= 2;
    return { fresh: false, flapping: this.#flapping };
  }
}
