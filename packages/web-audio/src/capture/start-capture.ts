import type { ResamplerKernel } from '@soundclone/core';
import { VOICE_GATE_DEFAULTS } from '@soundclone/core/internal';
import { WebAudioError } from '../errors.js';
import { Capture } from './capture.js';
import type { DeviceEvents } from './device-watch.js';
import { buildGraph, closeGraphContext, connectGraph, releaseGraph, type GraphSpec } from './graph.js';
import type { RecoveryOptions } from './health.js';
import type { FeedSink } from './sample-feed.js';
import { SessionWriter } from './session-writer.js';
import type { CaptureSession } from './session.js';

export interface StartCaptureOptions {
  /** Where the audio goes (see CaptureSession). */
  readonly session: CaptureSession;
  /** Any MediaStream with an audio track: microphone, tab or screen audio, a mix from a MediaStreamAudioDestinationNode. */
  readonly stream?: MediaStream;
  /** Or a microphone by id (from enumerateDevices()); neither stream nor deviceId: the default microphone. */
  readonly deviceId?: string;
  /**
   * getUserMedia audio constraints when startCapture opens the microphone. Default: echo cancellation,
   * noise suppression and automatic gain control off, because speech recognition does best on the
   * unprocessed signal; turn echoCancellation on when the page plays audio the mic may pick up.
   */
  readonly audio?: MediaTrackConstraints;
  /**
   * The app's own AudioContext, at whatever rate it runs (44.1 kHz, 48 kHz, ...; one the encoder does
   * not take is refused with WEB_AUDIO_UNSUPPORTED_RATE): never closed by stop(). Default: a new one
   * at the device's native rate, or at 48 kHz when the encoder does not take that rate (a 192 kHz
   * interface), closed by stop().
   */
  readonly context?: AudioContext;
  /**
   * URL of the worklet module (`@soundclone/web-audio/worklet`, served by the app; or a Blob URL made
   * from `@soundclone/web-audio/worklet-source`). Default: capture-worklet.js next to this package's
   * index.js, the form bundlers recognise (`new URL(..., import.meta.url)`).
   */
  readonly workletUrl?: string | URL;
  /**
   * 'shared' (SharedArrayBuffer ring; needs a cross-origin isolated page: COOP same-origin + COEP
   * require-corp), 'transfer' (batched transferable buffers; works anywhere), or 'auto' (default):
   * shared when the page is isolated.
   */
  readonly transport?: 'auto' | 'shared' | 'transfer';
  /**
   * shared: ring length in ms of audio (default 2000): how long the page's thread may stall before
   * audio is lost (reported as `drop` events and in stats.droppedFrames, never filled in).
   */
  readonly ringMs?: number;
  /** shared: how often the page drains the ring, ms (default 20). */
  readonly drainMs?: number;
  /** transfer: frames per posted batch (default 1024, about 21 ms at 48 kHz). */
  readonly batchFrames?: number;
  /** transfer: the batch pool's length in ms of audio (default 2000), the same stall allowance as ringMs. */
  readonly poolMs?: number;
  /** transfer: or the pool's size in batches, overriding poolMs. */
  readonly poolSize?: number;
  /** Level meter window in ms (default 50). */
  readonly levelWindowMs?: number;
  /**
   * Stop the stream's tracks on stop(). Default: true for a stream startCapture opened, false for a
   * stream the app passed in (it may be used elsewhere, e.g. a video call).
   */
  readonly releaseStream?: boolean;
  /** Resampler kernel (default 'auto': wasm where the page may compile it, else js). */
  readonly kernel?: ResamplerKernel;
  /** Each block on its way to the session (context rate, not muted or paused); valid only during the call. */
  readonly onSamples?: (block: Float32Array) => void;
  /** Aborting stops the capture (as stop()). */
  readonly signal?: AbortSignal;
  /**
   * Platform object; default navigator.mediaDevices. Its devicechange event and enumerateDevices()
   * are watched when it has them.
   */
  readonly mediaDevices?: Pick<MediaDevices, 'getUserMedia'> & Partial<Pick<MediaDevices, 'enumerateDevices' | 'addEventListener' | 'removeEventListener'>>;
  /**
   * What happens when the device goes away (its track ends, it leaves the device list, the context is
   * closed): by default the capture looks for a microphone it opened (or openMicrophone() did) again,
   * else opens the default one, and goes on in the same session, the gap recorded (`event` listeners, health,
   * gaps); WEB_AUDIO_DEVICE_LOST when nothing comes back. A `stream` the app got elsewhere is never
   * re-opened by getUserMedia: `reacquire` supplies its replacement, and without it its loss ends the
   * capture with WEB_AUDIO_DEVICE_LOST. `{ enabled: false }`: the capture stops cleanly instead (no
   * failure), for a stream whose end is the capture's end (tab or screen audio).
   */
  readonly recovery?: RecoveryOptions;
  /** Audio this far behind the wall clock (ms) is reported as starvation (default 1500; 100 to 60000). */
  readonly starvationMs?: number;
  /**
   * A voice gate in the worklet, off by default: `true` for its defaults (core's VOICE_GATE_DEFAULTS:
   * pre-roll 400 ms, hangover 300 ms, commit after 800 ms) or the fields to change. It runs inside
   * process() on each render quantum at the context's rate, keeping the last pre-roll of audio; only
   * what it sends reaches the page, and the rest is declared skipped time to the session
   * (docs/protocol.md "Skipped time"): the server's timeline stays capture time and bills only the
   * audio. The session emits `speech.start` / `speech.end`; its `stats.skippedSamples` and
   * `health.savedShare` say what was saved, `capture.stats.skippedFrames` the frames. Needs a
   * RealtimeSocketSession without its own `gate` option (WEB_AUDIO_INVALID_OPTION otherwise).
   */
  readonly gate?: boolean | CaptureGateOptions;
}

/** The worklet's voice gate: core's gate options for its default engine. */
export interface CaptureGateOptions {
  /** Audio sent from before an utterance's first speech frame, ms (0-10000). Default 400. */
  readonly preRollMs?: number;
  /** Audio still sent after its last speech frame, ms (0-10000). Default 300. */
  readonly hangoverMs?: number;
  /** Non-speech after the last speech frame that ends the utterance (`speech.end`), ms (at least hangoverMs). Default 800. */
  readonly commitAfterMs?: number;
}

/**
 * Starts capturing into a realtime session: builds the capture worklet on the AudioContext (the app's
 * or a new one at the native rate), connects the stream to it, and writes its audio at the context's
 * rate into the session, which resamples, encodes and frames it in its one encode path on the page's
 * thread. Resolves once audio flows into the worklet's node; the caller owns the returned Capture and
 * must stop() it.
 *
 *   MediaStream ─► MediaStreamAudioSourceNode ─► AudioWorkletNode (mono, 0 outputs)
 *        ─► SharedArrayBuffer ring (read as views) | transferred batches ─► page ─► session.write
 *
 * A lost device (its track ended, it left the device list, the context was closed) is looked for
 * again, or the default one opened, and the same session goes on (see Capture, `recovery`).
 *
 * Call it from a user gesture (a click) when it creates the AudioContext, or the browser may start
 * the context suspended; startCapture asks it to resume either way.
 */
export async function startCapture(options: StartCaptureOptions): Promise<Capture> {
  const startedAt = typeof performance === 'object' ? performance.now() : 0;
  checkOptions(options);
  if (typeof AudioWorkletNode !== 'function') {
    throw new WebAudioError('WEB_AUDIO_UNSUPPORTED', 'AudioWorklet is not available (an evergreen browser in a secure context is needed)');
  }
  const spec: GraphSpec = {
    workletUrl: String(options.workletUrl ?? new URL('../capture-worklet.js', import.meta.url)),
    transport: options.transport ?? 'auto',
    ringMs: options.ringMs, drainMs: options.drainMs, batchFrames: options.batchFrames, poolMs: options.poolMs, poolSize: options.poolSize,
    audio: options.audio, mediaDevices: options.mediaDevices,
    gate: gateSpec(options.gate),
  };
  let capture: Capture | undefined;
  const sink: FeedSink = {
    block: (block) => capture?.onBlock(block),
    dropped: (from, frames) => capture?.onDropped(from, frames),
    skipped: (frames) => capture?.onSkipped(frames),
    speech: (event, lag) => capture?.onSpeech(event, lag),
    failed: (error) => capture?.onFailed(error),
  };
  const graph = await buildGraph(spec, {
    ...(options.stream !== undefined ? { stream: options.stream } : {}),
    ...(options.releaseStream !== undefined ? { releaseStream: options.releaseStream } : {}),
    ...(options.deviceId !== undefined ? { deviceId: options.deviceId } : {}),
    ...(options.context !== undefined ? { context: options.context } : {}),
  }, sink);
  let writer: SessionWriter;
  try {
    writer = new SessionWriter(graph.context.sampleRate, options.session, options.kernel, spec.gate !== undefined);
  } catch (caught) {
    releaseGraph(graph);
    await closeGraphContext(graph);
    throw caught;
  }
  const recovery = options.recovery ?? {};
  const platformDevices = (options.mediaDevices ?? globalThis.navigator?.mediaDevices) as Partial<DeviceEvents> | undefined;
  const devices = typeof platformDevices?.addEventListener === 'function' && typeof platformDevices.enumerateDevices === 'function' ? (platformDevices as DeviceEvents) : undefined;
  capture = new Capture({
    graph, writer, session: options.session, levelWindowMs: options.levelWindowMs ?? 50, stopTimeoutMs: 1000,
    onSamples: options.onSamples, signal: options.signal, startedAt,
    rebuild: recovery.enabled === false ? undefined : (input, next) => buildGraph(spec, input, next),
    recovery, starvationMs: options.starvationMs, devices,
  });
  connectGraph(graph);
  if (options.signal?.aborted) void capture.stop();
  return capture;
}

/** The transport startCapture uses, sized by time (exported for the Node tests, not from the package). */
export { pickFeed } from './graph.js';

function checkOptions(options: StartCaptureOptions): void {
  const problems: string[] = [];
  if (typeof options !== 'object' || options === null) throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', 'startCapture() needs an options object');
  if (typeof options.session?.write !== 'function' || typeof options.session.setInputFormat !== 'function') problems.push('session is required (a RealtimeSocketSession)');
  if (options.stream !== undefined && options.deviceId !== undefined) problems.push('pass stream or deviceId, not both');
  if (options.poolMs !== undefined && options.poolSize !== undefined) problems.push('pass poolMs or poolSize, not both');
  if (options.deviceId !== undefined && (typeof options.deviceId !== 'string' || options.deviceId === '')) problems.push('deviceId must be a non-empty string');
  if (options.transport !== undefined && !['auto', 'shared', 'transfer'].includes(options.transport)) problems.push("transport must be 'auto', 'shared' or 'transfer'");
  const ranges: Array<[string, number | undefined, number, number]> = [
    ['ringMs', options.ringMs, 100, 60_000], ['poolMs', options.poolMs, 100, 60_000], ['drainMs', options.drainMs, 1, 1000], ['batchFrames', options.batchFrames, 128, 65_536],
    ['poolSize', options.poolSize, 2, 1024], ['levelWindowMs', options.levelWindowMs, 5, 10_000], ['starvationMs', options.starvationMs, 100, 60_000],
    ['recovery.attempts', options.recovery?.attempts, 1, 1000],
  ];
  for (const [name, value, min, max] of ranges) {
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) problems.push(`${name} must be an integer from ${min} to ${max}`);
  }
  const gate = options.gate;
  if (gate !== undefined && typeof gate !== 'boolean') {
    if (typeof gate !== 'object' || gate === null) problems.push('gate must be true, false or { preRollMs?, hangoverMs?, commitAfterMs? }');
    else {
      for (const key of Object.keys(gate)) if (!['preRollMs', 'hangoverMs', 'commitAfterMs'].includes(key)) problems.push(`gate.${key} is not a gate option (the worklet runs the default engine)`);
      for (const name of ['preRollMs', 'hangoverMs', 'commitAfterMs'] as const) {
        const value = gate[name];
        if (value !== undefined && !(typeof value === 'number' && value >= 0 && value <= 10_000)) problems.push(`gate.${name} must be a number of milliseconds from 0 to 10000`);
      }
      const hangover = gate.hangoverMs ?? VOICE_GATE_DEFAULTS.hangoverMs;
      const commit = gate.commitAfterMs ?? VOICE_GATE_DEFAULTS.commitAfterMs;
      if (commit < hangover) problems.push(`gate.commitAfterMs must be at least hangoverMs (${hangover})`);
    }
  }
  if (problems.length > 0) throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', problems.join('; '));
}

/** The gate option as the worklet takes it; undefined: off. */
function gateSpec(gate: StartCaptureOptions['gate']): CaptureGateOptions | undefined {
  if (gate === undefined || gate === false) return undefined;
  return gate === true ? {} : { ...gate };
}
