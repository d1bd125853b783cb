import type { SampleRingHandle } from '@soundclone/core';

/**
 * What the page and the capture worklet say to each other. Kept tiny and allocation-aware: in the
 * transfer mode the worklet posts the batch Float32Array itself (no wrapper object), and the page
 * transfers it back for reuse, so the audio thread's pool never runs dry in steady state.
 *
 *   page                                   worklet (audio thread)
 *    |-- new AudioWorkletNode(options) ----->|  shared: attach the SampleRing; transfer: fill the pool
 *    |<-- Float32Array batch (transferred) --|  transfer: every batchFrames frames
 *    |--- the same Float32Array back ------->|  back into the pool
 *    |<-- { type: 'dropped', from, frames } -|  transfer: the pool had run dry (a stalled page); posted
 *    |                                       |  when a batch is free again, so between the batches it sits
 *    |                                       |  between (shared: the same facts go in the DropTable)
 *    |<-- { type: 'wake' } ------------------|  shared: the ring passed half full (a throttled page)
 *    |<-- { type: 'gate', batch?, frames, ---|  gated, transfer: the audio before (a partly filled batch,
 *    |      skipped, start, end }            |  transferred), frames skipped after it, speech edges
 *    |                                       |  (shared: the same facts go in the gate's DropTable)
 *    |--- { type: 'stop' } ----------------->|  between two render quanta
 *    |<-- { type: 'stopped', frames, ... } --|  after every batch: the exact totals
 */
export const PROCESSOR_NAME = 'soundclone-capture';

export type CaptureMode = 'shared' | 'transfer';

/** processorOptions of the AudioWorkletNode. */
export interface CaptureProcessorOptions {
  readonly mode: CaptureMode;
  /** shared: the float32 SampleRing (over a SharedArrayBuffer) the worklet writes. */
  readonly ring?: SampleRingHandle<'float32'>;
  /** shared: the DropTable's buffer, where the worklet records each stretch the full ring lost. */
  readonly drops?: SharedArrayBuffer;
  /** transfer: frames per posted batch. */
  readonly batchFrames?: number;
  /**
   * transfer: batches allocated up front (the page sizes it by time: 2 s of audio by default); when all
   * are with the page, frames are dropped, counted and reported in a DroppedMessage.
   */
  readonly poolSize?: number;
  /** The voice gate, run in process(): only the audio it sends is delivered, the rest is declared skipped. */
  readonly gate?: GateProcessorOptions;
  /** shared, gated: the DropTable where the worklet records skips and speech edges, by ring position. */
  readonly gates?: SharedArrayBuffer;
}

/** The voice gate's options as the worklet takes them (core's VoiceGateOptions without a detector: the default engine). */
export interface GateProcessorOptions {
  /** The context's rate. */
  readonly sampleRate: number;
  readonly preRollMs?: number;
  readonly hangoverMs?: number;
  readonly commitAfterMs?: number;
}

/**
 * Gate records in the shared mode's table (DropTable, `from` = the kind, `frames` = the value):
 * frames skipped, or the worklet frame of an utterance edge.
 */
export const GATE_RECORD = { skip: 0, start: 1, end: 2 } as const;

/**
 * transfer, gated: in stream order, the audio delivered before (`batch`, its first `frames`; null
 * when none is waiting), then `skipped` frames the gate did not send, then the utterance edges in
 * worklet frames (-1: none; the end is before the start). One reused object, posted only when the
 * gate changes its mind or a batch's worth of skip has built up.
 */
export interface GateMessage {
  readonly type: 'gate';
  readonly batch: Float32Array | null;
  readonly frames: number;
  readonly skipped: number;
  readonly start: number;
  readonly end: number;
}

/**
 * One stretch of audio the worklet could not deliver: worklet frames [from, from + frames). Never
 * replaced by anything: the audio after it follows the audio before it.
 */
export interface DropRun {
  readonly from: number;
  readonly frames: number;
}

/** transfer: a DropRun, posted in stream order (after the batches before it, before the ones after). */
export interface DroppedMessage extends DropRun {
  readonly type: 'dropped';
}

export interface StopMessage {
  readonly type: 'stop';
}

/** The page drained the ring after a wake; the worklet may wake it again. */
export interface WokenMessage {
  readonly type: 'woken';
}

export interface WakeMessage {
  readonly type: 'wake';
}

export interface StoppedMessage {
  readonly type: 'stopped';
  /** Frames the worklet saw since it started (delivered + dropped). */
  readonly frames: number;
  /** Frames that could not be delivered: ring full (shared) or no free batch (transfer). */
  readonly dropped: number;
  /** transfer: the last, partly filled batch (transferred) and how many frames of it are audio. */
  readonly tail?: Float32Array;
  readonly tailFrames?: number;
  /** Frames were still being dropped when the stop came: the run at the very end of the stream. */
  readonly drop?: DropRun;
  /** Gated: what follows everything above (the held-back rest skipped, an utterance that ended, edges not yet recorded). */
  readonly gate?: { readonly skipped: number; readonly start: number; readonly end: number };
}

export type WorkletToPage = Float32Array | WakeMessage | DroppedMessage | GateMessage | StoppedMessage;
export type PageToWorklet = Float32Array | StopMessage | WokenMessage;
