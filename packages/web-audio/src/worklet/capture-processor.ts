import { SampleRing } from '@soundclone/core';
import { DropTable } from './drop-table.js';
import type { CaptureProcessorOptions, DropRun, PageToWorklet, StoppedMessage, WakeMessage } from './protocol.js';

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

    constructor(...args: any[]) {
      super(...args);
      const options = ((args[0] as { processorOptions?: CaptureProcessorOptions } | undefined)?.processorOptions ?? { mode: 'transfer' }) as CaptureProcessorOptions;
      this.#batchFrames = options.batchFrames ?? DEFAULT_BATCH_FRAMES;
      if (options.mode === 'shared' && options.ring !== undefined) {
        this.#ring = SampleRing.attach(options.ring);
        this.#table = options.drops === undefined ? null : new DropTable(options.drops);
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
          const written = ring.write(channel, 0, n); // what does not fit is counted in overflowSamples
          if (written < n) {
            this.#runFrom = this.#frames - n + written;
            this.#runFrames = n - written;
          }
        }
        // A page whose timers are throttled (background tab) is woken before the ring overflows.
        if (!this.#wakePending && ring.availableToRead() >= this.#wakeAt) {
          this.#wakePending = true;
          this.port.postMessage(this.#wake);
        }
        return true;
      }
      let at = 0;
      while (at < n) {
        let batch = this.#batch;
        if (batch === null) {
          batch = this.#take();
          if (batch === null) {
            // Every batch is with the page: drop and count, never allocate.
            if (this.#runFrames === 0) this.#runFrom = this.#frames - n + at;
            this.#runFrames += n - at;
            this.#dropped += n - at;
            return true;
          }
          if (this.#runFrames > 0) this.#postDropped();
          this.#batch = batch;
          this.#fill = 0;
        }
        let fill = this.#fill;
        const end = Math.min(n, at + (this.#batchFrames - fill));
        while (at < end) batch[fill++] = channel[at++] as number;
        this.#fill = fill;
        if (fill === this.#batchFrames) {
          this.#batch = null;
          this.#post(batch);
        }
      }
      return true;
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
      const drop: DropRun | undefined = this.#runFrames > 0 ? { from: this.#runFrom, frames: this.#runFrames } : undefined;
      this.#runFrames = 0;
      if (ring !== null) {
        const stopped: StoppedMessage = { type: 'stopped', frames: this.#frames, dropped: ring.overflowSamples, ...(drop !== undefined ? { drop } : {}) };
        this.port.postMessage(stopped);
      } else {
        // An open run means no batch in hand, so there is a tail or a run, never both.
        const tail = this.#batch;
        const stopped: StoppedMessage = tail === null
          ? { type: 'stopped', frames: this.#frames, dropped: this.#dropped, ...(drop !== undefined ? { drop } : {}) }
          : { type: 'stopped', frames: this.#frames, dropped: this.#dropped, tail, tailFrames: this.#fill };
        this.#batch = null;
        this.port.postMessage(stopped, tail === null ? [] : [tail.buffer as ArrayBuffer]);
      }
      this.port.onmessage = null;
    }
  }
  return CaptureProcessorBase;
}
