import type { DeviceEvents } from './device-watch.js';
import { disposeGraph, type CaptureGraph, type GraphInput } from './graph.js';
import type { GraphSlot } from './graph-slot.js';
import type { HealthReport } from './health-report.js';
import type { ReacquireRequest, RecoveryOptions } from './health.js';
import { recoveryStep } from './recovery-plan.js';
import { recoveryWait } from './recovery-wait.js';
import type { FeedSink } from './sample-feed.js';

/** What a search for a device after a loss works with. */
export interface DeviceSearch {
  readonly rebuild: (input: GraphInput, sink: FeedSink) => Promise<CaptureGraph>;
  readonly recovery: RecoveryOptions;
  /** The lost device's id ('' when unknown) and the platform signal that lost it (for the reason in health). */
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
  /** The capture's graph slot: the next graph's generation and sink, the app's context to reuse. */
  readonly slot: GraphSlot;
  readonly sink: FeedSink;
  readonly health: HealthReport;
  readonly devices: DeviceEvents | undefined;
  /** Aborted by stop(): the search ends, and a graph opened meanwhile is disposed. */
  readonly stopped: AbortSignal;
}

/** How a search ended: a graph for the capture to install, no device within the attempts, or stop(). */
export type DeviceSearchResult =
  | { readonly outcome: 'found'; readonly graph: CaptureGraph; readonly generation: number }
  | { readonly outcome: 'gave-up'; readonly attempts: number }
  | { readonly outcome: 'stopped' };

/**
 * Looks for a device after a loss, step by step as recoveryStep() decides: after each step's wait,
 * the lost device by id, then the default one (or, for the app's streams, one reacquire() call).
 * Says each try in the health reason. Returns the first graph built and leaves installing it to the
 * capture, which decides what the loss means.
 */
export async function searchDevice(s: DeviceSearch): Promise<DeviceSearchResult> {
  for (let attempt = 1; ; attempt++) {
    const step = recoveryStep(attempt, s.recovery, s.lostDeviceId);
    if (step.action === 'give-up') return { outcome: 'gave-up', attempts: step.attempts };
    if (step.delayMs > 0) await recoveryWait(step.delayMs, s.devices, s.stopped);
    if (s.stopped.aborted) return { outcome: 'stopped' };
    if (s.source.kind === 'app') {
      const found = await askTheApp(s, s.source, attempt);
      if (found === 'retry') continue;
      return found;
    }
    const audio = s.source.audio;
    for (const deviceId of step.deviceIds) {
      s.health.set('recovering', deviceId === undefined ? `device lost (${s.detail}): reconnecting to the default device (attempt ${attempt})` : `device lost (${s.detail}): reconnecting to it (attempt ${attempt})`);
      const generation = s.slot.nextGeneration;
      let graph: CaptureGraph;
      try {
        graph = await s.rebuild({ ...(deviceId !== undefined ? { deviceId } : {}), ...(audio !== undefined ? { audio } : {}), ...s.slot.appContext() }, s.slot.sinkFor(generation, s.sink));
      } catch {
        continue;
      }
      if (s.stopped.aborted) {
        await disposeGraph(graph);
        return { outcome: 'stopped' };
      }
      return { outcome: 'found', graph, generation };
    }
  }
}

/** One attempt through the app's reacquire(): a graph on the stream it gives, its refusal, or the next attempt. */
async function askTheApp(s: DeviceSearch, source: Extract<DeviceSearch['source'], { kind: 'app' }>, attempt: number): Promise<DeviceSearchResult | 'retry'> {
  s.health.set('recovering', `stream lost (${s.detail}): asking the app for a new one (attempt ${attempt})`);
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
  const generation = s.slot.nextGeneration;
  let graph: CaptureGraph;
  try {
    graph = await s.rebuild({ stream, releaseStream: source.releaseStream, ...s.slot.appContext() }, s.slot.sinkFor(generation, s.sink));
  } catch {
    // Not usable (no audio track, already ended): the capture owns it like the first one.
    release();
    return 'retry';
  }
  if (s.stopped.aborted) {
    await disposeGraph(graph);
    return { outcome: 'stopped' };
  }
  return { outcome: 'found', graph, generation };
}

/**
 * The app's stream after its context closed under it (no device question): a new graph, on a context
 * of the capture's own, for the same stream. undefined when it cannot be built; the stream is then
 * released as the cut would have released it (the cut kept it for this).
 */
export async function sameStream(s: Pick<DeviceSearch, 'rebuild' | 'slot' | 'sink' | 'health' | 'stopped'> & { readonly lost: Pick<CaptureGraph, 'stream' | 'releaseStream'> }): Promise<DeviceSearchResult | undefined> {
  const { lost } = s;
  const release = (): void => {
    if (lost.releaseStream) for (const track of lost.stream.getTracks()) track.stop();
  };
  if (s.stopped.aborted) {
    release();
    return { outcome: 'stopped' };
  }
  s.health.set('recovering', 'AudioContext closed: the same stream on a new one');
  const generation = s.slot.nextGeneration;
  let graph: CaptureGraph;
  try {
    graph = await s.rebuild({ stream: lost.stream, releaseStream: lost.releaseStream, ...s.slot.appContext() }, s.slot.sinkFor(generation, s.sink));
  } catch {
    release();
    return undefined;
  }
  if (s.stopped.aborted) {
    await disposeGraph(graph);
    return { outcome: 'stopped' };
  }
  return { outcome: 'found', graph, generation };
}
