import { SampleRing } from '@soundclone/core';
import type { CaptureProcessorOptions, PageToWorklet, StoppedMessage, WakeMessage } from './protocol.js';

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
const DEFAULT_POOL_SIZE = 16;

/**
 * The capture processor class, built on the given base: AudioWorkletProcessor in the worklet, a stub
 * with a MessagePort in the Node counting harness, so the harness runs exactly this code.
 *
 * process() takes the first input's first channel (the node is created with channelCount 1,
 * 'explicit', so the browser has already mixed the stream down) and either
 *   - shared: writes it into a core SampleRing over a SharedArrayBuffer (the page reads it on a timer), or
 *   - transfer: copies it into a preallocated batch and posts full batches as transferables.
 *
 * Garbage: the constructor allocates the pool (transfer) or attaches the ring (shared). process()
 * allocates nothing, ever: no views (copies are index loops), no arrays (the transfer list is one
 * reused array), no closures. A post of a full batch (every batchFrames frames, 8 quanta by default)
 * costs the engine's structured-clone bookkeeping, never a JS object of ours. Messages (stop, a
 * returned batch) arrive between quanta, outside process().
 */
export function defineCaptureProcessor<B extends ProcessorBaseConstructor>(Base: B) {
  abstract class CaptureProcessorBase extends Base {
    #ring: SampleRing<'float32'> | null = null;
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
    #stopped = false;

    constructor(...args: any[]) {
      super(...args);
      const options = ((args[0] as { processorOptions?: CaptureProcessorOptions } | undefined)?.processorOptions ?? { mode: 'transfer' }) as CaptureProcessorOptions;
      this.#batchFrames = options.batchFrames ?? DEFAULT_BATCH_FRAMES;
      if (options.mode === 'shared' && options.ring !== undefined) {
        this.#ring = SampleRing.attach(options.ring);
        this.#wakeAt = this.#ring.capacity >> 1;
        this.#pool = [];
      } else {
        const size = Math.max(2, options.poolSize ?? DEFAULT_POOL_SIZE);
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
        ring.write(channel, 0, n); // what does not fit is counted in overflowSamples
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
            this.#dropped += n - at; // every batch is with the page: drop and count, never allocate
            return true;
          }
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
      if (ring !== null) {
        const stopped: StoppedMessage = { type: 'stopped', frames: this.#frames, dropped: ring.overflowSamples };
        this.port.postMessage(stopped);
      } else {
        const tail = this.#batch;
        const stopped: StoppedMessage = tail === null
          ? { type: 'stopped', frames: this.#frames, dropped: this.#dropped }
          : { type: 'stopped', frames: this.#frames, dropped: this.#dropped, tail, tailFrames: this.#fill };
        this.#batch = null;
        this.port.postMessage(stopped, tail === null ? [] : [tail.buffer as ArrayBuffer]);
      }
      this.port.onmessage = null;
    }
  }
  return CaptureProcessorBase;
}
