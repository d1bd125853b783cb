import type { DeviceEvents } from './device-watch.js';
import { disposeGraph, type CaptureGraph, type GraphInput } from './graph.js';
import type { GraphSlot } from './graph-slot.js';
import type { ReacquireRequest, RecoveryOptions } from './health.js';
import { recoveryStep } from './recovery-plan.js';
import { recoveryWait } from './recovery-wait.js';
import type { FeedSink } from './sample-feed.js';

/** What the next graph is built with: the capture's rebuild, its slot and sink, and stop()'s signal. */
export interface GraphBuilder {
  readonly rebuild: (input: GraphInput, sink: FeedSink) => Promise<CaptureGraph>;
  /** The capture's graph slot, read at each build: the next graph's generation and sink, the app's context to reuse. */
  readonly slot: GraphSlot;
  readonly sink: FeedSink;
  readonly devices: DeviceEvents | undefined;
  /** Aborted by stop(): a search ends, and a graph it opened meanwhile is disposed. */
  readonly stopped: AbortSignal;
}

/** What a search for a device after a loss works with. */
export interface DeviceSearch extends GraphBuilder {
  readonly recovery: RecoveryOptions;
  /** The lost device's id ('' when unknown) and the platform signal that lost it (for the reasons it gives). */
  readonly lostDeviceId: string;
  readonly detail: ReacquireRequest['detail'];
  /**
   * Where each attempt's stream comes from: a microphone opened again with getUserMedia (with the
   * lost graph's constraints), or the app's reacquire() (its streams released by the capture when
   * `releaseStream`).
   */
  readonly source:
    | { readonly kind: 'microphone'; readonly audio: MediaTrackConstraints | undefined }
    | { readonly kind: 'app'; readonly reacquire: NonNullable<RecoveryOptions['reacquire']>; readonly releaseStream: boolean };
}

/** A graph built to take over, with the generation its sink was made for. */
export interface NextGraph {
  readonly graph: CaptureGraph;
  readonly generation: number;
}

/** How a search ended: a graph for the capture to install, no device within the attempts, or stop(). */
export type DeviceSearchResult =
  | ({ readonly outcome: 'found' } & NextGraph)
  | { readonly outcome: 'gave-up'; readonly attempts: number }
  | { readonly outcome: 'stopped' };

/**
 * A search as the capture runs it: each value yielded is the health reason for the try about to be
 * made (the capture says it, then asks for the next); the value returned is how the search ended.
 */
export type Search<T> = AsyncGenerator<string, T, void>;

/**
 * Builds the next graph on `input` (the app's context added while it is open), with the sink of the
 * generation it will have once installed. Throws what rebuild throws; installing it is the capture's.
 */
export async function openNext(b: GraphBuilder, input: GraphInput): Promise<NextGraph> {
  const generation = b.slot.nextGeneration;
  const graph = await b.rebuild({ ...input, ...b.slot.appContext() }, b.slot.sinkFor(generation, b.sink));
  return { graph, generation };
}

/**
 * Looks for a device after a loss, step by step as recoveryStep() decides: after each step's wait,
 * the lost device by id, then the default one (or, for the app's streams, one reacquire() call).
 * Yields each try's health reason. Returns the first graph built and leaves installing it to the
 * capture, which decides what the loss means.
 */
export async function* searchDevice(s: DeviceSearch): Search<DeviceSearchResult> {
  for (let attempt = 1; ; attempt++) {
    const step = recoveryStep(attempt, s.recovery, s.lostDeviceId);
    if (step.action === 'give-up') return { outcome: 'gave-up', attempts: step.attempts };
    if (step.delayMs > 0) await recoveryWait(step.delayMs, s.devices, s.stopped);
    if (s.stopped.aborted) return { outcome: 'stopped' };
    if (s.source.kind === 'app') {
      const found = yield* askTheApp(s, s.source, attempt);
      if (found === 'retry') continue;
      return found;
    }
    const audio = s.source.audio;
    for (const deviceId of step.deviceIds) {
      yield deviceId === undefined ? `device lost (${s.detail}): reconnecting to the default device (attempt ${attempt})` : `device lost (${s.detail}): reconnecting to it (attempt ${attempt})`;
      let next: NextGraph;
      try {
        next = await openNext(s, { ...(deviceId !== undefined ? { deviceId } : {}), ...(audio !== undefined ? { audio } : {}) });
      } catch {
        continue;
      }
      return unlessStopped(s, next);
    }
  }
}

/** One attempt through the app's reacquire(): a graph on the stream it gives, its refusal, or the next attempt. */
async function* askTheApp(s: DeviceSearch, source: Extract<DeviceSearch['source'], { kind: 'app' }>, attempt: number): Search<DeviceSearchResult | 'retry'> {
  yield `stream lost (${s.detail}): asking the app for a new one (attempt ${attempt})`;
  let stream: MediaStream | null;
  try {
    stream = await source.reacquire({ attempt, detail: s.detail });
  } catch {
    return 'retry';
  }
  if (stream === null) return { outcome: 'gave-up', attempts: attempt };
  // Anything but a stream is a failed attempt: never let it reach the graph, which would open a microphone.
  if (typeof (stream as Partial<MediaStream> | undefined)?.getAudioTracks !== 'function') return 'retry';
  const release = (): void => {
    if (source.releaseStream) for (const track of stream.getTracks()) track.stop();
  };
  if (s.stopped.aborted) {
    release();
    return { outcome: 'stopped' };
  }
  let next: NextGraph;
  try {
    next = await openNext(s, { stream, releaseStream: source.releaseStream });
  } catch {
    // Not usable (no audio track, already ended): the capture owns it like the first one.
    release();
    return 'retry';
  }
  return unlessStopped(s, next);
}

/**
 * The app's stream after its context closed under it (no device question): a new graph, on a context
 * of the capture's own, for the same stream. undefined when it cannot be built; the stream is then
 * released as the cut would have released it (the cut kept it for this).
 */
export async function* sameStream(s: GraphBuilder & { readonly lost: Pick<CaptureGraph, 'stream' | 'releaseStream'> }): Search<DeviceSearchResult | undefined> {
  const { lost } = s;
  const release = (): void => {
    if (lost.releaseStream) for (const track of lost.stream.getTracks()) track.stop();
  };
  if (s.stopped.aborted) {
    release();
    return { outcome: 'stopped' };
  }
  yield 'AudioContext closed: the same stream on a new one';
  let next: NextGraph;
  try {
    next = await openNext(s, { stream: lost.stream, releaseStream: lost.releaseStream });
  } catch {
    release();
    return undefined;
  }
  return unlessStopped(s, next);
}

/** A graph built during a search: found, or disposed when stop() came meanwhile. */
async function unlessStopped(s: GraphBuilder, next: NextGraph): Promise<DeviceSearchResult> {
  if (s.stopped.aborted) {
    await disposeGraph(next.graph);
    return { outcome: 'stopped' };
  }
  return { outcome: 'found', ...next };
}
