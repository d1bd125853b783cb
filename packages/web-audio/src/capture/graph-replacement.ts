import { WebAudioError } from '../errors.js';
import { deviceLostFailure, stoppedBeforeSwitch, streamLostFailure } from './capture-failure.js';
import type { CaptureGraphParts } from './capture-resources.js';
import { sameStream, searchDevice, type DeviceSearch, type DeviceSearchResult, type GraphBuilder, type NextGraph, type Search } from './device-recovery.js';
import type { CaptureGraph, GraphInput } from './graph.js';
import type { ReacquireRequest, RecoveryOptions } from './health.js';

/**
 * Graph replacement: what moves a capture from one graph to the next in the same session, after a
 * loss or for setDevice(). Each function decides from the values it is handed and returns the
 * decision (the next step, what to tear down, what to install); the graph search runs through
 * device-recovery.ts and hands back what it built. The capture (capture.ts) applies every decision:
 * it cuts and installs graphs, reports, fails and stops, and owns every graph, listener and timer.
 *
 *   loss ── planLoss() ──► stop     no recovery: the capture stops as stop() would
 *                     └──► replace  the capture cuts (keepStream: the app's live stream outlives the cut)
 *                            │ findReplacement(): the same stream on a new context, else searchDevice(),
 *                            │ yielding each try's health reason
 *                            ▼
 *                          afterSearch() ──► install | dispose (stop() came) | fail | none (stop() ended it)
 *
 *   setDevice(id) ── startSwitch() ──► refused at once
 *                 └──► the new device opened first (openNext), while the old one captures
 *                        switchOverruled() after the open and after the cut: go on, or dispose it and reject
 *
 * A suspended context is not replaced: the same graph goes on, cut where it stopped (suspension.ts).
 */

/** Which platform signal lost the graph. */
export type LossDetail = ReacquireRequest['detail'];

/** What a loss is decided from, read when it is detected. */
export interface LossFacts {
  readonly detail: LossDetail;
  /** The graph capturing when the loss came. */
  readonly lost: LostGraph;
  /** Its device's id ('' when unknown). */
  readonly lostDeviceId: string;
  /** What the next graph is built with; undefined: the capture builds none (startCapture with recovery.enabled false). */
  readonly builder: GraphBuilder | undefined;
  readonly recovery: RecoveryOptions;
}

/** What a replacement needs of the lost graph. */
export type LostGraph = Pick<CaptureGraphParts, 'origin' | 'track' | 'stream' | 'releaseStream' | 'audio'>;

/** What the capture does about a loss, and the health reason it gives at once. */
export type LossPlan = { readonly next: 'stop'; readonly reason: string } | ReplacePlan;

/** Cut the lost graph, then look for what replaces it (findReplacement()). */
export interface ReplacePlan {
  readonly next: 'replace';
  readonly reason: string;
  /** The cut leaves the stream's tracks running: the same stream gets a new context first. */
  readonly keepStream: boolean;
  readonly lost: LostGraph;
  readonly builder: GraphBuilder;
  readonly detail: LossDetail;
  readonly lostDeviceId: string;
  readonly recovery: RecoveryOptions;
  /** Where a replacement stream may come from; undefined: nowhere (an app's stream and no reacquire). */
  readonly source: DeviceSearch['source'] | undefined;
}

/**
 * The device is gone. What may replace it depends on where the stream came from
 * (RecoveryOptions.reacquire): the app's reacquire() when it gave one; else a microphone is looked
 * for again, while a stream the app got elsewhere is never re-opened by getUserMedia: its loss ends
 * the capture. A closed context under a stream of the app's that still runs only needs a new context.
 * Without recovery (no rebuild, or recovery.enabled false) the capture ends cleanly, as stop() (the
 * tab-audio case: nothing to re-acquire).
 */
export function planLoss(f: LossFacts): LossPlan {
  const origin = f.lost.origin ?? 'microphone';
  const reacquire = f.recovery.reacquire;
  const reason = origin === 'app' && reacquire === undefined && f.detail !== 'context-closed'
    ? `stream lost (${f.detail}): the app's stream is not re-opened by the capture`
    : `device lost (${f.detail}): reconnecting`;
  if (f.builder === undefined || f.recovery.enabled === false) return { next: 'stop', reason };
  const source: ReplacePlan['source'] = reacquire !== undefined
    ? { kind: 'app', reacquire, releaseStream: f.lost.releaseStream }
    : origin === 'microphone' ? { kind: 'microphone', audio: f.lost.audio } : undefined;
  return {
    next: 'replace', reason, source, lost: f.lost, builder: f.builder, detail: f.detail, lostDeviceId: f.lostDeviceId, recovery: f.recovery,
    keepStream: origin === 'app' && f.detail === 'context-closed' && f.lost.track?.readyState === 'live',
  };
}

/**
 * Looks for what replaces the cut graph, as the plan says: the same stream on a new context first
 * (keepStream), else a search from the plan's source. Yields each try's health reason; returns what
 * was found (undefined: nothing may replace the lost stream).
 */
export async function* findReplacement(plan: ReplacePlan): Search<DeviceSearchResult | undefined> {
  const b = plan.builder;
  let found = plan.keepStream ? yield* sameStream({ ...b, lost: plan.lost }) : undefined;
  if (found === undefined && plan.source !== undefined) {
    found = yield* searchDevice({ ...b, recovery: plan.recovery, source: plan.source, lostDeviceId: plan.lostDeviceId, detail: plan.detail });
  }
  return found;
}

/** What the capture does once the search ended. */
export type Replacement =
  | ({ readonly next: 'install' } & NextGraph)
  /** stop() came after the search returned: the graph it built goes, unused. */
  | { readonly next: 'dispose'; readonly graph: CaptureGraph }
  /** Nothing came back: the capture fails with this (WEB_AUDIO_DEVICE_LOST) and stops. */
  | { readonly next: 'fail'; readonly error: WebAudioError }
  /** stop() ended the search: nothing left to do. */
  | { readonly next: 'none' };

/** The decision on a search's outcome, asked after it (`stopping`: stop() has been called meanwhile). */
export function afterSearch(found: DeviceSearchResult | undefined, plan: ReplacePlan, stopping: boolean): Replacement {
  if (found?.outcome === 'stopped') return { next: 'none' };
  if (found?.outcome === 'found') return stopping ? { next: 'dispose', graph: found.graph } : { next: 'install', graph: found.graph, generation: found.generation };
  return {
    next: 'fail',
    error: found === undefined ? streamLostFailure(plan.detail) : deviceLostFailure(plan.detail, found.attempts, plan.recovery.reacquire !== undefined),
  };
}

/** How a setDevice() starts: refused at once, or open the device with this input (the current graph's constraints). */
export type SwitchStart =
  | { readonly next: 'refuse'; readonly error: WebAudioError }
  | { readonly next: 'open'; readonly builder: GraphBuilder; readonly input: GraphInput };

/** setDevice(`deviceId`) on a capture whose current graph is `current`, with a replacement under way or not. */
export function startSwitch(deviceId: unknown, builder: GraphBuilder | undefined, replacing: boolean, current: Pick<CaptureGraphParts, 'audio'>): SwitchStart {
  const refuse = (message: string): SwitchStart => ({ next: 'refuse', error: new WebAudioError('WEB_AUDIO_INVALID_OPTION', message) });
  if (typeof deviceId !== 'string' || deviceId === '') return refuse('setDevice() needs a device id (from enumerateDevices())');
  if (builder === undefined) return refuse('setDevice() needs a capture that may open microphones (startCapture without recovery.enabled false)');
  if (replacing) return refuse('setDevice() while recovering from a lost device: wait for the recovered event');
  return { next: 'open', builder, input: { deviceId, ...(current.audio !== undefined ? { audio: current.audio } : {}) } };
}

/**
 * Whether a setDevice() goes on after an await: undefined, or what it rejects with, the new graph
 * then disposed. The caller's signal counts until the old graph is cut (`signal` given); stop()
 * until the new graph is installed: a capture stopped meanwhile stops on the old device.
 */
export function switchOverruled(stopping: boolean, signal?: AbortSignal): { readonly reject: unknown } | undefined {
  if (signal?.aborted === true) return { reject: signal.reason };
  return stopping ? { reject: stoppedBeforeSwitch() } : undefined;
}
