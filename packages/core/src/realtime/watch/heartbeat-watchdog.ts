/**
 * The client half of the app-level heartbeat (docs/protocol.md): the server pings every
 * heartbeatIntervalMs and the client answers, so something arrives at least that often. Nothing for
 * timeoutMs means the socket is dead or half-open (a NAT or proxy dropped it without a FIN), which
 * TCP alone would not notice for minutes. This covers every state, idle and paused included; while
 * audio flows the ack watchdog (ack-watchdog.ts) notices far sooner.
 *
 * Clock readings only: the session's watch tick asks expired() (socket-watch.ts), and the session drops the socket.
 */
export class HeartbeatWatchdog {
  #lastSeen = 0;
  #timeoutMs = Number.POSITIVE_INFINITY;

  /** A socket is ready: the silence is counted from now. */
  start(now: number, timeoutMs: number): void {
    this.#lastSeen = now;
    this.#timeoutMs = timeoutMs;
  }

  /** Something arrived from the server. */
  touch(now: number): void {
    this.#lastSeen = now;
  }

  /** Nothing heard for the timeout. */
  expired(now: number): boolean {
    return now - this.#lastSeen >= this.#timeoutMs;
  }
}
