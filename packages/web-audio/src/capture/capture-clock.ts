import { DriftEstimator, StarvationDetector, type StarvationReading } from '@soundclone/core/internal';

/**
 * The capture's clock measures, on the page: time since startCapture(), time to first audio, the last
 * frame's arrival, and for the current device's run (restarted at each gap) core's drift estimator and
 * starvation detector fed with the frames the device delivered (dropped frames included: the device's
 * clock ran through them). Times are performance.now() based, ms since startCapture().
 */
export class CaptureClock {
  readonly #t0: number;
  readonly #starvationMs: number;
  #drift: DriftEstimator;
  #starvation: StarvationDetector;
  #runFrames = 0;
  #firstAudioMs: number | null = null;
  #lastFrameMs: number | null = null;
  #underruns = 0;
  /** The current starvation episode: the last frame before it, the first after (late audio arriving). */
  #starving: { readonly lastFrameMs: number | null; resumedMs: number | null } | undefined;

  constructor(startedAt: number, sampleRate: number, starvationMs: number) {
    this.#t0 = startedAt;
    this.#starvationMs = starvationMs;
    this.#drift = new DriftEstimator({ sampleRate });
    this.#starvation = new StarvationDetector({ sampleRate, thresholdMs: starvationMs });
  }

  /** ms since startCapture(). */
  now(): number {
    return performance.now() - this.#t0;
  }

  get firstAudioMs(): number | null {
    return this.#firstAudioMs;
  }

  /** When the current run's last frame arrived; null before its first. */
  get lastFrameMs(): number | null {
    return this.#lastFrameMs;
  }

  get driftPpm(): number | null {
    return this.#drift.ppm;
  }

  get underruns(): number {
    return this.#underruns;
  }

  /** A block of `count` frames arrived at `now`. */
  frames(count: number, now: number): void {
    if (this.#firstAudioMs === null) this.#firstAudioMs = now;
    if (this.#starving !== undefined) this.#starving.resumedMs ??= now;
    this.#lastFrameMs = now;
    this.#runFrames += count;
    this.#drift.add(this.#runFrames, now);
  }

  /** Frames the device delivered but the page lost (a drop). */
  dropped(count: number): void {
    this.#runFrames += count;
  }

  /**
   * A starvation reading (call it on blocks and on a timer); counts each episode once. When an episode
   * ends (the late audio caught up), `starvedMs` is how long no audio came: from the last frame before
   * it to the first after.
   */
  check(now: number): StarvationReading & { readonly starvedMs?: number } {
    const reading = this.#starvation.check(this.#runFrames, now);
    if (reading.started) {
      this.#underruns++;
      this.#starving = { lastFrameMs: this.#lastFrameMs, resumedMs: null };
    }
    if (!reading.ended || this.#starving === undefined) return reading;
    const { lastFrameMs, resumedMs } = this.#starving;
    this.#starving = undefined;
    return { ...reading, starvedMs: (resumedMs ?? now) - (lastFrameMs ?? now) };
  }

  /** Another device or a resumed context: a new run, at `sampleRate`. */
  restart(sampleRate: number): void {
    this.#runFrames = 0;
    this.#lastFrameMs = null;
    this.#starving = undefined;
    this.#drift = new DriftEstimator({ sampleRate });
    this.#starvation = new StarvationDetector({ sampleRate, thresholdMs: this.#starvationMs });
  }
}
