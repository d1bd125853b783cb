import { SampleRing } from '@soundclone/core';
import type { CaptureMode, CaptureProcessorOptions, PageToWorklet, StoppedMessage, WorkletToPage } from '../worklet/protocol.js';

/** What the worklet reported at stop, and whether everything it delivered reached the page. */
export interface FeedTotals {
  /** Frames the worklet saw. */
  readonly frames: number;
  /** Frames it could not deliver (ring full or no free batch). */
  readonly dropped: number;
  /** Frames the page received. */
  readonly delivered: number;
  /** delivered + dropped === frames: the worklet answered the stop and nothing went missing. */
  readonly exact: boolean;
}

/**
 * The page side of one capture transport: receives the worklet's audio and hands it on, in order, as
 * Float32 blocks at the context's rate. A block is only valid during the call (it is reused).
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

type Deliver = (block: Float32Array) => void;

/**
 * Cross-origin isolated pages: the worklet writes a core SampleRing over a SharedArrayBuffer and the
 * page reads it every `drainMs` on its own timer (plus a wake message from the worklet when the ring is
 * half full, for a throttled background tab). The audio thread never posts per block.
 */
export class SharedRingFeed implements SampleFeed {
  readonly mode = 'shared' as const;
  readonly processorOptions: CaptureProcessorOptions;
  readonly #ring: SampleRing<'float32'>;
  readonly #scratch: Float32Array;
  readonly #deliver: Deliver;
  readonly #drainMs: number;
  #port: MessagePort | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #delivered = 0;
  #stopped: ((message: StoppedMessage) => void) | undefined;

  constructor(capacityFrames: number, drainMs: number, deliver: Deliver) {
    this.#ring = new SampleRing({ kind: 'float32', capacity: capacityFrames, shared: true });
    this.#scratch = new Float32Array(Math.min(capacityFrames, 8192));
    this.#deliver = deliver;
    this.#drainMs = drainMs;
    this.processorOptions = { mode: 'shared', ring: this.#ring.handle };
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
    this.dispose();
    const frames = message?.frames ?? this.#delivered + this.#ring.overflowSamples;
    const dropped = message?.dropped ?? this.#ring.overflowSamples;
    return { frames, dropped, delivered: this.#delivered, exact: message !== undefined && this.#delivered + dropped === frames };
  }

  dispose(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#port !== undefined) this.#port.onmessage = null;
    this.#stopped = undefined;
  }

  #drain(): void {
    const ring = this.#ring;
    const scratch = this.#scratch;
    for (;;) {
      const n = ring.read(scratch, 0, scratch.length);
      if (n === 0) return;
      this.#delivered += n;
      this.#deliver(n === scratch.length ? scratch : scratch.subarray(0, n));
    }
  }
}

/**
 * Pages without cross-origin isolation (no SharedArrayBuffer): the worklet posts batches of
 * `batchFrames` as transferables; each goes back to the worklet's pool once delivered, so neither side
 * allocates audio buffers in steady state.
 */
export class TransferFeed implements SampleFeed {
  readonly mode = 'transfer' as const;
  readonly processorOptions: CaptureProcessorOptions;
  readonly #deliver: Deliver;
  #port: MessagePort | undefined;
  #delivered = 0;
  #stopped: ((message: StoppedMessage) => void) | undefined;

  constructor(batchFrames: number, poolSize: number, deliver: Deliver) {
    this.#deliver = deliver;
    this.processorOptions = { mode: 'transfer', batchFrames, poolSize };
  }

  attach(port: MessagePort): void {
    this.#port = port;
    port.onmessage = (event: MessageEvent<WorkletToPage>) => {
      const message = event.data;
      if (message instanceof Float32Array) {
        this.#delivered += message.length;
        try {
          this.#deliver(message);
        } finally {
          post(port, message, [message.buffer as ArrayBuffer]);
        }
      } else if (message.type === 'stopped') {
        if (message.tail !== undefined && message.tailFrames !== undefined && message.tailFrames > 0) {
          this.#delivered += message.tailFrames;
          this.#deliver(message.tail.subarray(0, message.tailFrames));
        }
        this.#stopped?.(message);
      }
    };
  }

  async stop(timeoutMs: number): Promise<FeedTotals> {
    const port = this.#port;
    // Batches posted before the answer arrive before it (one port, in order): the answer is the end.
    const message = port === undefined ? undefined : await untilStopped(port, timeoutMs, (resolve) => (this.#stopped = resolve));
    this.dispose();
    const frames = message?.frames ?? this.#delivered;
    const dropped = message?.dropped ?? 0;
    return { frames, dropped, delivered: this.#delivered, exact: message !== undefined && this.#delivered + dropped === frames };
  }

  dispose(): void {
    if (this.#port !== undefined) this.#port.onmessage = null;
    this.#stopped = undefined;
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
