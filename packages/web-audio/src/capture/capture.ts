import { GuardedEmitter } from '@soundclone/core/internal';
import type { CaptureCause, CaptureDevice, CaptureGap, CaptureHealth } from '@soundclone/core';
import { WebAudioError } from '../errors.js';
import type { CaptureMode } from '../worklet/protocol.js';
import { LevelMeter, SILENT_LEVEL, type AudioLevel } from './level-meter.js';
import { CaptureBooks } from './capture-books.js';
import { captureFailure, reportLater } from './capture-failure.js';
import { CaptureClock } from './capture-clock.js';
import { GapBook } from './gap-book.js';
import { watchDevice } from './device-watch.js';
import { closeGraphContext, connectGraph, disposeGraph, releaseGraph, type CaptureGraph } from './graph.js';
import { GraphSlot } from './graph-slot.js';
import { HealthReport } from './health-report.js';
import type { WebCaptureEvent } from './health.js';
import { openNext, type GraphBuilder } from './device-recovery.js';
import { afterSearch, findReplacement, planLoss, startSwitch, switchOverruled, type LossDetail, type Replacement } from './graph-replacement.js';
import { Suspension } from './suspension.js';
import type { FeedSink, FeedTotals } from './sample-feed.js';
import type { CaptureResources } from './capture-resources.js';
import type { CaptureSession } from './session.js';

import type { CaptureDrop, CaptureResult, CaptureState, CaptureStats } from './capture-types.js';

export type { CaptureDrop, CaptureResult, CaptureState, CaptureStats };

/** The capture's state before and after a change. */
export interface CaptureStateChange {
  readonly from: CaptureState;
  readonly to: CaptureState;
}

/**
 * What a capture tells, by event name (`capture.on(name, listener)`). A listener that throws is
 * reported (rethrown in a microtask) and the capture and the other listeners carry on. Every listener
 * is removed once the capture stopped, after its last `health` and its `state` change to 'stopped'.
 * The same as Observables: `captureStreams(capture)` of `@soundclone/web-audio/rx`.
 */
export interface CaptureEvents {
  /** Level of the input, about 20 times a second, muted or not. */
  level: (level: AudioLevel) => void;
  state: (change: CaptureStateChange) => void;
  /** Each stretch of audio lost before the page (a stalled page), once, in stream order. Rare: none in a healthy page. */
  drop: (drop: CaptureDrop) => void;
  /** What the capture noticed about its device, context and clock, in order (see WebCaptureEvent). */
  event: (event: WebCaptureEvent) => void;
  /** Health on every change and about 4 times a second (`capture.health` is the current value). */
  health: (health: CaptureHealth) => void;
}

/** Health is published at least this often (ms), and starvation checked. */
const HEALTH_TICK_MS = 250;

/**
 * A running capture: microphone (or any MediaStream) → AudioWorklet → page → core encode path →
 * realtime session. Returned by startCapture().
 *
 * mute() vs pause():
 *   - mute(): the session stays live (streaming, connected, same segment rules) and nothing is sent:
 *     muted audio is dropped on the page, not replaced by silence. The session's timeline is the
 *     audio actually sent, and its capturedSamples count only that, so usage and "nothing lost"
 *     checks stay honest (the server is never told about audio it was not sent). The time muted is
 *     in stats.mutedFrames. The level meter keeps running ("you are muted" UIs).
 *   - pause(): the session pauses (server commits the open segment and stops accepting); resume()
 *     starts its next epoch. Audio while paused is dropped too (stats.pausedFrames).
 * Both end the session's segment first (the resampler tail goes out), so the audio before the cut is
 * complete.
 *
 * Device loss and recovery (graph-replacement.ts decides, the capture applies each decision):
 *
 *   capturing ──(track ended | device not listed | context closed)──► recovering
 *        ▲           cut: feed stopped (its last frames handed on), markDiscontinuity(), gap opened
 *        │                                   │ attempt n after nextDelayMs(n): same device, else default
 *        └──── first frame of the new graph ◄┘ (new context at its own rate; setInputFormat)
 *               gap closed, 'recovered'       └─ no device after `attempts`: failure WEB_AUDIO_DEVICE_LOST, stopped
 *
 * The session is the same throughout: no audio is invented for the gap, and the gap's place in the
 * session's stream (sessionSample) and in the lost device's frames (framesBefore) are exact.
 */
export class Capture {
  readonly session: CaptureSession;

  readonly #r: CaptureResources;
  readonly #slot: GraphSlot;
  /** The capture as its feeds' sink (each graph's calls go through the slot's generation check). */
  readonly #sink: FeedSink = {
    block: (block) => this.onBlock(block),
    dropped: (from, frames) => this.onDropped(from, frames),
    skipped: (frames) => this.onSkipped(frames),
    speech: (event, lag) => this.onSpeech(event, lag),
    failed: (error) => this.onFailed(error),
  };
  #meter: LevelMeter;
  readonly #emitter = new GuardedEmitter<CaptureEvents>();
  #level: AudioLevel = SILENT_LEVEL;
  #state: CaptureState = 'capturing';
  readonly #health: HealthReport;
  readonly #gaps = new GapBook();
  #clock: CaptureClock;
  readonly #cleanups: Array<() => void> = [];
  #unwatch: () => void = () => undefined;
  #tick: ReturnType<typeof setInterval> | undefined;
  #muted = false;
  #paused = false;
  readonly #books = new CaptureBooks();
  readonly #suspension = new Suspension();
  /** A graph replacement (a loss's recovery, a setDevice()) is under way: from its start to the new graph's install. */
  #replacing = false;
  /** A cut under way (its last frames reach the session): stop() waits for it, so none arrives after stop() resolved. */
  #cutting: Promise<void> | undefined;
  /** Aborted by stop(): a search for a device ends. */
  readonly #stopped = new AbortController();
  /** What the next graph is built with; undefined: this capture builds none (recovery off). */
  readonly #builder: GraphBuilder | undefined;
  #failure: WebAudioError | undefined;
  #result: CaptureResult | undefined;
  #stopping: Promise<CaptureResult> | undefined;

  /** @hidden Built by startCapture(), which acquires the resources and hands them over. */
  constructor(resources: CaptureResources) {
    this.#r = resources;
    this.#slot = new GraphSlot(resources.graph);
    const rebuild = resources.rebuild;
    this.#builder = rebuild === undefined ? undefined : { rebuild, slot: this.#slot, sink: this.#sink, devices: resources.devices, stopped: this.#stopped.signal };
    this.session = resources.session;
    this.#meter = this.#levelMeter(this.sampleRate);
    this.#clock = new CaptureClock(resources.startedAt ?? performance.now(), this.sampleRate, resources.starvationMs ?? 1500);
    this.#health = new HealthReport({ slot: this.#slot, clock: this.#clock, books: this.#books, gaps: this.#gaps, level: () => this.#level }, (health) => this.#emit('health', health));
    this.#watch();
    const signal = resources.signal;
    if (signal !== undefined) {
      const onAbort = (): void => void this.stop();
      signal.addEventListener('abort', onAbort, { once: true });
      this.#cleanups.push(() => signal.removeEventListener('abort', onAbort));
    }
    this.#tick = setInterval(() => this.#onTick(), HEALTH_TICK_MS);
  }

  /** The AudioContext capturing now (a recovery may replace it). */
  get context(): AudioContext {
    return this.#slot.graph.context;
  }

  /** The stream capturing now (a recovery opens a new one). */
  get stream(): MediaStream {
    return this.#slot.graph.stream;
  }

  get transport(): CaptureMode {
    return this.#slot.graph.feed.mode;
  }

  /** The current context's rate: what the worklet captures at (a recovery may change it: 'rate-changed'). */
  get sampleRate(): number {
    return this.#slot.graph.context.sampleRate;
  }

  get state(): CaptureState {
    return this.#state;
  }

  get level(): AudioLevel {
    return this.#level;
  }

  /** Adds a listener (see CaptureEvents); none is added once the capture stopped. */
  on<K extends keyof CaptureEvents>(event: K, listener: CaptureEvents[K]): this {
    if (this.#state !== 'stopped') this.#emitter.on(event, listener as never);
    return this;
  }

  off<K extends keyof CaptureEvents>(event: K, listener: CaptureEvents[K]): this {
    this.#emitter.off(event, listener as never);
    return this;
  }

  get muted(): boolean {
    return this.#muted;
  }

  get paused(): boolean {
    return this.#paused;
  }

  /** Why the capture stopped by itself, if it did (see stop()). */
  get failure(): WebAudioError | undefined {
    return this.#failure;
  }

  /**
   * The final counts once stopped, also when stop() rejected: after WEB_AUDIO_DEVICE_LOST everything
   * captured before the loss reached the session exactly, and these are its books.
   */
  get result(): CaptureResult | undefined {
    return this.#result;
  }

  /** The capture's health now (what `health` last told, with the clock read now). */
  get health(): CaptureHealth {
    return this.#health.snapshot();
  }

  /** Every gap so far (device losses, suspensions, switches), in order, each once it closed. */
  get gaps(): readonly CaptureGap[] {
    return this.#gaps.list.slice();
  }

  get stats(): CaptureStats {
    return this.#books.stats(this.transport, this.sampleRate, this.#r.writer);
  }

  /** Keeps the session and sends nothing until unmute(). Synchronous: the very next block is dropped. */
  mute(): void {
    this.#assertRunning('mute');
    if (this.#muted) return;
    this.#endSegment();
    this.#muted = true;
    this.#publishState();
  }

  unmute(): void {
    this.#assertRunning('unmute');
    if (!this.#muted) return;
    this.#muted = false;
    this.#publishState();
  }

  /**
   * Stops sending, ends the session's segment, and pauses the session (the server commits the open
   * segment). Resolves when the server confirmed. Audio captured meanwhile is dropped and counted.
   */
  async pause(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    this.#assertRunning('pause');
    if (this.#paused) return;
    this.#endSegment();
    this.#paused = true;
    this.#publishState();
    await this.#r.session.pause(options);
  }

  /** Resumes the session (its next epoch), then sends audio again. */
  async resume(options: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    this.#assertRunning('resume');
    if (!this.#paused) return;
    await this.#r.session.resume(options);
    if (this.#stopping !== undefined) return;
    this.#paused = false;
    this.#publishState();
  }

  /**
   * Moves the capture to another microphone (an id from enumerateDevices()), in the same session. The
   * new device is opened first, while the old one still captures; then the old graph is cut (its last
   * frames handed on, a discontinuity marked, a gap with cause 'device-changed' recorded: the audio
   * between the two graphs is not captured) and the new one takes over, at whatever rate it runs.
   * Rejects (and keeps the current device) when the new one cannot be opened: WEB_AUDIO_DEVICE_NOT_FOUND,
   * WEB_AUDIO_PERMISSION_DENIED, ...; WEB_AUDIO_INVALID_OPTION without recovery (a stream the app passed
   * with recovery off). A stop() before the new device took over rejects it with WEB_AUDIO_STOPPED:
   * the capture stopped on the old device, and the new one is released as soon as it is open (a
   * getUserMedia under way cannot be called back). A session that refuses the switch, at the cut (its
   * markDiscontinuity() threw) or at the new device's rate (its setInputFormat() threw), fails the
   * capture as stop() describes (WEB_AUDIO_CAPTURE_FAILED, a 'failed' event, reported once):
   * setDevice() rejects with that failure (`failure`), and the new device is released (refused at the
   * cut: before setDevice() rejects; at its rate: by the stop() the failure started).
   */
  async setDevice(deviceId: string, options: { signal?: AbortSignal } = {}): Promise<void> {
    this.#assertRunning('setDevice');
    const start = startSwitch(deviceId, this.#builder, this.#replacing, this.#slot.graph);
    if (start.next === 'refuse') throw start.error;
    this.#replacing = true;
    try {
      const next = await openNext(start.builder, start.input);
      // The new graph is this call's until the slot takes it (#install; from there stop() releases it,
      // also when the session refuses its rate): every way out before that (overruled, the session
      // refusing the cut) disposes it here.
      let handedOver = false;
      try {
        let overruled = switchOverruled(this.#stopping !== undefined, options.signal);
        if (overruled === undefined) {
          await this.#cut('device-changed', this.#now());
          // stop() may have come while the old graph was being cut: the new one must not outlive it.
          overruled = switchOverruled(this.#stopping !== undefined);
        }
        if (overruled !== undefined) throw overruled.reject;
        handedOver = true;
        this.#install(next.graph, next.generation);
      } finally {
        if (!handedOver) await disposeGraph(next.graph);
      }
    } finally {
      this.#replacing = false;
    }
  }

  /**
   * Stops capturing: the worklet stops between two quanta and everything it captured before that is
   * encoded and handed to the session (exactly: see CaptureResult.worklet); then the nodes are
   * disconnected, listeners removed, tracks stopped (those startCapture or a recovery opened, or all
   * with releaseStream), and an AudioContext the capture created is closed. The session is left open:
   * call session.finish() to end it. Repeated calls return the same promise.
   *
   * A capture whose audio cannot be handed on (the session's write() threw: a custom CaptureSession
   * failing, or a session another writer left inside a segment of another format; or the session
   * refused a new device's rate) stops by itself, releasing everything as above: the state goes to
   * 'stopped', the error (WEB_AUDIO_CAPTURE_FAILED, the cause attached) is said once as an `event`
   * ('failed'), reported once with reportError() (the page's error event, as a listener's exception)
   * and is `failure`, and stop() rejects with it. Audio from the failure on went nowhere (not
   * delivered, not encoded). So does a capture whose device was lost and did not come back
   * (WEB_AUDIO_DEVICE_LOST).
   */
  stop(): Promise<CaptureResult> {
    // Set before #stop() runs: a `state` listener that calls stop() on 'stopping' gets this same promise.
    this.#stopping ??= Promise.resolve().then(() => this.#stop());
    this.#stopped.abort();
    return this.#stopping;
  }

  /** FeedSink: one block at the context rate, valid only during the call. */
  onBlock(block: Float32Array): void {
    const now = this.#now();
    if (this.#gaps.open !== undefined && !this.#replacing && !this.#suspension.active) this.#closeGap(now);
    this.#health.flowing();
    this.#clock.frames(block.length, now);
    this.#checkStarvation(now);
    this.#books.captured += block.length;
    this.#meter.add(block);
    if (this.#paused) {
      this.#books.paused += block.length;
      return;
    }
    if (this.#muted) {
      this.#books.muted += block.length;
      return;
    }
    const onSamples = this.#r.onSamples;
    if (onSamples !== undefined) {
      // The app's observer: its bug must not cost audio. Reported as a listener's exception is.
      try {
        onSamples(block);
      } catch (caught) {
        reportLater(caught);
      }
    }
    this.#r.writer.push(block);
  }

  /**
   * FeedSink, gated: `frames` the worklet's voice gate did not send, right after the last block. They
   * were captured in time (the clock and the meter count them, as silence) and are declared skipped to
   * the session, or counted as muted or paused like the audio around them.
   */
  onSkipped(frames: number): void {
    const now = this.#now();
    if (this.#gaps.open !== undefined && !this.#replacing && !this.#suspension.active) this.#closeGap(now);
    this.#health.flowing();
    this.#clock.frames(frames, now);
    this.#books.captured += frames;
    this.#meter.quiet(frames);
    if (this.#paused) this.#books.paused += frames;
    else if (this.#muted) this.#books.muted += frames;
    else this.#r.writer.skip(frames);
  }

  /** FeedSink, gated: an utterance edge, `lag` frames from the end of what was handed on; the session emits it (not while muted or paused). */
  onSpeech(event: 'speech.start' | 'speech.end', lag: number): void {
    if (this.#paused || this.#muted) return;
    this.#r.writer.speech(event, lag);
  }

  /** FeedSink: worklet frames [from, from + frames) were lost here in the stream. */
  onDropped(from: number, frames: number): void {
    this.#books.drop(frames);
    // The device clock ran through the loss: for the clock measures the frames were delivered.
    this.#clock.dropped(frames);
    this.#r.writer.endSegment();
    this.#emit('drop', { from, to: from + frames, sessionSample: this.#r.writer.sentSamples, cause: this.transport === 'shared' ? 'ring' : 'pool' });
  }

  /** FeedSink: handing a block on threw; the feed delivers nothing more, so the capture stops. */
  onFailed(error: unknown): void {
    this.#fail(error);
  }

  // ------------------------------------------------------------------------------------------------
  // Detection
  // ------------------------------------------------------------------------------------------------

  #watch(): void {
    const graph = this.#slot.graph;
    this.#health.watchTrack(graph.track?.muted === true);
    // A stream the app got elsewhere may be no listed device at all (a screen share's audio, a WebRTC
    // track): its track's ended is its loss; the device list is not consulted ('' = not compared).
    const deviceId = graph.origin === 'app' ? '' : graph.deviceId ?? '';
    this.#unwatch = watchDevice({ context: graph.context, deviceId, track: graph.track }, this.#r.devices, {
      ended: () => void this.#lose('track-ended'),
      muted: (muted) => {
        this.#emit('event', { type: muted ? 'track-muted' : 'track-unmuted', device: this.#slot.device(), atMs: this.#now() });
        this.#health.trackMuted(muted);
      },
      contextState: (state) => this.#onContextState(state),
      devicesChanged: (present) => {
        this.#emit('event', { type: 'devices-changed', present, atMs: this.#now() });
        if (!present) void this.#lose('device-removed');
      },
    });
  }

  #onContextState(state: string): void {
    if (this.#stopping !== undefined) return;
    const change = this.#suspension.contextChanged(state, this.#clock.lastFrameMs ?? this.#now());
    if (change.next === 'lose') {
      void this.#lose('context-closed');
    } else if (change.next === 'suspended') {
      this.#emit('event', { type: 'suspended', device: this.#slot.device(), atMs: this.#now() });
      this.#health.set('recovering', change.reason);
      // Our own context: ask it back (the app decides about its own).
      if (this.#slot.graph.ownsContext) void this.#slot.graph.context.resume().catch(() => undefined);
    } else if (change.next === 'resumed') {
      try {
        this.#openGapAt('suspended', change.lastFrameMs, this.#now() - change.sinceMs);
      } catch {
        return; // the session refused the cut: the capture has already failed and is stopping
      }
      this.#clock.restart(this.sampleRate);
      this.#health.set('starting', 'resumed after a suspension, no audio yet');
    }
  }

  #onTick(): void {
    if (this.#stopping !== undefined) return;
    const now = this.#now();
    this.#checkStarvation(now);
    // Still suspended (a resume needs a user gesture, or the system holds the device): ask again.
    if (this.#slot.graph.ownsContext && this.#suspension.askAgain()) {
      void this.#slot.graph.context.resume().catch(() => undefined);
    }
    this.#health.publish();
  }

  /**
   * Audio behind the wall clock while the graph should be delivering: starvation (a throttled page,
   * an audio thread that does not run). Not a gap: the frames come late or are dropped (overruns),
   * and drops are reported on their own.
   */
  #checkStarvation(now: number): void {
    if (this.#health.state !== 'running' || this.#clock.lastFrameMs === null) return;
    const reading = this.#clock.check(now);
    if (reading.started) {
      this.#emit('event', { type: 'starved', behindMs: Math.round(reading.behindMs), atMs: now });
      this.#health.explain(`starved: ${Math.round(reading.behindMs)} ms behind the clock`);
    } else if (reading.ended) {
      // Caught up: how long no audio came (the last frame before to the first after), once.
      if (reading.starvedMs !== undefined) this.#emit('event', { type: 'recovered', device: this.#slot.device(), cause: 'starved', afterMs: Math.round(reading.starvedMs), atMs: now });
      this.#health.explain('audio flows');
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Graph replacement: graph-replacement.ts decides, these apply (cut, install, fail)
  // ------------------------------------------------------------------------------------------------

  /** The device is gone: planLoss() says what may replace it; cut, look for it, and apply what the search found. */
  async #lose(detail: LossDetail): Promise<void> {
    if (this.#stopping !== undefined || this.#replacing) return;
    this.#replacing = true;
    const detected = this.#now();
    const lost = this.#slot.graph;
    const device = this.#slot.device();
    this.#emit('event', { type: 'device-lost', cause: 'device-lost', device, detail, atMs: detected });
    const plan = planLoss({ detail, lost, lostDeviceId: device.id, builder: this.#builder, recovery: this.#r.recovery ?? {} });
    this.#health.set('recovering', plan.reason);
    if (plan.next === 'stop') {
      this.#replacing = false;
      void this.stop().catch(() => undefined);
      return;
    }
    try {
      await this.#cut('device-lost', detected, plan.keepStream);
      const search = findReplacement(plan);
      let step = await search.next();
      for (; step.done !== true; step = await search.next()) this.#health.set('recovering', step.value);
      await this.#conclude(afterSearch(step.value, plan, this.#stopping !== undefined));
    } catch {
      // The session refused the cut (#endSegment) or the new graph's rate (#install): the capture has
      // already failed and is stopping.
    } finally {
      this.#replacing = false;
    }
  }

  /** A loss's replacement as decided once the search ended: installed, disposed (stop() came), or the capture fails. */
  async #conclude(replacement: Replacement): Promise<void> {
    if (replacement.next === 'install') this.#install(replacement.graph, replacement.generation);
    else if (replacement.next === 'dispose') await disposeGraph(replacement.graph);
    else if (replacement.next === 'fail') this.#fail(replacement.error, true);
  }

  /**
   * Ends the current graph at a cut: its feed stops (the frames it holds are handed on first), its
   * resources are released, the session's segment ends, and a gap opens at the exact position.
   */
  async #cut(cause: CaptureCause, detectedMs: number, keepStream = false): Promise<void> {
    const cutting = (async () => {
      const graph = this.#slot.graph;
      const lastFrameMs = this.#suspension.end()?.lastFrameMs ?? this.#clock.lastFrameMs ?? this.#now();
      this.#unwatch();
      this.#books.addTotals(await this.#slot.cut(this.#r.stopTimeoutMs));
      await disposeGraph(graph as CaptureGraph, keepStream);
      // The frames handed on by the stop may be later than the detection: the gap starts after them.
      this.#openGapAt(cause, this.#clock.lastFrameMs !== null && this.#clock.lastFrameMs > lastFrameMs ? this.#clock.lastFrameMs : lastFrameMs, detectedMs);
    })();
    this.#cutting = cutting;
    try {
      await cutting;
    } finally {
      if (this.#cutting === cutting) this.#cutting = undefined;
    }
  }

  /** The segment ends here; the gap closes at the next frame (its length is the clock's). */
  #openGapAt(cause: CaptureCause, fromMs: number, detectedMs: number): void {
    this.#endSegment();
    this.#gaps.begin({ cause, atSample: this.#r.writer.sentSamples, fromMs, detectedMs, device: this.#slot.device() });
  }

  /** The first frame after a gap: it is placed on the capture timeline and reported. */
  #closeGap(now: number): void {
    for (const event of this.#gaps.close(now, this.#slot.device())) this.#emit('event', event);
  }

  /**
   * A new graph takes over: the session learns its rate, the listeners move to it, audio starts. The
   * slot holds it from the first line, so stop() releases it whatever follows. A session that refuses
   * its rate fails the capture (#fail: WEB_AUDIO_CAPTURE_FAILED) and that failure is thrown: the graph
   * never starts, and the stop() under way releases it.
   */
  #install(next: CaptureGraph, generation: number): void {
    const from = this.#gaps.open?.device ?? this.#slot.device();
    this.#slot.install(next, generation);
    const to = next.context.sampleRate;
    try {
      this.#r.writer.setRate(to);
    } catch (caught) {
      this.#fail(caught, true);
      throw this.#failure;
    }
    if (from.sampleRate !== to) {
      this.#emit('event', { type: 'rate-changed', device: this.#slot.device(), fromRate: from.sampleRate, toRate: to, atMs: this.#now() });
      this.#meter = this.#levelMeter(to);
    }
    this.#clock.restart(to);
    this.#watch();
    this.#health.set('starting', 'new device opened, no audio yet');
    connectGraph(next);
  }

  #now(): number {
    return this.#clock.now();
  }

  #levelMeter(rate: number): LevelMeter {
    return new LevelMeter(rate, this.#r.levelWindowMs, (level) => {
      this.#level = level;
      this.#emit('level', level);
    });
  }

  #emit<K extends keyof CaptureEvents>(event: K, payload: Parameters<CaptureEvents[K]>[0]): void {
    (this.#emitter.emit as (event: K, payload: unknown) => boolean)(event, payload);
  }

  #setState(to: CaptureState): void {
    const from = this.#state;
    if (from === 'stopped') return;
    this.#state = to;
    this.#emit('state', { from, to });
  }

  // ------------------------------------------------------------------------------------------------
  // Stop
  // ------------------------------------------------------------------------------------------------

  async #stop(): Promise<CaptureResult> {
    this.#setState('stopping');
    this.#unwatch();
    if (this.#tick !== undefined) clearInterval(this.#tick);
    // A cut under way (a setDevice() or a loss) finishes first: the cut graph's last frames reach the
    // session and its totals the books before the result is made, and nothing reaches the session after.
    await this.#cutting?.catch(() => undefined);
    const graph = this.#slot.graph;
    let totals: FeedTotals;
    try {
      // A graph already cut (recovery gave up, or stop() came mid-recovery) holds nothing more.
      totals = !this.#slot.live
        ? { frames: 0, dropped: 0, delivered: 0, exact: true }
        : await graph.feed.stop(graph.context.state === 'closed' ? 0 : this.#r.stopTimeoutMs);
      if (this.#failure === undefined) {
        try {
          this.#r.writer.endSegment();
        } catch (caught) {
          this.#failure = captureFailure(caught);
        }
      }
    } finally {
      this.#release();
    }
    if (this.#slot.live) await closeGraphContext(graph as CaptureGraph);
    this.#books.addTotals(totals);
    const result = this.#books.result(this.stats);
    this.#result = result;
    this.#health.set(this.#failure !== undefined ? 'failed' : 'stopped', this.#failure?.message ?? 'stopped');
    this.#health.complete();
    this.#setState('stopped');
    this.#emitter.removeAllListeners();
    if (this.#failure !== undefined) throw this.#failure;
    return result;
  }

  /** mute() and pause(): a session that cannot take the tail fails the capture, as in onBlock(). */
  #endSegment(): void {
    try {
      this.#r.writer.endSpeech();
      this.#r.writer.endSegment();
    } catch (caught) {
      this.onFailed(caught);
      throw this.#failure;
    }
  }

  /**
   * The capture stops by itself: the failure said as an `event` ('failed') and reported, then stop().
   * Every way a capture fails by itself comes here; the first failure counts, and a later one (a
   * feed's, a cut's, an install's, while the first is being stopped) says and reports nothing more.
   */
  #fail(error: unknown, asIs = false): void {
    if (this.#failure !== undefined) return;
    const failure = captureFailure(error, asIs);
    this.#failure = failure;
    this.#emit('event', { type: 'failed', error: failure, atMs: this.#now() });
    // Reported whether or not the app ever calls stop(); the stop() promise carries it too.
    reportLater(failure);
    void this.stop().catch(() => undefined);
  }

  /** Everything but the context close, synchronous so that a failure half-way still releases the rest. */
  #release(): void {
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    if (this.#slot.live) releaseGraph(this.#slot.graph as CaptureGraph);
  }

  #publishState(): void {
    if (this.#stopping !== undefined) return;
    this.#setState(this.#paused ? 'paused' : this.#muted ? 'muted' : 'capturing');
  }

  #assertRunning(call: string): void {
    if (this.#stopping !== undefined) throw new WebAudioError('WEB_AUDIO_STOPPED', `${call}() after stop(): start a new capture`);
  }
}

