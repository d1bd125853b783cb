import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import { CaptureTimeline, DriftEstimator, StarvationDetector, blockLevel } from '@soundclone/core/internal';
import {
  type CaptureCause, type CaptureDevice, type CaptureEvent, type CaptureGap, type CaptureHealth, type CaptureLevel, type CaptureState,
} from '@soundclone/core';
import type { AudioBlock } from '../sources/audio-source.js';

/**
 * The bookkeeping of a capture's health: counters, the core's measures (drift, starvation, level),
 * the session positions of the breaks, and the two streams a UI reads. It decides nothing: the
 * microphone tells it what happened and reads back what it measured.
 *
 * Session positions: each stretch between breaks is resampled by the session as a stream of its own
 * (markDiscontinuity), which gives exactly floor(frames · 16000 / rate) samples; so the position of a
 * break is known here, to the sample, without asking the session.
 */
export class HealthTracker {
  readonly #health: BehaviorSubject<CaptureHealth>;
  readonly #events = new Subject<CaptureEvent>();
  readonly #timeline = new CaptureTimeline();
  readonly #now: () => number;
  readonly #startedMs: number;
  readonly #starvationMs: number;
  #state: CaptureState = 'starting';
  #reason = 'opening';
  #device: CaptureDevice | null = null;
  #firstAudioMs: number | null = null;
  #level: CaptureLevel | null = null;
  #frames = 0;
  /** Frames of the current stretch, and 16 kHz samples of the closed ones. */
  #segmentFrames = 0;
  #closedSamples = 0;
  #lastAudioMs: number;
  #underruns = 0;
  #overruns = 0;
  #dropped = 0;
  #gaps = 0;
  #lastGap: CaptureGap | null = null;
  #recoveries = 0;
  #drift: DriftEstimator | null = null;
  #starvation: StarvationDetector | null = null;
  /** Blocks are measured as the reader takes them: until it starts, no audio is late. */
  #reading = false;

  constructor(options: { now: () => number; starvationMs: number }) {
    this.#now = options.now;
    this.#starvationMs = options.starvationMs;
    this.#startedMs = options.now();
    this.#lastAudioMs = this.#startedMs;
    this.#health = new BehaviorSubject(this.snapshot());
  }

  get health$(): Observable<CaptureHealth> {
    return this.#health.asObservable();
  }

  get events$(): Observable<CaptureEvent> {
    return this.#events.asObservable();
  }

  get state(): CaptureState {
    return this.#state;
  }

  get device(): CaptureDevice | null {
    return this.#device;
  }

  /** Clock time since the capture opened. */
  get nowMs(): number {
    return this.#now() - this.#startedMs;
  }

  get lastAudioMs(): number {
    return this.#lastAudioMs - this.#startedMs;
  }

  /** The session's captured position now: closed stretches plus this one. */
  get sessionSamples(): number {
    return this.#closedSamples + this.#segmentSamples();
  }

  snapshot(): CaptureHealth {
    const now = this.#now();
    const silent = this.#reading && (this.#state === 'running' || this.#state === 'recovering') ? Math.max(0, now - this.#lastAudioMs) : 0;
    return {
      state: this.#state,
      reason: this.#reason,
      device: this.#device,
      atMs: now - this.#startedMs,
      timeToFirstAudioMs: this.#firstAudioMs,
      level: this.#level,
      capturedFrames: this.#frames,
      underruns: this.#underruns,
      overruns: this.#overruns,
      droppedFrames: this.#dropped,
      driftPpm: this.#drift?.ppm ?? null,
      // Under a block's worth of quiet is just the time between blocks.
      silentForMs: silent < 100 ? 0 : Math.round(silent),
      gaps: this.#gaps,
      gapSamples: this.#timeline.missingSamples,
      lastGap: this.#lastGap,
      recoveries: this.#recoveries,
    };
  }

  /** A device is capturing (the first, or one found after a loss): measures start afresh on its clock. */
  started(device: CaptureDevice): void {
    this.#device = device;
    this.#drift = new DriftEstimator({ sampleRate: device.sampleRate });
    this.#starvation = new StarvationDetector({ sampleRate: device.sampleRate, thresholdMs: this.#starvationMs });
    this.#starvation.rebase(0, this.#now());
    this.#segmentFrames = 0;
    this.#lastAudioMs = this.#now();
    this.setState('running', 'capturing');
  }

  /**
   * The reader began taking blocks. A capture queues what the device gives until it is read, so audio
   * that waited for a late reader (an app that connects first, then reads) is not missing: the clock
   * of the stretch starts here, and the queued blocks arrive ahead of it.
   */
  reading(): void {
    if (this.#reading) return;
    this.#reading = true;
    const now = this.#now();
    this.#starvation?.rebase(this.#segmentFrames, now);
    this.#lastAudioMs = now;
  }

  /** A block arrived; returns nothing, measures everything. */
  block(block: AudioBlock): void {
    const device = this.#device;
    if (device === null) return;
    const now = this.#now();
    const frames = block.length / device.channels;
    if (this.#firstAudioMs === null) this.#firstAudioMs = now - this.#startedMs;
    this.#frames += frames;
    this.#segmentFrames += frames;
    this.#lastAudioMs = now;
    this.#level = blockLevel(block);
    this.#drift?.add(this.#segmentFrames, now);
    this.#starvation?.check(this.#segmentFrames, now);
  }

  /** A timer reading (no block is news too): returns how far behind the clock the capture is, when starved. */
  checkStarvation(): { started: boolean; behindMs: number } | null {
    const s = this.#starvation;
    if (s === null || this.#state !== 'running' || !this.#reading) return null;
    const reading = s.check(this.#segmentFrames, this.#now());
    if (reading.started) this.#underruns += 1;
    return reading.starved ? { started: reading.started, behindMs: reading.behindMs } : null;
  }

  /** How far behind the clock the capture is now, ms. */
  behindMs(): number {
    return this.#starvation?.check(this.#segmentFrames, this.#now()).behindMs ?? 0;
  }

  overflow(frames: number): void {
    this.#overruns += 1;
    this.#dropped += frames;
    this.#publish();
  }

  /**
   * Closes the current stretch and places a gap at its end: the session position is exact, the
   * missing length comes from the clock (`missingMs`).
   */
  breakHere(cause: CaptureCause, fromMs: number, toMs: number, missingMs: number): CaptureGap {
    const device = this.#device;
    if (device !== null) this.#closedSamples += this.#segmentSamples();
    this.#segmentFrames = 0;
    const gap = this.#timeline.gap(cause, this.#closedSamples, fromMs, toMs, Math.max(0, Math.round(missingMs * 16)));
    this.#gaps += 1;
    this.#lastGap = gap;
    this.emit({ type: 'gap', gap });
    return gap;
  }

  recovered(): void {
    this.#recoveries += 1;
  }

  setState(state: CaptureState, reason: string): void {
    this.#state = state;
    this.#reason = reason;
    this.#publish();
  }

  emit(event: CaptureEvent): void {
    this.#events.next(event);
    this.#publish();
  }

  /** Sends the current snapshot (a timer calls it so "no audio for N s" counts up). */
  tick(): void {
    this.#publish();
  }

  complete(): void {
    this.#publish();
    this.#events.complete();
    this.#health.complete();
  }

  #segmentSamples(): number {
    const device = this.#device;
    return device === null ? 0 : Math.floor((this.#segmentFrames * 16_000) / device.sampleRate);
  }

  #publish(): void {
    if (!this.#health.closed) this.#health.next(this.snapshot());
  }
}
