/**
 * The client half of the app-level heartbeat (docs/protocol.md): the server pings every
 * heartbeatIntervalMs and the client answers, so something arrives at least that often. Nothing for
 * timeoutMs means the socket is dead or half-open (a NAT or proxy dropped it without a FIN), which
 * TCP alone would not notice for minutes. One interval timer instead of a timeout re-armed per message.
 */
export class HeartbeatWatchdog {
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastSeen = 0;

  constructor(private readonly now: () => number, private readonly onTimeout: () => void) {}

  start(timeoutMs: number): void {
    this.stop();
    this.#lastSeen = this.now();
    const tick = Math.max(5, Math.floor(timeoutMs / 5));
    this.#timer = setInterval(() => {
      if (this.now() - this.#lastSeen < timeoutMs) return;
      this.stop();
      this.onTimeout();
    }, tick);
  }

  /** Something arrived from the server. */
  touch(): void {
    this.#lastSeen = this.now();
  }

  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}
