import type { Observable } from 'rxjs';
import type { CaptureCause, CaptureDevice, CaptureEvent, CaptureGap, CaptureHealth } from '@soundclone/core';
import { MicrophoneError } from '../errors.js';
import type { AudioBlock, AudioFormat } from '../sources/audio-source.js';
import { selectDevice, type MicrophoneBackendName, type MicrophoneDevice } from './devices.js';
import { HealthTracker } from './health-tracker.js';

/** One capture on one device, as a backend opens it: a live source that ends when the device goes. */
export interface OpenedCapture extends AsyncIterable<AudioBlock> {
  readonly format: AudioFormat;
  /** The device's name: what opening it again takes. */
  readonly label: string;
  readonly deliveredFrames: number;
  readonly droppedFrames: number;
  stop(): Promise<void>;
}

/** Opens `device` (undefined: the system default). Throws MicrophoneError when it cannot. */
export type CaptureOpener = (device: string | number | undefined, onOverflow: (frames: number) => void) => Promise<OpenedCapture>;

/** The backend's devices now: setDevice() checks its argument against them before moving. */
export type DeviceLister = () => Promise<MicrophoneDevice[]>;

/** What the audio server says about a device: whether it is there, and suspended. */
export type DeviceProbe = (device: string) => Promise<{ present: boolean; suspended: boolean; sampleRate?: number } | null>;

export interface RecoveryOptions {
  /** Re-acquire a lost device (default true). false: a loss ends the capture with MIC_DEVICE_LOST. */
  readonly enabled?: boolean;
  /** Attempts to open a device after a loss before giving up with MIC_DEVICE_LOST. Default 10. */
  readonly attempts?: number;
  /** Wait between attempts. Default 500 ms. */
  readonly retryDelayMs?: number;
  /** Behind the clock by more than this counts as starved (or suspended). Default 1000 ms. */
  readonly starvationMs?: number;
  /** How often the audio server is asked whether the device is still there, and the health timer. Default 250 ms. */
  readonly pollMs?: number;
  /**
   * A starved capture (not a suspended one) silent this long is treated as lost: it is stopped and
   * re-acquired (a hung process or library never says it failed). Default 5000 ms.
   */
  readonly lostAfterMs?: number;
}

/** A break in the audio, between two blocks: the session marks a discontinuity and takes the new format. */
export interface CaptureBreak {
  readonly kind: 'break';
  readonly gap: CaptureGap;
  readonly format: AudioFormat;
}

export type CaptureItem = { readonly kind: 'audio'; readonly block: AudioBlock } | CaptureBreak;

/**
 * A microphone that outlives its device. The backend's capture runs underneath; when it ends without
 * being asked to (the process or library failed, the audio server's source went away) or is starved
 * (no audio while the clock runs: a suspended source, a stalled capture), this records a gap, finds a
 * device again (the same one when it is back, else the default, at whatever rate it now runs) and goes
 * on. Loss is never hidden and never filled: the gap carries its cause and place (CaptureGap), and
 * items() puts a break where it falls so the session marks a discontinuity there.
 *
 * Who decides: #run() alone moves between capturing, recovering, stopped and failed. The watcher and
 * setDevice() only ask, by setting #switchCause and stopping the current capture.
 *
 *   open ──► running ──(device gone / process failed / switch)──► recovering ──► running
 *                │  ▲                                                   │
 *                └──┴─(starved / suspended: audio back → gap)           └─(no device after N tries)──► failed
 */
export class ResilientMicrophone implements AsyncIterable<AudioBlock> {
  readonly backend: MicrophoneBackendName;
  readonly live = true;
  readonly #open: CaptureOpener;
  readonly #probe: DeviceProbe | undefined;
  readonly #list: DeviceLister | undefined;
  readonly #health: HealthTracker;
  readonly #recovery: Required<RecoveryOptions>;
  readonly #now: () => number;
  #capture: OpenedCapture;
  /** The device the user wants: the one opened first, or setDevice()'s. */
  #preferred: string | number | undefined;
  #delivered = 0;
  #droppedBefore = 0;
  #stopAsked = false;
  #stopped: Promise<void> | undefined;
  #switchCause: CaptureCause | undefined;
  #switchTo: string | number | undefined;
  #episode: { cause: CaptureCause; fromMs: number } | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #probing = false;
  /** Between a loss and the next device: the watcher must not ask for another switch then. */
  #reacquiring = false;
  #suspended = false;
  #iterating = false;
  #done: Promise<void>;
  #resolveDone!: () => void;
  #switched: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  /** The rate and channels each device had when last used: one back at another is a rate change. */
  readonly #lastFormat = new Map<string, AudioFormat>();

  private constructor(backend: MicrophoneBackendName, capture: OpenedCapture, wanted: string | number | undefined, options: {
    open: CaptureOpener; probe?: DeviceProbe; list?: DeviceLister; recovery?: RecoveryOptions; now?: () => number; health: HealthTracker;
  }) {
    this.#list = options.list;
    this.backend = backend;
    this.#open = options.open;
    this.#probe = options.probe;
    this.#now = options.now ?? (() => performance.now());
    this.#health = options.health;
    this.#recovery = {
      enabled: options.recovery?.enabled ?? true,
      attempts: options.recovery?.attempts ?? 10,
      retryDelayMs: options.recovery?.retryDelayMs ?? 500,
      starvationMs: options.recovery?.starvationMs ?? 1000,
      pollMs: options.recovery?.pollMs ?? 250,
      lostAfterMs: options.recovery?.lostAfterMs ?? 5000,
    };
    this.#capture = capture;
    this.#preferred = wanted ?? capture.label;
    this.#done = new Promise((resolve) => (this.#resolveDone = resolve));
    this.#health.started(deviceOf(capture));
    this.#timer = setInterval(() => void this.#watch(), this.#recovery.pollMs);
    this.#timer.unref?.();
  }

  /** Opens the first device (errors as the backend throws them) and returns the capture around it. */
  static async open(backend: MicrophoneBackendName, device: string | number | undefined, options: {
    open: CaptureOpener; probe?: DeviceProbe; list?: DeviceLister; recovery?: RecoveryOptions; now?: () => number;
  }): Promise<ResilientMicrophone> {
    const health = new HealthTracker({ now: options.now ?? (() => performance.now()), starvationMs: options.recovery?.starvationMs ?? 1000 });
    let mic: ResilientMicrophone | undefined;
    const capture = await options.open(device, (frames) => (mic === undefined ? undefined : health.overflow(frames)));
    mic = new ResilientMicrophone(backend, capture, device, { ...options, health });
    return mic;
  }

  get format(): AudioFormat {
    return this.#capture.format;
  }

  get label(): string {
    return this.#capture.label;
  }

  /** Frames handed out, over every device: the session's input, exact. */
  get deliveredFrames(): number {
    return this.#delivered;
  }

  get droppedFrames(): number {
    return this.#droppedBefore + this.#capture.droppedFrames;
  }

  /** The health now. */
  get health(): CaptureHealth {
    return this.#health.snapshot();
  }

  /** Health snapshots: on every change and on the poll timer while capturing; completes when the capture ends. */
  get health$(): Observable<CaptureHealth> {
    return this.#health.health$;
  }

  /** Device lost, changed, rate changed, suspended, starved, recovered, gap, failed (CaptureEvent). */
  get events$(): Observable<CaptureEvent> {
    return this.#health.events$;
  }

  /**
   * Moves the capture to another device by the same path as a recovery: a gap (cause
   * device-changed) for the moment between the two, and a break in the audio. Resolves once audio
   * comes from the new device; rejects with MIC_DEVICE_NOT_FOUND (nothing moved) when the backend
   * does not list it, or with the recovery's terminal error. A stop() before the new device delivered
   * rejects it with MIC_CAPTURE_FAILED (no device was switched to; stop() ends whatever was opened).
   */
  async setDevice(device: string | number): Promise<void> {
    if (this.#ended()) throw new MicrophoneError('MIC_CAPTURE_FAILED', 'setDevice() on a stopped capture', { backend: this.backend });
    if (this.#list !== undefined) {
      const found = selectDevice(await this.#list(), device, this.backend);
      if (found !== undefined) device = found.name;
    }
    // stop() may have come while the devices were listed: nothing moves then.
    if (this.#ended()) throw stoppedBeforeSwitch(this.backend);
    this.#preferred = device;
    const done = new Promise<void>((resolve, reject) => this.#switched.push({ resolve, reject }));
    this.#requestSwitch('device-changed', device);
    return done;
  }

  /** Stops capturing; iteration ends after the blocks already captured. Safe to call more than once. */
  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stopAsked = true;
      clearInterval(this.#timer);
      // A switch still waiting for its device never completes now: its caller learns so at once,
      // while #run() stops a device that opens after this (stop() waits for that below).
      for (const waiter of this.#switched.splice(0)) waiter.reject(stoppedBeforeSwitch(this.backend));
      await this.#capture.stop();
      if (!this.#iterating) this.#finish('stopped', 'stopped');
      await this.#done;
    })();
    return this.#stopped;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<AudioBlock> {
    for await (const item of this.items()) if (item.kind === 'audio') yield item.block;
  }

  /** Blocks, with a break wherever the audio broke: what a session writer needs (see pumpToSession). */
  async *items(): AsyncGenerator<CaptureItem> {
    if (this.#iterating) throw new MicrophoneError('MIC_CAPTURE_FAILED', 'a microphone is read by one reader at a time', { backend: this.backend });
    this.#iterating = true;
    this.#health.reading();
    try {
      yield* this.#run();
    } finally {
      clearInterval(this.#timer);
      if (this.#health.state !== 'failed') this.#finish('stopped', this.#stopAsked ? 'stopped' : 'reader left');
    }
  }

  async *#run(): AsyncGenerator<CaptureItem> {
    for (;;) {
      const capture = this.#capture;
      let failure: unknown;
      try {
        for await (const block of capture) {
          if (this.#episode !== undefined) yield this.#endEpisode();
          this.#health.block(block);
          this.#delivered += block.length / capture.format.channels;
          yield { kind: 'audio', block };
        }
      } catch (caught) {
        failure = caught;
      }
      if (this.#stopAsked) return;
      // The capture ended without being asked: the device went, the process failed, or a switch.
      const cause: CaptureCause = this.#switchCause ?? (failure === undefined ? 'device-lost' : causeOf(failure));
      const wanted = this.#switchTo;
      this.#switchCause = undefined;
      this.#switchTo = undefined;
      const fromMs = this.#episode?.fromMs ?? this.#health.lastAudioMs;
      this.#episode = undefined;
      const before = deviceOf(capture);
      this.#droppedBefore += capture.droppedFrames;
      const detail = failure instanceof Error ? failure.message : cause;
      if (cause !== 'device-changed') this.#health.emit({ type: 'device-lost', cause, device: before, detail, atMs: this.#health.nowMs });
      if (!this.#recovery.enabled) {
        this.#fail(new MicrophoneError('MIC_DEVICE_LOST', `${this.backend}: the microphone ${before.label} was lost (${detail}) and recovery is off`, { backend: this.backend, cause: failure }));
      }
      this.#health.setState('recovering', cause === 'device-changed' ? `switching to ${String(wanted ?? this.#preferred)}` : `${before.label} lost — reconnecting`);
      this.#reacquiring = true;
      let next: OpenedCapture | null;
      try {
        next = await this.#reacquire(wanted, failure);
      } finally {
        this.#reacquiring = false;
      }
      if (next === null) return; // stopped while looking
      if (this.#stopAsked) {
        await next.stop();
        return;
      }
      this.#capture = next;
      const after = deviceOf(next);
      this.#lastFormat.set(before.id, capture.format);
      const sameDevice = after.id === before.id;
      // A device back at another rate or channel count than it last had (before this loss or an earlier one).
      const known = this.#lastFormat.get(after.id);
      const rateChanged = known !== undefined && (known.sampleRate !== after.sampleRate || known.channels !== after.channels);
      const finalCause: CaptureCause = rateChanged ? 'rate-changed' : !sameDevice ? 'device-changed' : cause;
      const toMs = this.#health.nowMs;
      if (!sameDevice) this.#health.emit({ type: 'device-changed', from: before, to: after, atMs: toMs });
      if (rateChanged) this.#health.emit({ type: 'rate-changed', device: after, fromRate: known.sampleRate, toRate: after.sampleRate, atMs: toMs });
      const gap = this.#health.breakHere(finalCause, fromMs, toMs, toMs - fromMs);
      this.#health.started(after);
      this.#health.recovered();
      this.#health.emit({ type: 'recovered', device: after, cause: finalCause, afterMs: toMs - fromMs, atMs: toMs });
      for (const waiter of this.#switched.splice(0)) waiter.resolve();
      yield { kind: 'break', gap, format: next.format };
    }
  }

  /** The same device when it is back (or the one asked for), else the default; bounded tries. null: stop() was called meanwhile. */
  async #reacquire(wanted: string | number | undefined, failure: unknown): Promise<OpenedCapture | null> {
    let last: unknown = failure;
    for (let attempt = 0; attempt < this.#recovery.attempts && !this.#stopAsked; attempt++) {
      if (attempt > 0) await sleep(this.#recovery.retryDelayMs);
      const target = wanted ?? this.#preferred;
      const onOverflow = (frames: number): void => this.#health.overflow(frames);
      try {
        return await this.#open(target, onOverflow);
      } catch (caught) {
        last = caught;
      }
      if (wanted === undefined) {
        try {
          return await this.#open(undefined, onOverflow);
        } catch (caught) {
          last = caught;
        }
      }
    }
    if (this.#stopAsked) return null;
    const error = new MicrophoneError('MIC_DEVICE_LOST', `${this.backend}: no microphone came back after ${this.#recovery.attempts} attempts (${last instanceof Error ? last.message : String(last)})`, { backend: this.backend, cause: last });
    for (const waiter of this.#switched.splice(0)) waiter.reject(error);
    this.#fail(error);
  }

  /** The timer: health updates, starvation, and the audio server's view of the device. */
  async #watch(): Promise<void> {
    if (this.#stopAsked) return;
    const starving = this.#health.checkStarvation();
    if (starving?.started === true && this.#episode === undefined) {
      const cause: CaptureCause = this.#suspended ? 'suspended' : 'starved';
      this.#episode = { cause, fromMs: this.#health.lastAudioMs };
      if (cause === 'suspended') this.#health.emit({ type: 'suspended', device: this.#health.device, atMs: this.#health.nowMs });
      else this.#health.emit({ type: 'starved', behindMs: starving.behindMs, atMs: this.#health.nowMs });
      this.#health.setState('recovering', cause === 'suspended' ? 'device suspended' : 'no audio');
    } else {
      this.#health.tick();
    }
    const episode = this.#episode;
    if (episode?.cause === 'starved' && this.#health.nowMs - episode.fromMs > this.#recovery.lostAfterMs) {
      this.#requestSwitch('device-lost', undefined);
    }
    if (this.#probe === undefined || this.#probing || this.#reacquiring || this.#health.state === 'failed') return;
    this.#probing = true;
    try {
      const device = this.#capture.label;
      const seen = await this.#probe(device);
      if (seen === null || this.#stopAsked || device !== this.#capture.label) return;
      this.#suspended = seen.suspended;
      if (this.#episode !== undefined && seen.suspended && this.#episode.cause === 'starved') this.#episode = { ...this.#episode, cause: 'suspended' };
      if (!seen.present) {
        // The audio server moves a stream whose source went away to its fallback: audio would go on
        // from another device without a word. Stop it and recover by the one path.
        this.#requestSwitch('device-lost', undefined);
        return;
      }
      const preferred = this.#preferred;
      if (typeof preferred === 'string' && preferred !== device) {
        const back = await this.#probe(preferred);
        if (back?.present === true && !this.#stopAsked) this.#requestSwitch('device-changed', preferred);
      }
    } finally {
      this.#probing = false;
    }
  }

  #requestSwitch(cause: CaptureCause, to: string | number | undefined): void {
    // One switch at a time; during a recovery the next device is being chosen already (setDevice()'s
    // choice is in #preferred, which that recovery reads).
    if (this.#switchCause !== undefined || this.#reacquiring) return;
    this.#switchCause = cause;
    this.#switchTo = to;
    void this.#capture.stop();
  }

  /** Audio is back after a starved or suspended stretch: the time it was away is a gap. */
  #endEpisode(): CaptureBreak {
    const episode = this.#episode!;
    this.#episode = undefined;
    const toMs = this.#health.nowMs;
    const missingMs = this.#health.behindMs();
    const gap = this.#health.breakHere(episode.cause, episode.fromMs, toMs, missingMs);
    const device = this.#health.device!;
    this.#health.started(device);
    this.#health.recovered();
    this.#health.emit({ type: 'recovered', device, cause: episode.cause, afterMs: toMs - episode.fromMs, atMs: toMs });
    return { kind: 'break', gap, format: this.#capture.format };
  }

  /** stop() was called, or the capture failed: no switch can complete. */
  #ended(): boolean {
    return this.#stopAsked || this.#health.state === 'failed';
  }

  #fail(error: MicrophoneError): never {
    // A switch waiting for its device (recovery off, or none came back) ends with the capture.
    for (const waiter of this.#switched.splice(0)) waiter.reject(error);
    this.#health.emit({ type: 'failed', error, atMs: this.#health.nowMs });
    this.#finish('failed', error.message);
    throw error;
  }

  #finish(state: 'stopped' | 'failed', reason: string): void {
    if (this.#health.state === 'stopped' || this.#health.state === 'failed') return;
    clearInterval(this.#timer);
    this.#health.setState(state, reason);
    this.#health.complete();
    this.#resolveDone();
  }
}

function stoppedBeforeSwitch(backend: string): MicrophoneError {
  return new MicrophoneError('MIC_CAPTURE_FAILED', 'setDevice() did not complete: stop() was called before the new device delivered audio; the capture stopped', { backend });
}

function deviceOf(capture: OpenedCapture): CaptureDevice {
  return { id: capture.label, label: capture.label, sampleRate: capture.format.sampleRate, channels: capture.format.channels };
}

function causeOf(failure: unknown): CaptureCause {
  const code = (failure as { code?: unknown } | null)?.code;
  return code === 'MIC_NO_DEVICE' || code === 'MIC_DEVICE_NOT_FOUND' ? 'device-lost' : 'capture-failed';
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
