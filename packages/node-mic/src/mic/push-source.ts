import type { AudioBlock, AudioFormat, AudioSource } from '../sources/audio-source.js';

/**
 * A live source fed by a capture backend: blocks are queued as they are captured and handed out in
 * order. stop() asks the backend to stop; iteration ends after the last captured block, so
 * deliveredFrames is the exact number of frames captured.
 */
export class PushSource implements AudioSource {
  readonly live = true;
  #queue: AudioBlock[] = [];
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
  ) {
    this.#endedPromise = new Promise((resolve) => (this.#resolveEnded = resolve));
  }

  get deliveredFrames(): number {
    return this.#delivered;
  }

  get ended(): boolean {
    return this.#ended;
  }

  push(block: AudioBlock): void {
    if (this.#ended || block.length === 0) return;
    this.#queue.push(block);
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
