import { SampleRing } from '@soundclone/core';
import { DropTable } from './drop-table.js';
import { GATE_RECORD, type CaptureProcessorOptions, type DropRun, type PageToWorklet, type StoppedMessage, type WakeMessage } from './protocol.js';
import { GATE_PIECE, WorkletGate } from './worklet-gate.js';

/** The part of AudioWorkletProcessor the capture uses: its port. */
export interface ProcessorBase {
  readonly port: MessagePortLike;
}

/** MessagePort as the worklet sees it (a Node MessagePort or a test stub fits too). */
export interface MessagePortLike {
  postMessage(message: unknown, transfer?: Transferable[]): void;
  onmessage: ((event: MessageEvent) => void) | null;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the mixin rule of TypeScript requires any[]
export type ProcessorBaseConstructor = abstract new (...args: any[]) => ProcessorBase;

const DEFAULT_BATCH_FRAMES = 1024;
/** Without a poolSize from the page: 2 s of 48 kHz audio (the page always sizes it by its own rate). */
const DEFAULT_POOL_FRAMES = 96_000;

/**
 * The capture processor class, built on the given base: AudioWorkletProcessor in the worklet, a stub
 * with a MessagePort in the Node counting harness, so the harness runs exactly this code.
 *
 * process() takes the first input's first channel (the node is created with channelCount 1,
 * 'explicit', so the browser has already mixed the stream down) and either
 *   - shared: writes it into a core SampleRing over a SharedArrayBuffer (the page reads it on a timer), or
 *   - transfer: copies it into a preallocated batch and posts full batches as transferables.
 *
 * Loss: when the page stalls longer than the pool or the ring holds, frames are dropped, never
 * replaced. Consecutive dropped frames make one run; when frames flow again the run is reported once,
 * before the frames after it: a DroppedMessage on the port (transfer, in order with the batches) or a
 * DropTable record (shared, published before the ring's write cursor moves past it). A run still open
 * at stop goes in the stopped message.
 *
 * Gated (processorOptions.gate): the quantum goes through a voice gate first (worklet-gate.ts), and
 * only the frames it sends are delivered, copied out of its history (the pre-roll reaches back into
 * it). The frames it does not send are counted and declared skipped, in stream order with the audio:
 * a GateMessage (transfer: it carries the partly filled batch before the skip, so the order holds) or
 * records in a second DropTable by ring position (shared), together with the utterance edges. A
 * message is posted only when the gate opens, closes, finds an edge, or a batch's worth of skip has
 * built up: never one per quantum.
 *
 * Garbage: the constructor allocates the pool (transfer) or attaches the ring (shared). process()
 * allocates nothing, ever: no views (copies are index loops), no arrays (the transfer list is one
 * reused array), no closures; a dropped quantum is two additions. A post of a full batch (every
 * batchFrames frames, 8 quanta by default) or of the end of a loss (one reused message object) costs
 * the engine's structured-clone bookkeeping, never a JS object of ours. Messages (stop, a returned
 * batch) arrive between quanta, outside process().
 */
export function defineCaptureProcessor<B extends ProcessorBaseConstructor>(Base: B) {
  abstract class CaptureProcessorBase extends Base {
    #ring: SampleRing<'float32'> | null = null;
    #table: DropTable | null = null;
    #wakeAt = 0;
    #wakePending = false;
    readonly #wake: WakeMessage = { type: 'wake' };
    #batch: Float32Array | null = null;
    #fill = 0;
    readonly #batchFrames: number;
    readonly #pool: Array<Float32Array | null>;
    #poolCount = 0;
    readonly #transfer: Transferable[] = [];
    #frames = 0;
    #dropped = 0;
    /** The open run of dropped frames: first worklet frame and length (0: none open). */
    #runFrom = 0;
    #runFrames = 0;
    readonly #droppedMessage = { type: 'dropped' as const, from: 0, frames: 0 };
    #stopped = false;
    readonly #gate: WorkletGate | null;
    /** shared, gated: skips and edges by ring position. */
    readonly #gates: DropTable | null = null;
    readonly #gateMessage = { type: 'gate' as const, batch: null as Float32Array | null, frames: 0, skipped: 0, start: -1, end: -1 };
    readonly #none: Transferable[] = [];
    /** Gated: skipped frames and edges not yet handed to the page. */
    #pendingSkip = 0;
    #pendingStart = -1;
    #pendingEnd = -1;
    /** Gated: a skip this long is handed on even while the gate stays closed, so the session's time moves. */
    readonly #skipFlush: number;

    constructor(...args: any[]) {
      super(...args);
      const options = ((args[0] as { processorOptions?: CaptureProcessorOptions } | undefined)?.processorOptions ?? { mode: 'transfer' }) as CaptureProcessorOptions;
      this.#batchFrames = options.batchFrames ?? DEFAULT_BATCH_FRAMES;
      this.#gate = options.gate === undefined ? null : new WorkletGate(options.gate);
      this.#skipFlush = this.#batchFrames;
      if (options.mode === 'shared' && options.ring !== undefined) {
        this.#ring = SampleRing.attach(options.ring);
        this.#table = options.drops === undefined ? null : new DropTable(options.drops);
        if (this.#gate !== null && options.gates !== undefined) this.#gates = new DropTable(options.gates);
        this.#wakeAt = this.#ring.capacity >> 1;
        this.#pool = [];
      } else {
        const size = Math.max(2, options.poolSize ?? Math.ceil(DEFAULT_POOL_FRAMES / this.#batchFrames));
        this.#pool = new Array<Float32Array | null>(size).fill(null);
        for (let i = 0; i < size; i++) this.#pool[i] = new Float32Array(this.#batchFrames);
        this.#poolCount = size;
        this.#transfer.push(new ArrayBuffer(0)); // the slot; replaced by each post's buffer
      }
      this.port.onmessage = (event: MessageEvent) => this.#onMessage(event.data as PageToWorklet);
    }

    /** Frames seen so far (tests and the harness read it). */
    get frames(): number {
      return this.#frames;
    }

    get dropped(): number {
      return this.#ring === null ? this.#dropped : this.#ring.overflowSamples;
    }

    process(inputs: Float32Array[][]): boolean {
      if (this.#stopped) return false;
      const input = inputs[0];
      if (input === undefined || input.length === 0) return true; // no source connected (yet)
      const channel = input[0] as Float32Array;
      const n = channel.length;
      this.#frames += n;
      const gate = this.#gate;
      if (gate === null) {
        this.#deliver(channel, 0, n, this.#frames - n);
      } else {
        for (let at = 0; at < n; at += GATE_PIECE) {
          gate.take(channel, at, n - at < GATE_PIECE ? n - at : GATE_PIECE);
          this.#applyGate(gate);
        }
      }
      const ring = this.#ring;
      // A page whose timers are throttled (background tab) is woken before the ring (or the gate's table) overflows.
      if (ring !== null && !this.#wakePending && (ring.availableToRead() >= this.#wakeAt || (this.#gates !== null && this.#gates.unread() >= this.#gates.slots >> 1))) {
        this.#wakePending = true;
        this.port.postMessage(this.#wake);
      }
      return true;
    }

    /** The gate's decision on one piece: the skip before the send, the send (from the history), the skip after, the edges. */
    #applyGate(gate: WorkletGate): void {
      if (gate.skipBefore > 0) {
        this.#pendingSkip += gate.skipBefore;
        this.#flushGate(); // the skip precedes the audio
      }
      const count = gate.sendTo - gate.sendFrom;
      if (count > 0) {
        const history = gate.history;
        const length = history.length;
        const start = gate.sendFrom % length;
        const first = count < length - start ? count : length - start;
        this.#deliver(history, start, first, gate.sendFrom);
        if (first < count) this.#deliver(history, 0, count - first, gate.sendFrom + first);
      }
      this.#pendingSkip += gate.skip;
      if (gate.speechEnd >= 0) this.#pendingEnd = gate.speechEnd;
      if (gate.speechStart >= 0) this.#pendingStart = gate.speechStart;
      if (this.#pendingStart >= 0 || this.#pendingEnd >= 0 || this.#pendingSkip >= this.#skipFlush) this.#flushGate();
    }

    /** Hands the pending skip and edges to the page, in order after the audio delivered so far. */
    #flushGate(): void {
      const gates = this.#gates;
      if (this.#ring !== null) {
        // Not past an unpublished loss (the page applies both tables in ring order); none: kept for stop.
        if (gates === null || this.#runFrames > 0 || gates.unread() >= gates.slots) return;
        const at = this.#ring.writeCursor;
        if (this.#pendingSkip > 0) {
          if (!gates.publish(at, GATE_RECORD.skip, this.#pendingSkip)) return;
          this.#pendingSkip = 0;
        }
        if (this.#pendingEnd >= 0) {
          if (!gates.publish(at, GATE_RECORD.end, this.#pendingEnd)) return;
          this.#pendingEnd = -1;
        }
        if (this.#pendingStart >= 0) {
          if (!gates.publish(at, GATE_RECORD.start, this.#pendingStart)) return;
          this.#pendingStart = -1;
        }
        return;
      }
      if (this.#runFrames > 0) this.#postDropped(); // the loss came first
      const message = this.#gateMessage;
      const batch = this.#batch;
      message.skipped = this.#pendingSkip;
      message.start = this.#pendingStart;
      message.end = this.#pendingEnd;
      this.#pendingSkip = 0;
      this.#pendingStart = this.#pendingEnd = -1;
      if (batch !== null && this.#fill > 0) {
        message.batch = batch;
        message.frames = this.#fill;
        this.#batch = null;
        this.#transfer[0] = batch.buffer as ArrayBuffer;
        this.port.postMessage(message, this.#transfer);
      } else {
        message.batch = null;
        message.frames = 0;
        this.port.postMessage(message, this.#none);
      }
      message.batch = null;
    }

    /** src[offset, offset + n), worklet frames [position, position + n), to the page: the ring or the batches. */
    #deliver(src: Float32Array, offset: number, n: number, position: number): void {
      const ring = this.#ring;
      if (ring !== null) {
        // A loss is recorded before the first frame after it is published; while it cannot be (ring
        // still full, or every table slot still unread by the page), the run goes on.
        if (this.#runFrames > 0 && ring.availableToWrite() > 0) {
          const table = this.#table;
          if (table === null || table.publish(ring.writeCursor, this.#runFrom, this.#runFrames)) this.#runFrames = 0;
        }
        if (this.#runFrames > 0) {
          ring.commitWrite(0, n); // counted in overflowSamples, like a write that did not fit
          this.#runFrames += n;
        } else {
          const written = ring.write(src, offset, n); // what does not fit is counted in overflowSamples
          if (written < n) {
            this.#runFrom = position + written;
            this.#runFrames = n - written;
          }
        }
        return;
      }
      let at = 0;
      while (at < n) {
        let batch = this.#batch;
        if (batch === null) {
          batch = this.#take();
          if (batch === null) {
            // Every batch is with the page: drop and count, never allocate.
            if (this.#runFrames === 0) this.#runFrom = position + at;
            this.#runFrames += n - at;
            this.#dropped += n - at;
            return;
          }
          if (this.#runFrames > 0) this.#postDropped();
          this.#batch = batch;
          this.#fill = 0;
        }
        let fill = this.#fill;
        const end = Math.min(n, at + (this.#batchFrames - fill));
        while (at < end) batch[fill++] = src[offset + at++] as number;
        this.#fill = fill;
        if (fill === this.#batchFrames) {
          this.#batch = null;
          this.#post(batch);
        }
      }
    }

    #take(): Float32Array | null {
      if (this.#poolCount === 0) return null;
      const batch = this.#pool[--this.#poolCount] as Float32Array;
      this.#pool[this.#poolCount] = null;
      return batch;
    }

    /** transfer: the open run, before any frame after it (same port, so in order with the batches). */
    #postDropped(): void {
      const message = this.#droppedMessage;
      message.from = this.#runFrom;
      message.frames = this.#runFrames;
      this.#runFrames = 0;
      this.port.postMessage(message);
    }

    #post(batch: Float32Array): void {
      this.#transfer[0] = batch.buffer as ArrayBuffer;
      this.port.postMessage(batch, this.#transfer);
    }

    #onMessage(message: PageToWorklet): void {
      if (message instanceof Float32Array) {
        // A batch back from the page; one of the wrong size (never sent by us) is ignored.
        if (message.length === this.#batchFrames && this.#poolCount < this.#pool.length) this.#pool[this.#poolCount++] = message;
        return;
      }
      if (message.type === 'stop' && !this.#stopped) this.#stop();
      else if (message.type === 'woken') this.#wakePending = false;
    }

    /** Between quanta: no further process() call writes, so the totals below are final. */
    #stop(): void {
      this.#stopped = true;
      const ring = this.#ring;
      const gate = this.#gate;
      let gated: StoppedMessage['gate'];
      if (gate !== null) {
        // The held-back rest is trailing silence: skipped; an utterance still open ends.
        gate.finish();
        this.#pendingSkip += gate.skip;
        if (gate.speechEnd >= 0) this.#pendingEnd = gate.speechEnd;
        if (ring === null) this.#flushGate();
        gated = { skipped: this.#pendingSkip, start: this.#pendingStart, end: this.#pendingEnd };
      }
      const drop: DropRun | undefined = this.#runFrames > 0 ? { from: this.#runFrom, frames: this.#runFrames } : undefined;
      this.#runFrames = 0;
      if (ring !== null) {
        const stopped: StoppedMessage = { type: 'stopped', frames: this.#frames, dropped: ring.overflowSamples, ...(drop !== undefined ? { drop } : {}), ...(gated !== undefined ? { gate: gated } : {}) };
        this.port.postMessage(stopped);
      } else {
        // An open run means no batch in hand, so there is a tail or a run, never both.
        const tail = this.#batch;
        const stopped: StoppedMessage = tail === null
          ? { type: 'stopped', frames: this.#frames, dropped: this.#dropped, ...(drop !== undefined ? { drop } : {}), ...(gated !== undefined ? { gate: gated } : {}) }
          : { type: 'stopped', frames: this.#frames, dropped: this.#dropped, tail, tailFrames: this.#fill, ...(gated !== undefined ? { gate: gated } : {}) };
        this.#batch = null;
        this.port.postMessage(stopped, tail === null ? [] : [tail.buffer as ArrayBuffer]);
      }
      this.port.onmessage = null;
    }
  }
  return CaptureProcessorBase;
}
