import { isSupportedRate, SUPPORTED_RATES, type ResamplerKernel } from '@soundclone/core';
import { WebAudioError } from '../errors.js';
import { PROCESSOR_NAME } from '../worklet/protocol.js';
import { Capture } from './capture.js';
import { openMicrophone } from './open-microphone.js';
import { DEFAULT_BUFFER_MS, poolSizeFor, SharedRingFeed, TransferFeed, type FeedSink, type SampleFeed } from './sample-feed.js';
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
   * audio is lost (reported in drops$ and stats.droppedFrames, never filled in).
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
  /** Each block on its way to the encoder (context rate, not muted or paused); valid only during the call. */
  readonly onSamples?: (block: Float32Array) => void;
  /** Aborting stops the capture (as stop()). */
  readonly signal?: AbortSignal;
  /** Platform object; default navigator.mediaDevices. */
  readonly mediaDevices?: Pick<MediaDevices, 'getUserMedia'>;
}

/** Where startCapture makes its own context when the device's native rate is not one the encoder takes. */
const FALLBACK_RATE = 48_000;

/** Module URLs already added to each context: a second addModule() of another URL would re-register. */
const loaded = new WeakMap<BaseAudioContext, Promise<void>>();

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
 * Call it from a user gesture (a click) when it creates the AudioContext, or the browser may start
 * the context suspended; startCapture asks it to resume either way.
 */
export async function startCapture(options: StartCaptureOptions): Promise<Capture> {
  checkOptions(options);
  if (typeof AudioWorkletNode !== 'function') {
    throw new WebAudioError('WEB_AUDIO_UNSUPPORTED', 'AudioWorklet is not available (an evergreen browser in a secure context is needed)');
  }
  const cleanups: Array<() => unknown> = [];
  const fail = async (error: unknown): Promise<never> => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
    throw error;
  };

  const ownsContext = options.context === undefined;
  let context: AudioContext;
  try {
    context = options.context ?? new AudioContext({ latencyHint: 'interactive' });
  } catch (caught) {
    throw new WebAudioError('WEB_AUDIO_UNSUPPORTED', `cannot create an AudioContext: ${message(caught)}`, { cause: caught });
  }
  let nativeRate: number | undefined;
  if (ownsContext && !isSupportedRate(context.sampleRate)) {
    // Our own context at a native rate the encoder does not take (a 192 kHz interface): make it at
    // 48 kHz instead; the browser converts the stream. An app's context is the app's choice: refused below.
    // The new one is made before any await, while the user gesture that called us still counts.
    const native = context;
    nativeRate = native.sampleRate;
    try {
      context = new AudioContext({ latencyHint: 'interactive', sampleRate: FALLBACK_RATE });
    } catch (caught) {
      await native.close().catch(() => undefined);
      throw new WebAudioError('WEB_AUDIO_UNSUPPORTED_RATE', `the device runs at ${nativeRate} Hz, which the encoder does not take, and an AudioContext at ${FALLBACK_RATE} Hz cannot be made: ${message(caught)}`, { cause: caught });
    }
    await native.close().catch(() => undefined);
  }
  if (ownsContext) cleanups.push(() => context.close());
  if (context.state === 'closed') return fail(new WebAudioError('WEB_AUDIO_CONTEXT_CLOSED', 'the AudioContext is closed'));
  if (!isSupportedRate(context.sampleRate)) {
    return fail(new WebAudioError('WEB_AUDIO_UNSUPPORTED_RATE', `the AudioContext runs at ${context.sampleRate} Hz; the encoder takes ${SUPPORTED_RATES.join(', ')} Hz (create the context with one of them)`));
  }

  let stream: MediaStream;
  const opened = options.stream === undefined;
  if (options.stream !== undefined) {
    stream = options.stream;
  } else {
    try {
      stream = await openMicrophone({
        ...(options.deviceId !== undefined ? { deviceId: options.deviceId } : {}),
        ...(options.audio !== undefined ? { audio: options.audio } : {}),
        ...(options.mediaDevices !== undefined ? { mediaDevices: options.mediaDevices } : {}),
      });
    } catch (caught) {
      return fail(caught);
    }
    cleanups.push(() => stream.getTracks().forEach((t) => t.stop()));
  }
  if (stream.getAudioTracks().length === 0) return fail(new WebAudioError('WEB_AUDIO_NO_AUDIO_TRACK', 'the MediaStream has no audio track'));

  const workletUrl = String(options.workletUrl ?? new URL('../capture-worklet.js', import.meta.url));
  try {
    await loadModule(context, workletUrl);
  } catch (caught) {
    return fail(new WebAudioError('WEB_AUDIO_WORKLET_LOAD_FAILED', `cannot load the capture worklet from ${workletUrl}: ${message(caught)}`, { cause: caught }));
  }

  let capture: Capture | undefined;
  const sink: FeedSink = {
    block: (block) => capture?.onBlock(block),
    dropped: (from, frames) => capture?.onDropped(from, frames),
    failed: (error) => capture?.onFailed(error),
  };
  let feed: SampleFeed;
  try {
    feed = pickFeed(options, context.sampleRate, sink);
  } catch (caught) {
    return fail(caught);
  }
  let encoder: SessionWriter;
  let node: AudioWorkletNode;
  let source: MediaStreamAudioSourceNode;
  try {
    encoder = new SessionWriter(context.sampleRate, options.session, options.kernel);
    node = new AudioWorkletNode(context, PROCESSOR_NAME, {
      numberOfInputs: 1, numberOfOutputs: 0, channelCount: 1, channelCountMode: 'explicit', channelInterpretation: 'speakers',
      processorOptions: feed.processorOptions,
    });
    cleanups.push(() => node.disconnect());
    feed.attach(node.port);
    cleanups.push(() => feed.dispose());
    source = context.createMediaStreamSource(stream);
    cleanups.push(() => source.disconnect());
  } catch (caught) {
    if (caught instanceof WebAudioError) return fail(caught);
    // A browser that connects a stream only to a context at the device's rate (older Firefox) refuses our 48 kHz one.
    if (nativeRate !== undefined) return fail(new WebAudioError('WEB_AUDIO_UNSUPPORTED_RATE', `the device runs at ${nativeRate} Hz, which the encoder does not take, and this browser cannot connect it to a ${FALLBACK_RATE} Hz AudioContext: ${message(caught)}`, { cause: caught }));
    return fail(new WebAudioError('WEB_AUDIO_UNSUPPORTED', `cannot build the capture graph: ${message(caught)}`, { cause: caught }));
  }
  capture = new Capture({
    context, ownsContext, stream, releaseStream: options.releaseStream ?? opened, source, node, feed, encoder,
    session: options.session, levelWindowMs: options.levelWindowMs ?? 50, stopTimeoutMs: 1000,
    onSamples: options.onSamples, signal: options.signal,
  });
  source.connect(node);
  // Without a user gesture this stays pending until one happens; the capture is usable meanwhile.
  if (context.state === 'suspended') void context.resume().catch(() => undefined);
  if (options.signal?.aborted) void capture.stop();
  return capture;
}

/** The transport startCapture uses, sized by time (exported for the Node tests, not from the package). */
export function pickFeed(options: StartCaptureOptions, sampleRate: number, sink: FeedSink): SampleFeed {
  const wanted = options.transport ?? 'auto';
  const sharedOk = typeof SharedArrayBuffer === 'function' && (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (wanted === 'shared' && !sharedOk) {
    throw new WebAudioError('WEB_AUDIO_SHARED_MEMORY_UNAVAILABLE', "transport 'shared' needs a cross-origin isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp)");
  }
  if (wanted === 'shared' || (wanted === 'auto' && sharedOk)) {
    const capacity = Math.ceil((sampleRate * (options.ringMs ?? DEFAULT_BUFFER_MS)) / 1000);
    return new SharedRingFeed(capacity, options.drainMs ?? 20, sink);
  }
  const batchFrames = options.batchFrames ?? 1024;
  return new TransferFeed(batchFrames, options.poolSize ?? poolSizeFor(sampleRate, batchFrames, options.poolMs ?? DEFAULT_BUFFER_MS), sink);
}

function loadModule(context: BaseAudioContext, url: string): Promise<void> {
  let pending = loaded.get(context);
  if (pending === undefined) {
    pending = context.audioWorklet.addModule(url);
    loaded.set(context, pending);
    pending.catch(() => loaded.delete(context));
  }
  return pending;
}

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
    ['poolSize', options.poolSize, 2, 1024], ['levelWindowMs', options.levelWindowMs, 5, 10_000],
  ];
  for (const [name, value, min, max] of ranges) {
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) problems.push(`${name} must be an integer from ${min} to ${max}`);
  }
  if (problems.length > 0) throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', problems.join('; '));
}

function message(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}
