import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import { sessionStreams, type SessionStreams } from '@soundclone/core/rx';
import { WebAudioError } from '../errors.js';
import type { CaptureMode } from '../worklet/protocol.js';
import { LevelMeter, SILENT_LEVEL, type AudioLevel } from './level-meter.js';
import type { FeedTotals, SampleFeed } from './sample-feed.js';
import { SessionWriter } from './session-writer.js';
import type { CaptureSession } from './session.js';

export type CaptureState = 'capturing' | 'muted' | 'paused' | 'stopping' | 'stopped';

/**
 * Where every captured frame went. The books always balance:
 *   capturedFrames = encodedFrames + mutedFrames + pausedFrames (+ frames delivered after stop began while paused/muted)
 *   worklet frames = capturedFrames + droppedFrames (final after stop(): `exact` says the worklet confirmed it)
 * and the session's capturedSamples (what pause/finish report to the server) is `sentSamples`.
 */
export interface CaptureStats {
  readonly transport: CaptureMode;
  /** The AudioContext's rate: what the worklet captures at. */
  readonly sampleRate: number;
  /** The session's resampler kernel: 'wasm', or 'js' under a CSP without 'wasm-unsafe-eval'. */
  readonly kernel: 'js' | 'wasm';
  /** Frames (context rate) the page received from the worklet. */
  readonly capturedFrames: number;
  /**
   * Frames the worklet could not deliver (the page stalled longer than the ring or pool holds: 2 s by
   * default). Live: each loss counts as soon as the page learns of it (when frames flow again, see
   * drops$); after stop(), the worklet's own total.
   */
  readonly droppedFrames: number;
  /** Frames handed to the session's write() (it resamples them at the context's rate), taken or refused. */
  readonly encodedFrames: number;
  /** Frames received while muted: measured by the level meter, never sent. */
  readonly mutedFrames: number;
  /** Frames received while paused: never sent. */
  readonly pausedFrames: number;
  /** 16 kHz samples the session made of the frames it took: its capturedSamples, if this capture is its only writer. */
  readonly sentSamples: number;
  /** Of encodedFrames, those the session refused because it was not taking audio (finishing, ended). */
  readonly refusedFrames: number;
}

/**
 * Audio lost before it reached the page: the worklet had nowhere to put it because the page's thread
 * was stalled longer than the ring (shared) or the batch pool (transfer) holds. Nothing is put in its
 * place: the audio after it follows the audio before it in the session, as with mute. The session
 * itself lost nothing (its capturedSamples counts what it was given), so this is not a session `gap`.
 */
export interface CaptureDrop {
  /** First lost frame, in frames at the context rate since the capture started (the worklet's count). */
  readonly from: number;
  /** End of the lost frames (exclusive). */
  readonly to: number;
  /**
   * Where the cut sits in the session's stream, in 16 kHz samples: stats.sentSamples at the cut (the
   * session's capturedSamples when this capture is its only writer). The session's resampler segment
   * ends at the cut (markDiscontinuity), as at mute, so the audio before it is complete and the audio
   * after starts afresh.
   */
  readonly sessionSample: number;
  /** 'pool': every transfer batch was with the page; 'ring': the shared ring was full. */
  readonly cause: 'pool' | 'ring';
}

/** After stop(): the stats plus the worklet's own totals. */
export interface CaptureResult extends CaptureStats {
  readonly worklet: FeedTotals;
}

/** The resources a capture holds, released by stop(); built by startCapture(). */
export interface CaptureResources {
  readonly context: AudioContext;
  readonly ownsContext: boolean;
  readonly stream: MediaStream;
  readonly releaseStream: boolean;
  readonly source: MediaStreamAudioSourceNode;
  readonly node: AudioWorkletNode;
  readonly feed: SampleFeed;
  readonly encoder: SessionWriter;
  readonly session: CaptureSession;
  readonly levelWindowMs: number;
  readonly stopTimeoutMs: number;
  readonly onSamples: ((block: Float32Array) => void) | undefined;
  readonly signal: AbortSignal | undefined;
}

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
 * Both end the encoder's segment first (the resampler tail goes out), so the audio before the cut is
 * complete.
 */
export class Capture {
  readonly context: AudioContext;
  readonly stream: MediaStream;
  readonly transport: CaptureMode;
  readonly sampleRate: number;
  readonly session: CaptureSession;

  /** Level of the input, about 20 times a second, muted or not. */
  readonly level$: Observable<AudioLevel>;
  readonly state$: Observable<CaptureState>;
  /** The session's streams (`sessionStreams` of @soundclone/core/rx), so a caption UI needs only the capture. */
  readonly partials$: SessionStreams['partials$'];
  readonly lines$: SessionStreams['lines$'];
  /** Supplements of lines already emitted: entities, alignment, revision, language. */
  readonly lineUpdates$: SessionStreams['lineUpdates$'];
  /** The session's connection state (connecting, streaming, reconnecting, ...). */
  readonly connection$: SessionStreams['state$'];
  /** Each stretch of audio lost before the page (a stalled page), once, in stream order. Rare: none in a healthy page. */
  readonly drops$: Observable<CaptureDrop>;

  readonly #r: CaptureResources;
  readonly #meter: LevelMeter;
  readonly #level = new BehaviorSubject<AudioLevel>(SILENT_LEVEL);
  readonly #state = new BehaviorSubject<CaptureState>('capturing');
  readonly #drops = new Subject<CaptureDrop>();
  readonly #cleanups: Array<() => void> = [];
  #muted = false;
  #paused = false;
  #captured = 0;
  #mutedFrames = 0;
  #pausedFrames = 0;
  #droppedFrames = 0;
  #failure: WebAudioError | undefined;
  #stopping: Promise<CaptureResult> | undefined;

  /** @hidden Built by startCapture(), which acquires the resources and hands them over. */
  constructor(resources: CaptureResources) {
    this.#r = resources;
    this.context = resources.context;
    this.stream = resources.stream;
    this.transport = resources.feed.mode;
    this.sampleRate = resources.context.sampleRate;
    this.session = resources.session;
    this.level$ = this.#level.asObservable();
    this.state$ = this.#state.asObservable();
    const streams = sessionStreams(resources.session);
    this.partials$ = streams.partials$;
    this.lines$ = streams.lines$;
    this.lineUpdates$ = streams.lineUpdates$;
    this.connection$ = streams.state$;
    this.drops$ = this.#drops.asObservable();
    this.#meter = new LevelMeter(this.sampleRate, resources.levelWindowMs, (level) => this.#level.next(level));

    // A track that ends (device unplugged, tab sharing stopped) ends the capture cleanly.
    const onEnded = (): void => void this.stop();
    for (const track of resources.stream.getAudioTracks()) {
      track.addEventListener('ended', onEnded);
      this.#cleanups.push(() => track.removeEventListener('ended', onEnded));
    }
    const signal = resources.signal;
    if (signal !== undefined) {
      signal.addEventListener('abort', onEnded, { once: true });
      this.#cleanups.push(() => signal.removeEventListener('abort', onEnded));
    }
  }

  get state(): CaptureState {
    return this.#state.value;
  }

  get level(): AudioLevel {
    return this.#level.value;
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

  get stats(): CaptureStats {
    const encoder = this.#r.encoder;
    return {
      transport: this.transport,
      sampleRate: this.sampleRate,
      kernel: encoder.kernel,
      capturedFrames: this.#captured,
      droppedFrames: this.#droppedFrames,
      encodedFrames: encoder.framesIn,
      mutedFrames: this.#mutedFrames,
      pausedFrames: this.#pausedFrames,
      sentSamples: encoder.sentSamples,
      refusedFrames: encoder.refusedFrames,
    };
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
   * Stops sending, ends the encoder segment, and pauses the session (the server commits the open
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
   * Stops capturing: the worklet stops between two quanta and everything it captured before that is
   * encoded and handed to the session (exactly: see CaptureResult.worklet); then the nodes are
   * disconnected, listeners removed, tracks stopped (those startCapture opened, or all with
   * releaseStream), and an AudioContext startCapture created is closed. The session is left open:
   * call session.finish() to end it. Repeated calls return the same promise.
   *
   * A capture whose audio cannot be handed on (the session's write() threw: a session that is also
   * written with writePcm16(), or a custom CaptureSession failing) stops by itself, releasing everything as
   * above: state$ goes to 'stopped', the error (WEB_AUDIO_CAPTURE_FAILED, the cause attached) is
   * reported with reportError() (the page's error event, as a listener's exception) and is `failure`,
   * and stop() rejects with it. Audio from the failure on went nowhere (not delivered, not encoded).
   */
  stop(): Promise<CaptureResult> {
    // Set before #stop() runs: a state$ subscriber that calls stop() on 'stopping' gets this same promise.
    this.#stopping ??= Promise.resolve().then(() => this.#stop());
    return this.#stopping;
  }

  /** FeedSink: one block at the context rate, valid only during the call. */
  onBlock(block: Float32Array): void {
    this.#captured += block.length;
    this.#meter.add(block);
    if (this.#paused) {
      this.#pausedFrames += block.length;
      return;
    }
    if (this.#muted) {
      this.#mutedFrames += block.length;
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
    this.#r.encoder.push(block);
  }

  /** FeedSink: worklet frames [from, from + frames) were lost here in the stream. */
  onDropped(from: number, frames: number): void {
    this.#droppedFrames += frames;
    this.#r.encoder.endSegment();
    this.#drops.next({ from, to: from + frames, sessionSample: this.#r.encoder.sentSamples, cause: this.transport === 'shared' ? 'ring' : 'pool' });
  }

  /** FeedSink: handing a block on threw; the feed delivers nothing more, so the capture stops. */
  onFailed(error: unknown): void {
    if (this.#failure !== undefined) return;
    this.#setFailure(error);
    // Reported whether or not the app ever calls stop(); the stop() promise carries it too.
    reportLater(this.#failure);
    void this.stop().catch(() => undefined);
  }

  async #stop(): Promise<CaptureResult> {
    const r = this.#r;
    this.#state.next('stopping');
    let worklet: FeedTotals;
    try {
      worklet = await r.feed.stop(r.stopTimeoutMs);
      if (this.#failure === undefined) {
        try {
          r.encoder.endSegment();
        } catch (caught) {
          this.#setFailure(caught);
        }
      }
    } finally {
      this.#release();
    }
    if (r.ownsContext && r.context.state !== 'closed') await r.context.close().catch(() => undefined);
    const result: CaptureResult = { ...this.stats, droppedFrames: worklet.dropped, worklet };
    this.#state.next('stopped');
    this.#state.complete();
    this.#level.complete();
    this.#drops.complete();
    if (this.#failure !== undefined) throw this.#failure;
    return result;
  }

  /** mute() and pause(): a session that cannot take the tail fails the capture, as in onBlock(). */
  #endSegment(): void {
    try {
      this.#r.encoder.endSegment();
    } catch (caught) {
      this.onFailed(caught);
      throw this.#failure;
    }
  }

  #setFailure(error: unknown): void {
    if (this.#failure !== undefined) return;
    const detail = error instanceof Error ? error.message : String(error);
    this.#failure = new WebAudioError('WEB_AUDIO_CAPTURE_FAILED', `captured audio could not be handed to the session (${detail}); the capture stopped`, { cause: error });
  }

  /** Everything but the context close, synchronous so that a failure half-way still releases the rest. */
  #release(): void {
    const r = this.#r;
    r.feed.dispose();
    for (const cleanup of this.#cleanups.splice(0)) cleanup();
    try {
      r.source.disconnect();
    } catch {
      // Already disconnected.
    }
    try {
      r.node.disconnect();
    } catch {
      // Already disconnected.
    }
    r.node.port.close();
    if (r.releaseStream) for (const track of r.stream.getTracks()) track.stop();
  }

  #publishState(): void {
    if (this.#stopping !== undefined) return;
    this.#state.next(this.#paused ? 'paused' : this.#muted ? 'muted' : 'capturing');
  }

  #assertRunning(call: string): void {
    if (this.#stopping !== undefined) throw new WebAudioError('WEB_AUDIO_STOPPED', `${call}() after stop(): start a new capture`);
  }
}

/** An error no caller waits for (the app's callback threw, the capture failed): reported as the browser reports a listener's exception. */
function reportLater(error: unknown): void {
  const report = (globalThis as { reportError?: (error: unknown) => void }).reportError;
  if (typeof report === 'function') report(error);
  else setTimeout(() => {
    throw error;
  });
}
