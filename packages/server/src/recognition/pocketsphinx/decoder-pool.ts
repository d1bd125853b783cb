import type { DecoderHandle, ModelPaths, PocketSphinxBinding } from './native.js';

/**
 * Decoders cost about half a second and ~100 MB each to load (the 134k-word dictionary and the
 * language model are per decoder; libpocketsphinx cannot share them), so finished streams hand theirs
 * back and the next stream resets one instead of loading another. At most `maxIdle` wait; the rest are
 * freed at once.
 */
export class DecoderPool {
  private readonly idle: DecoderHandle[] = [];
  private readonly live = new Set<DecoderHandle>();
  private closed = false;

  constructor(
    private readonly binding: PocketSphinxBinding,
    private readonly args: readonly string[],
    private readonly maxIdle: number,
  ) {}

  /** Decoders in use or waiting (the benchmark and leak checks read it). */
  get size(): number {
    return this.live.size;
  }

  acquire(): DecoderHandle {
    if (this.closed) throw new Error('the PocketSphinx recognizer was closed');
    const reused = this.idle.pop();
    if (reused !== undefined) {
      this.binding.reset(reused);
      return reused;
    }
    const made = this.binding.create(this.args);
    this.live.add(made);
    return made;
  }

  release(handle: DecoderHandle): void {
    if (!this.live.has(handle) || this.idle.includes(handle)) return;
    if (!this.closed && this.idle.length < this.maxIdle) {
      this.idle.push(handle);
      return;
    }
    this.live.delete(handle);
    this.binding.free(handle);
  }

  /** Loads one decoder ahead of the first stream, so a broken model fails at start, not mid-session. */
  warm(): void {
    if (this.idle.length === 0) this.release(this.acquire());
  }

  /** Frees every decoder, including those streams still hold (their next push throws). */
  close(): void {
    this.closed = true;
    for (const handle of this.live) this.binding.free(handle);
    this.live.clear();
    this.idle.length = 0;
  }
}

/** The decoder arguments: Debian's US English model, tuned for speed with honest word posteriors. */
export function decoderArgs(model: ModelPaths, extra: readonly string[] = []): string[] {
  return [
    '-hmm', model.hmm,
    '-lm', model.lm,
    '-dict', model.dict,
    '-logfn', '/dev/null',
    // The flat-lexicon second pass costs ~25% CPU for no better accuracy on the LibriVox test clips.
    '-fwdflat', 'no',
    // Fewer active HMMs per frame (default 30000): ~30% less CPU, the same words on the LibriVox clips
    // (3000 costs accuracy).
    '-maxhmmpf', '5000',
    // The lattice pass costs ~5% and gives each word a real posterior probability (its confidence).
    '-bestpath', 'yes',
    // Digital silence (all zeros) has no spectrum; one bit of noise keeps the features finite.
    '-dither', 'yes',
    '-seed', '1',
    ...extra,
  ];
}
