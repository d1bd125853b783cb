import type { CaptureHealth } from '@soundclone/core';
import type { CaptureBooks } from './capture-books.js';
import type { CaptureClock } from './capture-clock.js';
import type { GapBook } from './gap-book.js';
import type { GraphSlot } from './graph-slot.js';
import type { AudioLevel } from './level-meter.js';

/** What a health reading is made of, read from each owner at the moment of the reading. */
export interface HealthSources {
  readonly slot: GraphSlot;
  readonly clock: CaptureClock;
  readonly books: CaptureBooks;
  readonly gaps: GapBook;
  /** The input's level now. */
  readonly level: () => AudioLevel;
}

/**
 * The capture's health (core's CaptureHealth): its state and the reason in words, which the capture
 * sets, and the readings of the clock, books and gaps, taken at each snapshot. Handed to `publish`
 * on every change and whenever the capture asks (its tick), until complete().
 */
export class HealthReport {
  readonly #from: HealthSources;
  readonly #publish: (health: CaptureHealth) => void;
  #done = false;
  #state: CaptureHealth['state'] = 'starting';
  #reason = 'opened, no audio yet';
  #trackMuted = false;

  constructor(from: HealthSources, publish: (health: CaptureHealth) => void) {
    this.#from = from;
    this.#publish = publish;
  }

  get state(): CaptureHealth['state'] {
    return this.#state;
  }

  /** A new state and why; published at once. */
  set(state: CaptureHealth['state'], reason: string): void {
    this.#state = state;
    this.#reason = reason;
    this.publish();
  }

  /** A new reason in the same state, published with the next reading (the tick). */
  explain(reason: string): void {
    this.#reason = reason;
  }

  /** A new graph's track: muted from the start or not (said once audio flows). */
  watchTrack(muted: boolean): void {
    this.#trackMuted = muted;
  }

  /** The browser or the OS muted or unmuted the track: said in the reason while running. */
  trackMuted(muted: boolean): void {
    this.#trackMuted = muted;
    if (this.#state === 'running') this.set('running', muted ? 'track muted' : 'audio flows');
  }

  /** A frame arrived: a run that was starting is running. */
  flowing(): void {
    if (this.#state === 'starting') this.set('running', this.#trackMuted ? 'track muted' : 'audio flows');
  }

  publish(): void {
    if (!this.#done) this.#publish(this.snapshot());
  }

  /** Nothing is published after this. */
  complete(): void {
    this.#done = true;
  }

  /** The health now, times rounded to whole ms since startCapture(). */
  snapshot(): CaptureHealth {
    const { slot, clock, books, gaps } = this.#from;
    const level = this.#from.level();
    const now = clock.now();
    return {
      state: this.#state,
      reason: this.#reason,
      device: slot.device(),
      atMs: Math.round(now),
      timeToFirstAudioMs: clock.firstAudioMs === null ? null : Math.round(clock.firstAudioMs),
      level: clock.lastFrameMs === null && clock.firstAudioMs === null ? null : { rmsDb: level.dbfs, peakDb: level.peak > 0 ? 20 * Math.log10(level.peak) : Number.NEGATIVE_INFINITY },
      capturedFrames: books.captured,
      underruns: clock.underruns,
      overruns: books.overruns,
      droppedFrames: books.dropped,
      driftPpm: clock.driftPpm,
      // Before the run's first frame: silent since the gap began (or since the start).
      silentForMs: clock.lastFrameMs === null ? (clock.firstAudioMs === null ? Math.round(now) : Math.round(now - (gaps.open?.fromMs ?? now))) : Math.max(0, Math.round(now - clock.lastFrameMs)),
      gaps: gaps.list.length,
      gapSamples: gaps.missingSamples,
      lastGap: gaps.list.at(-1) ?? null,
      recoveries: gaps.recoveries,
    };
  }
}
