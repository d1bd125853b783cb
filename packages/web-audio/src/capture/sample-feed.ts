import { SampleRing, type RingSegments } from '@soundclone/core';
import { DropTable } from '../worklet/drop-table.js';
import { GATE_RECORD, type CaptureMode, type CaptureProcessorOptions, type GateProcessorOptions, type PageToWorklet, type StoppedMessage, type WorkletToPage } from '../worklet/protocol.js';

/** What the worklet reported at stop, and whether everything it delivered reached the page. */
export interface FeedTotals {
  /** Frames the worklet saw. */
  readonly frames: number;
  /** Frames it could not deliver (ring full or no free batch). */
  readonly dropped: number;
  /** Frames the page handed on (to the session writer, or counted as muted or paused). */
  readonly delivered: number;
  /**
   * delivered + dropped === frames: the worklet answered the stop and nothing went missing (false
   * after a delivery failure, whose block and everything after it were not handed on).
   */
  readonly exact: boolean;
}

/**
 * The page side of one capture transport: receives the worklet's audio and hands it on, in order, as
 * Float32 blocks at the context's rate, with each loss where it happened. A block is only valid during
 * the call (it is reused).
 */
export interface SampleFeed {
  readonly mode: CaptureMode;
  readonly processorOptions: CaptureProcessorOptions;
  attach(port: MessagePort): void;
  /** Asks the worklet to stop between two quanta, delivers everything before that point, reports totals. */
  stop(timeoutMs: number): Promise<FeedTotals>;
  /** Removes the listener and the timer; idempotent. */
  dispose(): void;
}

/** Where a feed hands the audio on, in stream order. */
export interface FeedSink {
  /** One block at the context rate; valid only during the call. */
  block(block: Float32Array): void;
  /**
   * Worklet frames [from, from + frames) were lost (the page stalled longer than the ring or pool
   * holds), right here in the stream: after the block before, before the block after.
   */
  dropped(from: number, frames: number): void;
  /** Gated: `frames` frames right after the audio before were not sent by the worklet's voice gate. */
  skipped(frames: number): void;
  /**
   * Gated: an utterance edge the worklet's gate found, `lag` frames after the end of what was handed
   * on so far (audio, skips and drops; negative: that far before it).
   */
  speech(event: 'speech.start' | 'speech.end', lag: number): void;
  /**
   * block() or dropped() threw. The feed hands on nothing more (the failing block is not counted as
   * delivered, so the totals show it): the caller must stop. Called once.
   */
  failed(error: unknown): void;
}

/** shared, gated: records the gate's table holds (about 5 s of skips at 48 kHz, a skip every 1024 frames or more). */
const GATE_TABLE_SLOTS = 256;

/** Most frames the shared feed hands on in one block (the session's resampler takes blocks of up to this whole). */
const MAX_BLOCK_FRAMES = 8192;

/** Frames the page may fall behind the worklet before audio is lost, by default (ring or pool). */
export const DEFAULT_BUFFER_MS = 2000;

/** transfer: batches for `bufferMs` of audio at `sampleRate` (at least 2). */
export function poolSizeFor(sampleRate: number, batchFrames: number, bufferMs: number): number {
  return Math.max(2, Math.ceil((sampleRate * bufferMs) / 1000 / batchFrames));
}

/**
 * Delivery to the sink, common to both transports. A sink that throws must not make audio vanish
 * while the books still balance: the failure is terminal, reported once through sink.failed(), and
 * the failed block is not counted as delivered, so `exact` is false at stop. (Redelivering it
 * instead could duplicate audio: the sink may have encoded part of it before it threw.)
 */
abstract class FeedBase {
  readonly #sink: FeedSink;
  #delivered = 0;
  /** Worklet frames accounted for, in order: delivered, skipped, dropped. */
  #position = 0;
  #failed = false;

  constructor(sink: FeedSink) {
    this.#sink = sink;
  }

  protected get delivered(): number {
    return this.#delivered;
  }

  protected get failed(): boolean {
    return this.#failed;
  }

  protected emit(block: Float32Array): void {
    if (this.#failed) return;
    try {
      this.#sink.block(block);
      this.#delivered += block.length;
      this.#position += block.length;
    } catch (caught) {
      this.#fail(caught);
    }
  }

  protected emitDropped(from: number, frames: number): void {
    if (this.#failed) return;
    try {
      this.#position += frames;
      this.#sink.dropped(from, frames);
    } catch (caught) {
      this.#fail(caught);
    }
  }

  /** Gated: skipped frames are handed on (as a count), so they are delivered too. */
  protected emitSkipped(frames: number): void {
    if (this.#failed || frames <= 0) return;
    try {
      this.#sink.skipped(frames);
      this.#delivered += frames;
      this.#position += frames;
    } catch (caught) {
      this.#fail(caught);
    }
  }

  /** Gated: an edge at worklet frame `frame`. */
  protected emitSpeech(event: 'speech.start' | 'speech.end', frame: number): void {
    if (this.#failed || frame < 0) return;
    try {
      this.#sink.speech(event, frame - this.#position);
    } catch (caught) {
      this.#fail(caught);
    }
  }

  /** Gated: what the worklet had not recorded yet at its stop (after everything else). */
  protected emitGateRest(message: StoppedMessage | undefined): void {
    const rest = message?.gate;
    if (rest === undefined) return;
    this.emitSkipped(rest.skipped);
    this.emitSpeech('speech.end', rest.end);
    this.emitSpeech('speech.start', rest.start);
  }

  protected totals(message: StoppedMessage | undefined, fallbackDropped: number): FeedTotals {
    const frames = message?.frames ?? this.#delivered + fallbackDropped;
    const dropped = message?.dropped ?? fallbackDropped;
    return { frames, dropped, delivered: this.#delivered, exact: message !== undefined && !this.#failed && this.#delivered + dropped === frames };
  }

  /** Stops delivering for good (timers etc.); the subclass's part. */
  protected abstract halt(): void;

  #fail(error: unknown): void {
    this.#failed = true;
    this.halt();
    this.#sink.failed(error);
  }
}

/**
 * Cross-origin isolated pages: the worklet writes a core SampleRing over a SharedArrayBuffer and the
 * page reads it every `drainMs` on its own timer (plus a wake message from the worklet when the ring is
 * half full, for a throttled background tab). The audio thread never posts per block. Losses (the
 * ring was full) come from the DropTable, which says exactly where in the ring each one sits.
 *
 * Garbage: one or two subarray views of the ring per block handed on (a page-thread cost, a few per
 * drain), in place of a copy of the audio.
 */
export class SharedRingFeed extends FeedBase implements SampleFeed {
  readonly mode = 'shared' as const;
  readonly processorOptions: CaptureProcessorOptions;
  readonly #ring: SampleRing<'float32'>;
  readonly #table: DropTable;
  /** Gated: the worklet's skips and edges by ring position. */
  readonly #gates: DropTable | null;
  readonly #segments: RingSegments<'float32'>;
  readonly #drainMs: number;
  #port: MessagePort | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** The ring's read cursor. */
  #position = 0;
  #stopped: ((message: StoppedMessage) => void) | undefined;

  constructor(capacityFrames: number, drainMs: number, sink: FeedSink, gate?: GateProcessorOptions) {
    super(sink);
    this.#ring = new SampleRing({ kind: 'float32', capacity: capacityFrames, shared: true });
    this.#table = DropTable.create();
    this.#gates = gate === undefined ? null : DropTable.create(GATE_TABLE_SLOTS);
    this.#segments = this.#ring.createSegments();
    this.#drainMs = drainMs;
    this.processorOptions = {
      mode: 'shared', ring: this.#ring.handle, drops: this.#table.buffer,
      ...(gate !== undefined && this.#gates !== null ? { gate, gates: this.#gates.buffer } : {}),
    };
  }

  attach(port: MessagePort): void {
    this.#port = port;
    port.onmessage = (event: MessageEvent<WorkletToPage>) => {
      const message = event.data;
      if (message instanceof Float32Array) return;
      if (message.type === 'wake') {
        this.#drain();
        post(port, { type: 'woken' });
      } else if (message.type === 'stopped') {
        this.#stopped?.(message);
      }
    };
    this.#timer = setInterval(() => this.#drain(), this.#drainMs);
  }

  async stop(timeoutMs: number): Promise<FeedTotals> {
    const port = this.#port;
    const message = port === undefined ? undefined : await untilStopped(port, timeoutMs, (resolve) => (this.#stopped = resolve));
    // The worklet published every write before it answered: what is in the ring now is all there is.
    this.#drain();
    if (message?.drop !== undefined) this.emitDropped(message.drop.from, message.drop.frames);
    this.emitGateRest(message);
    this.dispose();
    return this.totals(message, this.#ring.overflowSamples);
  }

  dispose(): void {
    this.halt();
    if (this.#port !== undefined) this.#port.onmessage = null;
    this.#stopped = undefined;
  }

  protected halt(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  #drain(): void {
    const ring = this.#ring;
    const table = this.#table;
    const segments = this.#segments;
    while (!this.failed) {
      // The write cursor first: every loss before it is in the table by now (published before it).
      const available = ring.availableToRead();
      let n = available < MAX_BLOCK_FRAMES ? available : MAX_BLOCK_FRAMES;
      const at = table.nextAt();
      if (at >= 0) {
        if (at <= this.#position) {
          const from = table.nextFrom();
          const frames = table.nextFrames();
          table.consume();
          this.emitDropped(from, frames);
          continue;
        }
        if (at - this.#position < n) n = at - this.#position; // deliver up to the loss, not past it
      }
      // Gated: a skip or an edge recorded here comes after a loss at the same place, before the audio after it.
      const gates = this.#gates;
      const gateAt = gates === null ? -1 : gates.nextAt();
      if (gates !== null && gateAt >= 0) {
        if (gateAt <= this.#position) {
          const kind = gates.nextFrom();
          const value = gates.nextFrames();
          gates.consume();
          if (kind === GATE_RECORD.skip) this.emitSkipped(value);
          else this.emitSpeech(kind === GATE_RECORD.end ? 'speech.end' : 'speech.start', value);
          continue;
        }
        if (gateAt - this.#position < n) n = gateAt - this.#position;
      }
      if (n === 0) return;
      // Handed on as views of the shared ring, not copied out: the session's resampler reads them
      // into its history, the one copy on the page. The worklet cannot overwrite them meanwhile,
      // because they are consumed (freed) only after the sink returned.
      const count = ring.readSegments(n, segments);
      const { storage, firstStart, firstLength, secondStart, secondLength } = segments;
      this.#position += count;
      this.emit(storage.subarray(firstStart, firstStart + firstLength));
      if (secondLength > 0) this.emit(storage.subarray(secondStart, secondStart + secondLength));
      ring.consume(count);
    }
  }
}

/**
 * Pages without cross-origin isolation (no SharedArrayBuffer): the worklet posts batches of
 * `batchFrames` as transferables; each goes back to the worklet's pool once delivered, so neither side
 * allocates audio buffers in steady state. The pool holds `poolSize` batches (startCapture: 2 s of
 * audio); a page stalled longer loses audio, which the worklet reports in order with the batches.
 */
export class TransferFeed extends FeedBase implements SampleFeed {
  readonly mode = 'transfer' as const;
  readonly processorOptions: CaptureProcessorOptions;
  #port: MessagePort | undefined;
  #stopped: ((message: StoppedMessage) => void) | undefined;

  constructor(batchFrames: number, poolSize: number, sink: FeedSink, gate?: GateProcessorOptions) {
    super(sink);
    this.processorOptions = { mode: 'transfer', batchFrames, poolSize, ...(gate !== undefined ? { gate } : {}) };
  }

  attach(port: MessagePort): void {
    this.#port = port;
    port.onmessage = (event: MessageEvent<WorkletToPage>) => {
      const message = event.data;
      if (message instanceof Float32Array) {
        this.emit(message);
        post(port, message, [message.buffer as ArrayBuffer]); // back to the pool, delivered or not
      } else if (message.type === 'dropped') {
        this.emitDropped(message.from, message.frames);
      } else if (message.type === 'gate') {
        const batch = message.batch;
        if (batch !== null) {
          this.emit(batch.subarray(0, message.frames));
          post(port, batch, [batch.buffer as ArrayBuffer]);
        }
        this.emitSkipped(message.skipped);
        this.emitSpeech('speech.end', message.end);
        this.emitSpeech('speech.start', message.start);
      } else if (message.type === 'stopped') {
        if (message.tail !== undefined && message.tailFrames !== undefined && message.tailFrames > 0) this.emit(message.tail.subarray(0, message.tailFrames));
        if (message.drop !== undefined) this.emitDropped(message.drop.from, message.drop.frames);
        this.emitGateRest(message);
        this.#stopped?.(message);
      }
    };
  }

  async stop(timeoutMs: number): Promise<FeedTotals> {
    const port = this.#port;
    // Batches posted before the answer arrive before it (one port, in order): the answer is the end.
    const message = port === undefined ? undefined : await untilStopped(port, timeoutMs, (resolve) => (this.#stopped = resolve));
    this.dispose();
    return this.totals(message, 0);
  }

  dispose(): void {
    if (this.#port !== undefined) this.#port.onmessage = null;
    this.#stopped = undefined;
  }

  protected halt(): void {
    // Nothing runs on its own: messages keep returning batches to the pool until stop().
  }
}

function post(port: MessagePort, message: PageToWorklet, transfer: Transferable[] = []): void {
  port.postMessage(message, transfer);
}

/**
 * Sends stop and waits for the worklet's totals; undefined after timeoutMs (a closed context runs no
 * more worklet code), in which case the caller reports what it has with exact: false.
 */
function untilStopped(port: MessagePort, timeoutMs: number, register: (resolve: (m: StoppedMessage) => void) => void): Promise<StoppedMessage | undefined> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(undefined), timeoutMs);
    register((message) => {
      clearTimeout(timer);
      resolve(message);
    });
    post(port, { type: 'stop' });
  });
}
