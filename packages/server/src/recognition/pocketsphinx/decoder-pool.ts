import { RecognizerError } from '../errors.js';
import type { DecoderHandle, ModelPaths, PocketSphinxBinding } from './native.js';

export interface PoolLimits {
  /** Leases (streams) at once; each holds at most one decoder, so also the most decoders loaded. */
  readonly maxDecoders: number;
  /** Decoders kept loaded for the next stream when no stream needs them. */
  readonly maxIdle: number;
  /** Leases one owner (an account) may hold at once, so one account cannot take every slot. */
  readonly maxPerOwner: number;
}

/**
 * The owner of leases opened without one (direct library use, tools, benchmarks): only maxDecoders
 * bounds them. The server always names the account.
 */
const NO_OWNER = '';

/**
 * Decoders cost ~250 ms and ~90 MB each to load (the 134k-word dictionary and the language model are
 * per decoder; libpocketsphinx cannot share them), so the pool bounds them and recycles them:
 *
 *   lease     a stream's slot: reserve() now or RECOGNIZER_BUSY (realtime creation), whenFree()
 *             waits for one (batch), FIFO; at most maxDecoders exist, at most maxPerOwner per owner
 *             (an account): past it reserve() throws RECOGNIZER_ACCOUNT_LIMIT and whenFree() lets
 *             other owners' waiters go first
 *   decoder   a lease loads one only when audio is coming: prepare() on a worker thread, decoder()
 *             at once (an idle one reset, else loaded on the calling thread)
 *   release   the decoder goes back (kept idle up to maxIdle, freed past it), the slot to the
 *             longest waiter
 *
 * A decoder is loaded only when none is idle and each lease holds at most one, so at most maxDecoders
 * are ever loaded, however many sessions exist.
 */
export class DecoderPool {
  private readonly idle: DecoderHandle[] = [];
  private readonly live = new Set<DecoderHandle>();
  private readonly waiters: Array<{ owner: string; resolve: (lease: DecoderLease) => void; reject: (error: unknown) => void }> = [];
  private leases = 0;
  private readonly byOwner = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly binding: PocketSphinxBinding,
    private readonly args: readonly string[],
    private readonly limits: PoolLimits,
  ) {}

  /** Decoders loaded, in use or idle (the benchmark and leak checks read it). */
  get size(): number {
    return this.live.size;
  }

  /** Leases held now (streams open). */
  get leased(): number {
    return this.leases;
  }

  get idleCount(): number {
    return this.idle.length;
  }

  /** Leases one owner holds now. */
  leasedBy(owner: string): number {
    return this.byOwner.get(owner) ?? 0;
  }

  private atOwnerLimit(owner: string): boolean {
    return owner !== NO_OWNER && this.leasedBy(owner) >= this.limits.maxPerOwner;
  }

  /**
   * A slot for one stream now. RecognizerError RECOGNIZER_BUSY when all are taken (checked first: a
   * full pool is busy for everyone), RECOGNIZER_ACCOUNT_LIMIT when this owner holds maxPerOwner.
   */
  reserve(owner: string = NO_OWNER): DecoderLease {
    this.checkOpen();
    if (this.leases >= this.limits.maxDecoders) {
      throw new RecognizerError('RECOGNIZER_BUSY', `all ${this.limits.maxDecoders} PocketSphinx decoders are in use; try again when a session or transcription finishes`);
    }
    if (this.atOwnerLimit(owner)) {
      throw new RecognizerError('RECOGNIZER_ACCOUNT_LIMIT', `this account holds ${this.limits.maxPerOwner} of the ${this.limits.maxDecoders} PocketSphinx decoders, its most at once; finish one of its sessions first`);
    }
    return this.grant(owner);
  }

  /**
   * A slot as soon as one is free for this owner: first come, first served, except that a waiter
   * whose owner is at maxPerOwner lets later waiters of other owners pass. Rejects with
   * RECOGNIZER_CLOSED on close.
   */
  whenFree(owner: string = NO_OWNER): Promise<DecoderLease> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      this.waiters.push({ owner, resolve, reject });
      this.dispatch();
    });
  }

  /** A lease ended: its slot goes to the longest waiter that may take one, else back to the pool. */
  endLease(owner: string): void {
    this.leases = Math.max(0, this.leases - 1);
    const held = this.leasedBy(owner) - 1;
    if (held > 0) this.byOwner.set(owner, held);
    else this.byOwner.delete(owner);
    this.dispatch();
  }

  private grant(owner: string): DecoderLease {
    this.leases += 1;
    this.byOwner.set(owner, this.leasedBy(owner) + 1);
    return new DecoderLease(this, owner);
  }

  private dispatch(): void {
    for (let i = 0; i < this.waiters.length && this.leases < this.limits.maxDecoders; ) {
      const waiter = this.waiters[i] as (typeof this.waiters)[number];
      if (this.atOwnerLimit(waiter.owner)) {
        i += 1;
        continue;
      }
      this.waiters.splice(i, 1);
      waiter.resolve(this.grant(waiter.owner));
    }
  }

  /** A decoder now: an idle one reset, else one loaded on this thread (blocks ~250 ms). */
  take(): DecoderHandle {
    this.checkOpen();
    const reused = this.reuse();
    if (reused !== undefined) return reused;
    let made: DecoderHandle;
    try {
      made = this.binding.create(this.args);
    } catch (cause) {
      throw loadFailed(cause);
    }
    this.live.add(made);
    return made;
  }

  /** A decoder: an idle one reset, else one loaded on a worker thread. */
  async takeAsync(): Promise<DecoderHandle> {
    this.checkOpen();
    const reused = this.reuse();
    if (reused !== undefined) return reused;
    let made: DecoderHandle;
    try {
      made = await this.binding.createAsync(this.args);
    } catch (cause) {
      throw loadFailed(cause);
    }
    if (this.closed) {
      this.binding.free(made);
      throw closedError();
    }
    this.live.add(made);
    return made;
  }

  /** Takes a decoder back: idle for the next stream, or freed. Idempotent. */
  give(handle: DecoderHandle): void {
    if (!this.live.has(handle) || this.idle.includes(handle)) return;
    if (!this.closed && this.idle.length < this.limits.maxIdle) {
      this.idle.push(handle);
      return;
    }
    this.live.delete(handle);
    this.binding.free(handle);
  }

  /** Loads one decoder ahead of the first stream, so a broken model fails at start, not mid-session. */
  warm(): void {
    if (this.idle.length === 0) this.give(this.take());
  }

  /** RecognizerError RECOGNIZER_CLOSED once closed. */
  checkOpen(): void {
    if (this.closed) throw closedError();
  }

  /** Frees every decoder, including those streams hold (their next use throws RECOGNIZER_CLOSED). */
  close(): void {
    this.closed = true;
    for (const handle of this.live) this.binding.free(handle);
    this.live.clear();
    this.idle.length = 0;
    for (const waiter of this.waiters.splice(0)) waiter.reject(closedError());
  }

  private reuse(): DecoderHandle | undefined {
    const handle = this.idle.pop();
    if (handle !== undefined) this.binding.reset(handle);
    return handle;
  }
}

/**
 * One stream's slot in the pool and, once audio is coming, its decoder. release() gives both back and
 * is idempotent; a decoder still loading when the lease ends goes back to the pool when it arrives.
 */
export class DecoderLease {
  private handle: DecoderHandle | undefined;
  private loading: Promise<void> | undefined;
  private ended = false;

  constructor(
    private readonly pool: DecoderPool,
    private readonly owner: string,
  ) {}

  /** The decoder, when one was loaded for this lease. */
  get current(): DecoderHandle | undefined {
    return this.handle;
  }

  /** The decoder, loading one on this thread if prepare() did not (or has not finished). */
  decoder(): DecoderHandle {
    if (this.ended) throw new RecognizerError('RECOGNIZER_CLOSED', 'the recognition stream was closed');
    this.pool.checkOpen();
    this.handle ??= this.pool.take();
    return this.handle;
  }

  /** Loads the decoder on a worker thread; at once when it is there. Rejects with a RecognizerError. */
  prepare(): Promise<void> {
    if (this.ended || this.handle !== undefined) return Promise.resolve();
    this.loading ??= this.pool.takeAsync().then(
      (made) => {
        this.loading = undefined;
        // Closed meanwhile, or decoder() could not wait and loaded its own: this one is spare.
        if (this.ended || this.handle !== undefined) this.pool.give(made);
        else this.handle = made;
      },
      (error: unknown) => {
        this.loading = undefined;
        throw error;
      },
    );
    return this.loading;
  }

  release(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.handle !== undefined) this.pool.give(this.handle);
    this.handle = undefined;
    this.pool.endLease(this.owner);
  }
}

function closedError(): RecognizerError {
  return new RecognizerError('RECOGNIZER_CLOSED', 'the PocketSphinx recognizer was closed');
}

/** A decoder that would not load (the model changed or vanished after start, or memory ran out). */
function loadFailed(cause: unknown): RecognizerError {
  return new RecognizerError('RECOGNIZER_UNAVAILABLE', `PocketSphinx could not load a decoder: ${(cause as Error).message}`, { cause });
}

/**
 * The decoder arguments: Debian's US English model, tuned for speed with honest word posteriors.
 * -logfn, -dither and -seed are the binding's (see native/pocketsphinx-addon.c): decoders load on
 * worker threads and streams run side by side, so neither may touch process-wide state.
 */
export const RESERVED_DECODER_ARGS: readonly string[] = ['-logfn', '-dither', '-seed'];

export function decoderArgs(model: ModelPaths, extra: readonly string[] = []): string[] {
  return [
    '-hmm', model.hmm,
    '-lm', model.lm,
    '-dict', model.dict,
    // The flat-lexicon second pass costs ~25% CPU for no better accuracy on the LibriVox test clips.
    '-fwdflat', 'no',
    // Fewer active HMMs per frame (default 30000): ~30% less CPU, the same words on the LibriVox clips
    // (3000 costs accuracy).
    '-maxhmmpf', '5000',
    // The lattice pass costs ~5% and gives each word a real posterior probability (its confidence).
    '-bestpath', 'yes',
    // sphinxbase's dither draws from one process-wide generator that every stream shares (and used to
    // reseed), so each stream's words depended on the others. Without it the test recordings score as
    // well or better (LibriVox batch WER 0.268 against 0.282; per-stream dither in TypeScript measured
    // no better), and digital silence still decodes: the front end floors the log spectrum.
    '-dither', 'no',
    ...extra,
  ];
}
