import type { AudioBlock, AudioFormat, AudioSource } from '../sources/audio-source.js';

/** Audio a full queue could not keep: the blocks captured while the reader was behind by the whole bound. */
export interface Overflow {
  /** Frames dropped by this push. */
  readonly frames: number;
  /** Position of the first dropped frame in the captured stream (delivered plus dropped before it). */
  readonly atFrame: number;
  /** Frames dropped since the source started, this push included. */
  readonly totalFrames: number;
}

export interface PushSourceOptions {
  /** The most audio queued for a reader that is behind; newer blocks are dropped past it. Default 5000 ms. */
  readonly maxQueuedMs?: number;
  /** Called for every dropped block, synchronously in push(). */
  readonly onOverflow?: (overflow: Overflow) => void;
}

/**
 * A live source fed by a capture backend: blocks are queued as they are captured and handed out in
 * order. stop() asks the backend to stop; iteration ends after the last captured block, so
 * deliveredFrames is the exact number of frames handed out. The queue is bounded: a capture that
 * runs on while nobody reads (a stalled session) must not grow memory without end. Past the bound the
 * newest block is dropped, counted in droppedFrames and reported to onOverflow: never silently.
 */
export class PushSource implements AudioSource {
  readonly live = true;
  #queue: AudioBlock[] = [];
  #queuedFrames = 0;
  #dropped = 0;
  readonly #maxQueuedFrames: number;
  readonly #onOverflow: ((overflow: Overflow) => void) | undefined;
  #ended = false;
  #error: unknown;
  #wake: (() => void) | undefined;
  #delivered = 0;
  #stopping: Promise<void> | undefined;
  readonly #endedPromise: Promise<void>;
  #resolveEnded!: () => void;

  constructor(
    readonly label: string,
    readonly format: AudioFormat,
    private readonly requestStop: () => void,
    options: PushSourceOptions = {},
  ) {
    this.#endedPromise = new Promise((resolve) => (this.#resolveEnded = resolve));
    this.#maxQueuedFrames = Math.max(1, Math.round((format.sampleRate * (options.maxQueuedMs ?? 5000)) / 1000));
    this.#onOverflow = options.onOverflow;
  }

  get deliveredFrames(): number {
    return this.#delivered;
  }

  /** Frames captured but dropped because the queue was full; delivered + queued + dropped = captured. */
  get droppedFrames(): number {
    return this.#dropped;
  }

  get ended(): boolean {
    return this.#ended;
  }

  push(block: AudioBlock): void {
    if (this.#ended || block.length === 0) return;
    const frames = block.length / this.format.channels;
    if (this.#queuedFrames + frames > this.#maxQueuedFrames) {
      const atFrame = this.#delivered + this.#queuedFrames + this.#dropped;
      this.#dropped += frames;
      this.#onOverflow?.({ frames, atFrame, totalFrames: this.#dropped });
      return;
    }
    this.#queue.push(block);
    this.#queuedFrames += frames;
    this.#wakeUp();
  }

  /** The backend stopped (asked to, at the end of its input, or with a failure). */
  end(error?: unknown): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#error = error;
    this.#resolveEnded();
    this.#wakeUp();
  }

  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (!this.#ended) this.requestStop();
      await this.#endedPromise;
    })();
    return this.#stopping;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<AudioBlock> {
    for (;;) {
      const block = this.#queue.shift();
      if (block !== undefined) {
        this.#queuedFrames -= block.length / this.format.channels;
        this.#delivered += block.length / this.format.channels;
        yield block;
        continue;
      }
      if (this.#ended) {
        if (this.#error !== undefined) throw this.#error;
        return;
      }
      await new Promise<void>((resolve) => (this.#wake = resolve));
    }
  }

  #wakeUp(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }
}
