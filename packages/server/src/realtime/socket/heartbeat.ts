// Real time even under a test's fake timers (util/real-timers.ts).
import { setInterval, clearInterval } from '../../util/real-timers.js';

/**
 * App-level heartbeat of one socket. Browsers can neither send nor see WebSocket ping
 * frames, so liveness is JSON: the server sends `{ type: "ping", id }` every intervalMs and counts any
 * inbound frame (audio, JSON, pong) as a sign of life. Nothing inbound for timeoutMs means the peer is
 * gone or the path is half-open (a NAT or proxy dropped it without a FIN): onTimeout closes our side.
 * The client runs the mirror image: our pings guarantee it hears something every intervalMs.
 *
 * One timer ticks at a fraction of the interval instead of re-arming a timeout per frame (50 frames/s).
 */
export class Heartbeat {
  private timer: ReturnType<typeof setInterval> | undefined;
  private lastSeen: number;
  private lastPing: number;
  private nextId = 1;

  constructor(
    private readonly intervalMs: number,
    private readonly timeoutMs: number,
    private readonly sendPing: (id: number) => void,
    private readonly onTimeout: () => void,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.lastSeen = now();
    this.lastPing = this.lastSeen;
  }

  start(): void {
    if (this.timer !== undefined) return;
    const tick = Math.max(5, Math.min(this.intervalMs, Math.floor(this.timeoutMs / 5)));
    this.timer = setInterval(() => this.check(), tick);
  }

  /** Something arrived from the peer. */
  touch(): void {
    this.lastSeen = this.now();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    const now = this.now();
    if (now - this.lastSeen >= this.timeoutMs) {
      this.stop();
      this.onTimeout();
      return;
    }
    if (now - this.lastPing >= this.intervalMs) {
      this.lastPing = now;
      this.sendPing(this.nextId++);
    }
  }
}
