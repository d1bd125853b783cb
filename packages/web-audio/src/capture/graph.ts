import { isSupportedRate, SUPPORTED_RATES } from '@soundclone/core';
import { WebAudioError } from '../errors.js';
import { PROCESSOR_NAME, type GateProcessorOptions } from '../worklet/protocol.js';
import { microphoneConstraints, openMicrophone } from './open-microphone.js';
import { DEFAULT_BUFFER_MS, poolSizeFor, SharedRingFeed, TransferFeed, type FeedSink, type SampleFeed } from './sample-feed.js';

/** How a capture graph is built, the same for the first one and for each one made after a device loss. */
export interface GraphSpec {
  readonly workletUrl: string;
  readonly transport: 'auto' | 'shared' | 'transfer';
  readonly ringMs: number | undefined;
  readonly drainMs: number | undefined;
  readonly batchFrames: number | undefined;
  readonly poolMs: number | undefined;
  readonly poolSize: number | undefined;
  readonly audio: MediaTrackConstraints | undefined;
  readonly mediaDevices: Pick<MediaDevices, 'getUserMedia'> | undefined;
  /** The voice gate the worklet runs (its rate is the context's), or undefined: every frame is delivered. */
  readonly gate?: Omit<GateProcessorOptions, 'sampleRate'> | undefined;
}

/** Where this graph's audio comes from: a stream the app passed, or a microphone to open (by id or the default). */
export interface GraphInput {
  readonly stream?: MediaStream;
  readonly releaseStream?: boolean;
  readonly deviceId?: string;
  /** getUserMedia constraints for the microphone this graph opens (default: the spec's). */
  readonly audio?: MediaTrackConstraints;
  /** The app's context (kept open); none: a new one at the device's native rate, closed with the graph. */
  readonly context?: AudioContext;
}

/**
 * One MediaStream → worklet → page path: what a capture holds for one device. A device loss or a
 * device switch ends a graph and builds the next one (at whatever rate it now runs); the session and
 * the capture's books go on across them.
 */
export interface CaptureGraph {
  readonly context: AudioContext;
  readonly ownsContext: boolean;
  readonly stream: MediaStream;
  readonly releaseStream: boolean;
  readonly track: MediaStreamTrack;
  readonly source: MediaStreamAudioSourceNode;
  readonly node: AudioWorkletNode;
  readonly feed: SampleFeed;
  /** The microphone's id and label as the track reports them ('' when it does not say). */
  readonly deviceId: string;
  readonly label: string;
  /**
   * 'microphone': a stream opened with getUserMedia, by the capture or by openMicrophone(): after a
   * loss the capture may open one again (with `audio`). 'app': a stream the app got elsewhere (a
   * screen share's audio, a WebRTC track, a processed mix): only the app can say what replaces it.
   */
  readonly origin: 'microphone' | 'app';
  /** The constraints a 'microphone' graph's device was opened with (undefined: the spec's). */
  readonly audio: MediaTrackConstraints | undefined;
}

/** Where startCapture makes its own context when the device's native rate is not one the encoder takes. */
export const FALLBACK_RATE = 48_000;

/** Module URLs already added to each context: a second addModule() of another URL would re-register. */
const loaded = new WeakMap<BaseAudioContext, Promise<void>>();

/**
 * Builds a graph, not yet connected (connectGraph() starts the audio). On failure everything it made
 * is released (never the app's stream or context) and the error is a WebAudioError.
 */
export async function buildGraph(spec: GraphSpec, input: GraphInput, sink: FeedSink): Promise<CaptureGraph> {
  const cleanups: Array<() => unknown> = [];
  const fail = async (error: unknown): Promise<never> => {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
    throw error;
  };

  const ownsContext = input.context === undefined;
  let context: AudioContext;
  try {
    context = input.context ?? new AudioContext({ latencyHint: 'interactive' });
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
  const opened = input.stream === undefined;
  let audio = input.audio ?? spec.audio;
  if (input.stream !== undefined) {
    stream = input.stream;
    audio = microphoneConstraints(stream);
  } else {
    try {
      stream = await openMicrophone({
        ...(input.deviceId !== undefined ? { deviceId: input.deviceId } : {}),
        ...(audio !== undefined ? { audio } : {}),
        ...(spec.mediaDevices !== undefined ? { mediaDevices: spec.mediaDevices } : {}),
      });
    } catch (caught) {
      return fail(caught);
    }
    cleanups.push(() => stream.getTracks().forEach((t) => t.stop()));
  }
  const track = stream.getAudioTracks()[0];
  if (track === undefined) return fail(new WebAudioError('WEB_AUDIO_NO_AUDIO_TRACK', 'the MediaStream has no audio track'));
  if (track.readyState === 'ended') return fail(new WebAudioError('WEB_AUDIO_DEVICE_LOST', 'the MediaStream\'s audio track has already ended'));

  try {
    await loadModule(context, spec.workletUrl);
  } catch (caught) {
    return fail(new WebAudioError('WEB_AUDIO_WORKLET_LOAD_FAILED', `cannot load the capture worklet from ${spec.workletUrl}: ${message(caught)}`, { cause: caught }));
  }

  let feed: SampleFeed;
  try {
    feed = pickFeed(spec, context.sampleRate, sink);
  } catch (caught) {
    return fail(caught);
  }
  let node: AudioWorkletNode;
  let source: MediaStreamAudioSourceNode;
  try {
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
  const settings = typeof track.getSettings === 'function' ? track.getSettings() : {};
  return {
    context, ownsContext, stream, releaseStream: input.releaseStream ?? opened, track, source, node, feed,
    deviceId: settings.deviceId ?? '', label: track.label,
    origin: opened || audio !== undefined ? 'microphone' : 'app', audio,
  };
}

/** Starts the audio: the source into the worklet, and the context running (it may wait for a user gesture). */
export function connectGraph(graph: CaptureGraph): void {
  graph.source.connect(graph.node);
  if (graph.context.state === 'suspended') void graph.context.resume().catch(() => undefined);
}

/**
 * Everything but the context close, synchronous so that a failure half-way still releases the rest.
 * The feed must have been stopped or disposed by the caller. `keepStream`: the tracks stay live
 * whatever releaseStream says (the next graph captures the same stream).
 */
export function releaseGraph(graph: CaptureGraph, keepStream = false): void {
  graph.feed.dispose();
  try {
    graph.source.disconnect();
  } catch {
    // Already disconnected.
  }
  try {
    graph.node.disconnect();
  } catch {
    // Already disconnected.
  }
  graph.node.port.close();
  if (graph.releaseStream && !keepStream) for (const track of graph.stream.getTracks()) track.stop();
}

/** Releases a graph and closes the context it made for itself (a cut graph, or one no capture takes over). */
export async function disposeGraph(graph: CaptureGraph, keepStream = false): Promise<void> {
  releaseGraph(graph, keepStream);
  await closeGraphContext(graph);
}

/** The context the graph made for itself; the app's is left as it is. */
export async function closeGraphContext(graph: CaptureGraph): Promise<void> {
  if (graph.ownsContext && graph.context.state !== 'closed') await graph.context.close().catch(() => undefined);
}

/** The transport a graph uses, sized by time (exported for the Node tests, not from the package). */
export function pickFeed(spec: Partial<Pick<GraphSpec, 'transport' | 'ringMs' | 'drainMs' | 'batchFrames' | 'poolMs' | 'poolSize'>> & { readonly gate?: GraphSpec['gate'] | boolean }, sampleRate: number, sink: FeedSink): SampleFeed {
  const gate = spec.gate === undefined || spec.gate === false ? undefined : { ...(spec.gate === true ? {} : spec.gate), sampleRate };
  const wanted = spec.transport ?? 'auto';
  const sharedOk = typeof SharedArrayBuffer === 'function' && (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (wanted === 'shared' && !sharedOk) {
    throw new WebAudioError('WEB_AUDIO_SHARED_MEMORY_UNAVAILABLE', "transport 'shared' needs a cross-origin isolated page (Cross-Origin-Opener-Policy: same-origin, Cross-Origin-Embedder-Policy: require-corp)");
  }
  if (wanted === 'shared' || (wanted === 'auto' && sharedOk)) {
    const capacity = Math.ceil((sampleRate * (spec.ringMs ?? DEFAULT_BUFFER_MS)) / 1000);
    return new SharedRingFeed(capacity, spec.drainMs ?? 20, sink, gate);
  }
  const batchFrames = spec.batchFrames ?? 1024;
  return new TransferFeed(batchFrames, spec.poolSize ?? poolSizeFor(sampleRate, batchFrames, spec.poolMs ?? DEFAULT_BUFFER_MS), sink, gate);
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

function message(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}
