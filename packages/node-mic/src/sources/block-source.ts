import type { AudioBlock, AudioFormat, AudioSource } from './audio-source.js';

export interface BlockSourceOptions {
  /** Aborting stops the source like stop(). */
  readonly signal?: AbortSignal;
}

/**
 * A source over blocks read as fast as they are asked for (files, pipes). One iteration only: the
 * blocks are consumed. stop() ends it at the next block boundary, so deliveredFrames counts exactly
 * the blocks handed out.
 */
export class BlockSource implements AudioSource {
  readonly live: boolean = false;
  #delivered = 0;
  #stopped = false;
  #iterated = false;
  readonly #blocks: Iterable<AudioBlock> | AsyncIterable<AudioBlock>;
  readonly #release: (() => void) | undefined;

  /** `release` frees what the blocks hold (an open file) when the source stops without being read to its end. */
  constructor(
    readonly label: string,
    readonly format: AudioFormat,
    blocks: Iterable<AudioBlock> | AsyncIterable<AudioBlock>,
    options: BlockSourceOptions = {},
    release?: () => void,
  ) {
    this.#blocks = blocks;
    this.#release = release;
    options.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    if (options.signal?.aborted === true) this.#stopped = true;
  }

  get deliveredFrames(): number {
    return this.#delivered;
  }

  async stop(): Promise<void> {
    if (this.#stopped) return;
    this.#stopped = true;
    // Never iterated: nothing will leave a for-await over the blocks, so nothing else frees them.
    if (!this.#iterated) this.#release?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<AudioBlock> {
    if (this.#iterated) throw new TypeError(`${this.label}: a source can be iterated once`);
    this.#iterated = true;
    // Stopped before the first block: the blocks are not started (a released file is not read).
    if (this.#stopped) return;
    for await (const block of this.#blocks) {
      if (this.#stopped) return;
      if (block.length === 0) continue;
      this.#delivered += block.length / this.format.channels;
      yield block;
    }
  }
}
