import { CaptureTimeline } from '@soundclone/core/internal';
import type { CaptureCause, CaptureDevice, CaptureEvent, CaptureGap } from '@soundclone/core';

/** A cut whose gap closes at the next frame. */
export interface OpenGap {
  readonly cause: CaptureCause;
  /** The session's captured position at the cut (exact). */
  readonly atSample: number;
  /** The last frame before the cut, and when the loss was detected (ms since startCapture()). */
  readonly fromMs: number;
  readonly detectedMs: number;
  /** The device that was capturing. */
  readonly device: CaptureDevice;
}

/**
 * The capture's gaps: at most one open (cut made, no frame since), the closed ones placed on core's
 * capture timeline. Closing one returns the events that say so, in order; the capture emits them.
 */
export class GapBook {
  readonly #timeline = new CaptureTimeline();
  readonly #gaps: CaptureGap[] = [];
  #open: OpenGap | undefined;
  #recoveries = 0;

  get open(): OpenGap | undefined {
    return this.#open;
  }

  get list(): readonly CaptureGap[] {
    return this.#gaps;
  }

  get recoveries(): number {
    return this.#recoveries;
  }

  get missingSamples(): number {
    return this.#timeline.missingSamples;
  }

  begin(gap: OpenGap): void {
    this.#open = gap;
  }

  /** The first frame after the cut arrived at `now` from `device`: the gap, then what it means. */
  close(now: number, device: CaptureDevice): CaptureEvent[] {
    const open = this.#open;
    if (open === undefined) return [];
    this.#open = undefined;
    const gap = this.#timeline.gap(open.cause, open.atSample, open.fromMs, now);
    this.#gaps.push(gap);
    const events: CaptureEvent[] = [{ type: 'gap', gap }];
    if (open.cause !== 'suspended') {
      this.#recoveries++;
      if (device.id !== open.device.id) events.push({ type: 'device-changed', from: open.device, to: device, atMs: now });
    }
    events.push({ type: 'recovered', device, cause: open.cause, afterMs: Math.round(now - open.detectedMs), atMs: now });
    return events;
  }
}
