import type { AckMode } from './faults.js';
// Real time even under a test's fake timers (util/real-timers.ts).
import { setTimeout, clearTimeout } from '../../util/real-timers.js';

/**
 * When `audio.ack` goes out. Leading and trailing throttle: the first accepted frame after a
 * quiet spell is acked at once, later ones at most every `intervalMs`, and the last cursor is always
 * acked, so a client never waits for an ack that is not coming. Fault injection can delay acks or
 * withhold them; a withheld ack is remembered and goes out when the fault is lifted (`faultsChanged`).
 */
export class AckThrottle {
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastAt = -Infinity;
  private withheld = false;

  constructor(
    private readonly intervalMs: number,
    private readonly mode: () => AckMode,
    private readonly sendAck: () => void,
  ) {}

  /** Audio was accepted (or was a duplicate): an ack is due. */
  schedule(): void {
    const mode = this.mode();
    if (mode.kind === 'withhold') {
      this.withheld = true;
      return;
    }
    this.withheld = false;
    if (this.timer !== undefined) return;
    const wait = Math.max(mode.kind === 'delay' ? mode.ms : 0, this.lastAt + this.intervalMs - performance.now());
    if (wait <= 0) {
      this.send();
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.mode().kind === 'withhold') this.withheld = true;
      else this.send();
    }, wait);
  }

  /** An ack now, ahead of rotation, pause and finish (unless withheld). */
  flush(): void {
    if (this.mode().kind === 'withhold') return;
    this.cancel();
    this.send();
  }

  /** Fault rules changed: a withheld ack may go now. */
  faultsChanged(): void {
    if (this.withheld) this.schedule();
  }

  cancel(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  private send(): void {
    this.lastAt = performance.now();
    this.sendAck();
  }
}
