import { DspError } from '../errors/dsp-error.js';
import {
  CONTROL_BYTES,
  C_OVERFLOW,
  C_READ,
  C_RELEASE,
  C_WRITE,
  HEADER_MAGIC,
  MAX_POSITION,
  W_CAPACITY,
  W_KIND,
  W_MAGIC,
  W_RETAIN,
  W_START,
  initCounter,
  loadCounter,
  loadLow,
  loadPlain,
  publishCounter,
  publishPlain,
} from './ring-control.js';
import { checkCapacity, checkKind, checkMax, checkPosition, checkSource, checkTarget, copy, isCount, isSharedBuffer } from './ring-checks.js';
import {
  EMPTY_FLOAT32,
  EMPTY_INT16,
  RING_REGION,
  RingSegments,
  type RingRegion,
  type RingViews,
  type SampleArrayOf,
  type SampleKind,
  type SampleRingHandle,
  type SampleRingOptions,
} from './ring-types.js';

export { RING_REGION, RingSegments, type RingRegion, type RingViews, type SampleArrayOf, type SampleKind, type SampleRingHandle, type SampleRingOptions };

const KIND_CODES = { float32: 1, int16: 2 } as const;
const ATTACH = Symbol('attach');

interface AttachOptions<K extends SampleKind> extends SampleRingOptions<K> {
  [ATTACH]: ArrayBuffer | SharedArrayBuffer;
  [RING_REGION]: RingRegion;
}

/**
 * Single-producer single-consumer ring of float32 or int16 samples, over an ArrayBuffer or a
 * SharedArrayBuffer that another thread (a worker, an AudioWorklet) attaches to.
 *
 * Cursors are absolute sample positions, exact up to 2^53: write ≥ read ≥ release, and the producer
 * may fill capacity - (write - release) samples. Without `retain`, release follows read. With it, read
 * data stays until release(position), and rewind()/peek() can read it again.
 *
 * Roles: the object that writes must be the only writer and the object that reads the only reader;
 * one object may do both (single thread). Each side keeps its own cursor exactly and learns the
 * other's from the control block (see ring-control.ts). The producer's methods are write(),
 * writeSegments() and commitWrite(); the consumer's are read(), peek(), readSegments(), readViews(),
 * consume(), release() and rewind(). The cursor getters, overflowSamples, availableToRead() and
 * availableToWrite() answer correctly in any object. A non-shared ring can be attached in the same
 * thread, or in another after transferring its buffer (which detaches it from this object).
 *
 * Runtime conditions are counts: a full ring writes what fits and adds the rest to `overflowSamples`;
 * an empty ring reads 0. Only misuse (wrong array kind, bad offsets, positions out of range) throws
 * DspError.
 *
 * Garbage: the constructor, attach() and createSegments() allocate; readViews() allocates two
 * views and its result object; misuse allocates its DspError. Everything else, including the cursor
 * getters, allocates nothing.
 */
export class SampleRing<K extends SampleKind = SampleKind> {
  readonly kind: K;
  readonly capacity: number;
  readonly retain: boolean;
  readonly shared: boolean;
  /** Post this to another thread and call SampleRing.attach() there. */
  readonly handle: SampleRingHandle<K>;
  /** All the samples: position p lives at storage[p mod capacity]. */
  readonly storage: SampleArrayOf<K>;

  readonly #ctl: Int32Array;
  readonly #ArrayType: Float32ArrayConstructor | Int16ArrayConstructor;
  readonly #empty: SampleArrayOf<K>;
  readonly #startPosition: number;
  // Producer side: exact in the object that writes.
  #write: number;
  #writeIndex: number;
  #overflow: number;
  // Consumer side: exact in the object that reads.
  #read: number;
  #readIndex: number;
  #release: number;

  /** Bytes of the buffer behind a ring: control block plus samples. */
  static byteLengthFor(kind: SampleKind, capacity: number): number {
    checkKind(kind);
    checkCapacity(capacity);
    return CONTROL_BYTES + capacity * (kind === 'int16' ? 2 : 4);
  }

  /** A second ring object over the buffer of `handle`, typically in another thread. */
  static attach<K extends SampleKind>(handle: SampleRingHandle<K>): SampleRing<K> {
    if (typeof handle !== 'object' || handle === null) {
      throw new DspError('DSP_INVALID_BUFFER', 'SampleRing.attach() needs a SampleRing handle object');
    }
    const { kind, capacity, retain, buffer, byteOffset } = handle;
    checkKind(kind);
    checkCapacity(capacity);
    if (typeof retain !== 'boolean') throw new DspError('DSP_INVALID_BUFFER', 'handle.retain must be a boolean');
    if (!(buffer instanceof ArrayBuffer) && !isSharedBuffer(buffer)) {
      throw new DspError('DSP_INVALID_BUFFER', 'handle.buffer must be an ArrayBuffer or a SharedArrayBuffer');
    }
    if (byteOffset !== undefined && (!Number.isInteger(byteOffset) || byteOffset < 0 || byteOffset % 4 !== 0)) {
      throw new DspError('DSP_INVALID_BUFFER', 'handle.byteOffset must be a non-negative multiple of 4');
    }
    const options: Partial<AttachOptions<K>> = { kind, capacity, retain, [ATTACH]: buffer };
    if (byteOffset !== undefined) options[RING_REGION] = { buffer: buffer as ArrayBuffer, byteOffset };
    return new SampleRing<K>(options as SampleRingOptions<K>);
  }

  constructor(options: SampleRingOptions<K>) {
    if (typeof options !== 'object' || options === null) {
      throw new DspError('DSP_INVALID_OPTION', 'SampleRing options must be an object');
    }
    const { kind, capacity } = options;
    checkKind(kind);
    checkCapacity(capacity);
    const byteLength = SampleRing.byteLengthFor(kind, capacity);
    const attached = (options as Partial<AttachOptions<K>>)[ATTACH];
    const region = (options as Partial<AttachOptions<K>>)[RING_REGION];
    const byteOffset = region === undefined ? 0 : region.byteOffset;

    let buffer: ArrayBuffer | SharedArrayBuffer;
    let retain: boolean;
    if (region !== undefined) {
      const fits = Number.isInteger(byteOffset) && byteOffset >= 0 && byteOffset % 4 === 0 &&
        region.buffer.byteLength - byteOffset >= byteLength;
      if (!fits) {
        throw new DspError('DSP_INVALID_BUFFER', `a ${kind} ring of capacity ${capacity} does not fit at byte ${byteOffset} of ${region.buffer.byteLength}`);
      }
    }
    if (attached === undefined) {
      const { shared = false, startPosition = 0 } = options;
      retain = options.retain ?? false;
      if (typeof shared !== 'boolean') throw new DspError('DSP_INVALID_OPTION', 'shared must be a boolean');
      if (typeof retain !== 'boolean') throw new DspError('DSP_INVALID_OPTION', 'retain must be a boolean');
      checkPosition(startPosition, 'startPosition');
      if (shared && typeof SharedArrayBuffer !== 'function') {
        throw new DspError(
          'DSP_INVALID_OPTION',
          'shared: true needs SharedArrayBuffer, which browsers only provide to cross-origin isolated pages',
        );
      }
      if (region !== undefined) {
        if (shared || !(region.buffer instanceof ArrayBuffer)) {
          throw new DspError('DSP_INVALID_OPTION', 'a ring in a region of another buffer cannot be shared');
        }
        buffer = region.buffer;
      } else {
        buffer = shared ? new SharedArrayBuffer(byteLength) : new ArrayBuffer(byteLength);
      }
    } else {
      buffer = attached;
      retain = options.retain === true;
      if (region === undefined && buffer.byteLength !== byteLength) {
        throw new DspError(
          'DSP_INVALID_BUFFER',
          `buffer is ${buffer.byteLength} bytes, a ${kind} ring of capacity ${capacity} needs ${byteLength}`,
        );
      }
    }

    this.kind = kind;
    this.capacity = capacity;
    this.retain = retain;
    this.shared = isSharedBuffer(buffer);
    this.handle = Object.freeze(region === undefined ? { kind, capacity, retain, buffer } : { kind, capacity, retain, buffer, byteOffset });
    this.#ctl = new Int32Array(buffer, byteOffset, CONTROL_BYTES >> 2);
    if (kind === 'int16') {
      this.storage = new Int16Array(buffer, byteOffset + CONTROL_BYTES, capacity) as SampleArrayOf<K>;
      this.#ArrayType = Int16Array;
      this.#empty = EMPTY_INT16 as SampleArrayOf<K>;
    } else {
      this.storage = new Float32Array(buffer, byteOffset + CONTROL_BYTES, capacity) as SampleArrayOf<K>;
      this.#ArrayType = Float32Array;
      this.#empty = EMPTY_FLOAT32 as SampleArrayOf<K>;
    }

    const ctl = this.#ctl;
    if (attached === undefined) {
      const start = options.startPosition ?? 0;
      ctl[W_MAGIC] = HEADER_MAGIC;
      ctl[W_KIND] = KIND_CODES[kind];
      ctl[W_CAPACITY] = capacity;
      ctl[W_RETAIN] = retain ? 1 : 0;
      initCounter(ctl, C_WRITE, start);
      initCounter(ctl, C_READ, start);
      initCounter(ctl, C_RELEASE, start);
      initCounter(ctl, C_OVERFLOW, 0);
      initCounter(ctl, W_START, start);
    } else {
      if (
        Atomics.load(ctl, W_MAGIC) !== HEADER_MAGIC ||
        Atomics.load(ctl, W_KIND) !== KIND_CODES[kind] ||
        Atomics.load(ctl, W_CAPACITY) !== capacity ||
        Atomics.load(ctl, W_RETAIN) !== (retain ? 1 : 0)
      ) {
        throw new DspError('DSP_INVALID_BUFFER', 'buffer does not hold a SampleRing matching the handle');
      }
    }
    this.#startPosition = loadCounter(ctl, W_START);
    this.#release = loadCounter(ctl, C_RELEASE);
    this.#read = loadCounter(ctl, C_READ);
    this.#write = loadCounter(ctl, C_WRITE);
    this.#overflow = loadCounter(ctl, C_OVERFLOW);
    this.#readIndex = this.#read % capacity;
    this.#writeIndex = this.#write % capacity;
  }

  /** The write cursor as last published by the producer: the position the next write goes to. */
  get writeCursor(): number {
    return this.shared ? loadCounter(this.#ctl, C_WRITE) : loadPlain(this.#ctl, C_WRITE);
  }

  /** The read cursor as last published by the consumer: the position the next read starts at. */
  get readCursor(): number {
    return this.shared ? loadCounter(this.#ctl, C_READ) : loadPlain(this.#ctl, C_READ);
  }

  /** Everything before this position may be overwritten; read ≥ release. */
  get releaseCursor(): number {
    return this.shared ? loadCounter(this.#ctl, C_RELEASE) : loadPlain(this.#ctl, C_RELEASE);
  }

  /**
   * Samples offered to write()/commitWrite() that did not fit, since construction or reset(). Exact.
   * Published before the write cursor, so a consumer that has read a write's samples sees its overflow.
   */
  get overflowSamples(): number {
    return this.shared ? loadCounter(this.#ctl, C_OVERFLOW) : loadPlain(this.#ctl, C_OVERFLOW);
  }

  /**
   * Unread samples, write - read, from the published cursors: exact on either side (each side's own
   * cursor cannot move while it asks), a snapshot clamped to [0, capacity] from a third thread.
   */
  availableToRead(): number {
    const ctl = this.#ctl;
    const n = this.shared ? (loadLow(ctl, C_WRITE) - loadLow(ctl, C_READ)) >>> 0 : (ctl[C_WRITE] - ctl[C_READ]) >>> 0;
    return n < this.capacity ? n : this.capacity;
  }

  /**
   * Samples a write would take now, capacity - (write - release), from the published cursors: exact
   * on either side, a snapshot clamped to [0, capacity] from a third thread.
   */
  availableToWrite(): number {
    const ctl = this.#ctl;
    const release = this.shared ? loadLow(ctl, C_RELEASE) : ctl[C_RELEASE];
    const write = this.shared ? loadCounter(ctl, C_WRITE) : loadPlain(ctl, C_WRITE);
    const used = ((write | 0) - release) >>> 0;
    const free = used < this.capacity ? this.capacity - used : 0;
    const room = MAX_POSITION - write;
    return free < room ? free : room;
  }

  /**
   * Producer side: copies src[srcOffset, srcOffset + count) in, as much as fits. Returns the number
   * written; the rest is added to overflowSamples.
   */
  write(src: SampleArrayOf<K>, srcOffset = 0, count: number = src.length - srcOffset): number {
    this.#checkArray(src);
    checkSource(src.length, srcOffset, count);
    const free = this.#free();
    const n = count < free ? count : free;
    if (n < count) this.#addOverflow(count - n);
    if (n > 0) {
      const at = this.#writeIndex;
      const first = n < this.capacity - at ? n : this.capacity - at;
      copy(src, srcOffset, this.storage, at, first);
      if (first < n) copy(src, srcOffset + first, this.storage, 0, n - first);
      this.#advanceWrite(n);
    }
    return n;
  }

  /**
   * Producer side, zero copy: describes up to `max` free samples starting at the write cursor, for
   * the caller to fill in place (an encoder writing straight into the ring). Then commitWrite().
   */
  writeSegments(max: number, into: RingSegments<K>): number {
    checkMax(max);
    const free = this.#free();
    const n = max < free ? max : free;
    return this.#describe(into, this.#write, this.#writeIndex, n);
  }

  /**
   * Producer side: publishes `count` samples filled after writeSegments(), and adds `overflow`
   * samples the caller had to drop to overflowSamples.
   */
  commitWrite(count: number, overflow = 0): void {
    if (!isCount(count) || count > this.#free()) {
      throw new DspError('DSP_INVALID_OPTION', `commitWrite(${count}) exceeds the free space described by writeSegments()`);
    }
    if (!isCount(overflow)) throw new DspError('DSP_INVALID_OPTION', 'overflow must be a non-negative integer');
    if (overflow > 0) this.#addOverflow(overflow);
    if (count > 0) this.#advanceWrite(count);
  }

  /** Consumer side: copies up to `count` unread samples into dst at dstOffset and advances read. */
  read(dst: SampleArrayOf<K>, dstOffset = 0, count: number = dst.length - dstOffset): number {
    this.#checkArray(dst);
    checkTarget(dst.length, dstOffset, count);
    const available = this.#available();
    const n = count < available ? count : available;
    if (n > 0) {
      this.#copyOut(this.#readIndex, dst, dstOffset, n);
      this.#advanceRead(n);
    }
    return n;
  }

  /**
   * Consumer side: copies up to `count` samples starting at absolute `fromPosition` (retained or
   * unread, so fromPosition ≥ releaseCursor) into dst, moving no cursor. Returns the number copied,
   * 0 when fromPosition is at or past the write cursor.
   */
  peek(dst: SampleArrayOf<K>, fromPosition: number, count: number, dstOffset = 0): number {
    this.#checkArray(dst);
    checkTarget(dst.length, dstOffset, count);
    checkPosition(fromPosition, 'fromPosition');
    if (fromPosition < this.#release) {
      throw new DspError('DSP_INVALID_OPTION', `peek from ${fromPosition}, before the release cursor ${this.#release}`);
    }
    const write = this.#read + this.#available();
    if (fromPosition >= write) return 0;
    const n = count < write - fromPosition ? count : write - fromPosition;
    if (n > 0) this.#copyOut(fromPosition % this.capacity, dst, dstOffset, n);
    return n;
  }

  /**
   * Consumer side, zero copy: describes up to `max` unread samples from the read cursor. The storage
   * stays valid until it is released (at once on consume() unless `retain`). Then consume().
   */
  readSegments(max: number, into: RingSegments<K>): number {
    checkMax(max);
    const available = this.#available();
    const n = max < available ? max : available;
    return this.#describe(into, this.#read, this.#readIndex, n);
  }

  /**
   * Like readSegments() but returns subarray views. Allocates two views and the result object per
   * call: convenient off the audio thread, use readSegments() on it. Then consume().
   */
  readViews(max = Infinity): RingViews<K> {
    checkMax(max);
    const available = this.#available();
    const n = max < available ? max : available;
    const at = this.#readIndex;
    const first = n < this.capacity - at ? n : this.capacity - at;
    const storage = this.storage;
    return {
      first: storage.subarray(at, at + first) as SampleArrayOf<K>,
      second: first < n ? (storage.subarray(0, n - first) as SampleArrayOf<K>) : this.#empty,
      position: this.#read,
    };
  }

  /** Consumer side: advances the read cursor by `count` ≤ availableToRead() (after readSegments()). */
  consume(count: number): void {
    if (!isCount(count) || count > this.#available()) {
      throw new DspError('DSP_INVALID_OPTION', `consume(${count}) exceeds the ${this.#available()} samples available`);
    }
    if (count > 0) this.#advanceRead(count);
  }

  /**
   * Consumer side: lets the producer overwrite everything before `position`. Positions at or before
   * the release cursor are ignored (acknowledgements may repeat); a position past the read cursor
   * also moves read there, since there is no point reading what the other end already has.
   */
  release(position: number): void {
    checkPosition(position, 'position');
    if (position <= this.#release) return;
    const write = this.#read + this.#available();
    if (position > write) {
      throw new DspError('DSP_INVALID_OPTION', `release(${position}) is past the write cursor ${write}`);
    }
    if (position > this.#read) this.#moveRead(position);
    this.#publish(C_RELEASE, this.#release, position);
    this.#release = position;
  }

  /**
   * Consumer side: moves the read cursor to `position`, anywhere in [releaseCursor, writeCursor]:
   * back to read retained data again (resend after a reconnect), or forward to skip.
   */
  rewind(position: number): void {
    checkPosition(position, 'position');
    const write = this.#read + this.#available();
    if (position < this.#release || position > write) {
      throw new DspError('DSP_INVALID_OPTION', `rewind(${position}) is outside [${this.#release}, ${write}]`);
    }
    this.#moveRead(position);
    if (!this.retain && position > this.#release) {
      this.#publish(C_RELEASE, this.#release, position);
      this.#release = position;
    }
  }

  /** A RingSegments bound to this ring's storage, to reuse across calls. */
  createSegments(): RingSegments<K> {
    return new RingSegments<K>(this.storage);
  }

  /**
   * Empties the ring, zeroes overflowSamples and moves every cursor to `position` (default: the
   * construction startPosition). Only for non-shared rings: with two threads there is no moment at
   * which one side may move the other's cursor. Other objects over the same buffer must re-attach.
   */
  reset(position: number = this.#startPosition): void {
    if (this.shared) {
      throw new DspError('DSP_INVALID_STATE', 'reset() is not available on a shared ring; create a new ring instead');
    }
    checkPosition(position, 'position');
    const ctl = this.#ctl;
    initCounter(ctl, C_WRITE, position);
    initCounter(ctl, C_READ, position);
    initCounter(ctl, C_RELEASE, position);
    initCounter(ctl, C_OVERFLOW, 0);
    this.#write = this.#read = this.#release = position;
    this.#writeIndex = this.#readIndex = position % this.capacity;
    this.#overflow = 0;
  }

  // Memory ordering, when shared: the producer stores samples, then publishes the write cursor with
  // Atomics.store; the consumer Atomics.loads the write cursor before touching those samples, so it
  // never sees a slot before its data. In the other direction the consumer reads samples, then
  // publishes the release cursor; the producer loads it before overwriting, so it never overwrites a
  // slot still being read. Plain typed-array accesses are ordered by these seq-cst atomics alone.
  // Not shared: one thread, nothing to order, so plain loads and stores of the same words.

  /** Publishes one of this side's counters; `previous` is its current value. */
  #publish(at: number, previous: number, next: number): void {
    if (this.shared) publishCounter(this.#ctl, at, previous, next);
    else publishPlain(this.#ctl, at, next);
  }

  /** Consumer side, from its own exact read cursor. */
  #available(): number {
    const write = this.shared ? loadLow(this.#ctl, C_WRITE) : this.#ctl[C_WRITE];
    return (write - (this.#read | 0)) >>> 0;
  }

  /** Producer side, from its own exact write cursor. */
  #free(): number {
    const release = this.shared ? loadLow(this.#ctl, C_RELEASE) : this.#ctl[C_RELEASE];
    const used = ((this.#write | 0) - release) >>> 0;
    const free = this.capacity - used;
    const room = MAX_POSITION - this.#write;
    return free < room ? free : room;
  }

  #advanceWrite(n: number): void {
    const previous = this.#write;
    this.#write = previous + n;
    const index = this.#writeIndex + n;
    this.#writeIndex = index >= this.capacity ? index - this.capacity : index;
    this.#publish(C_WRITE, previous, previous + n);
  }

  #addOverflow(n: number): void {
    const previous = this.#overflow;
    this.#overflow = previous + n;
    this.#publish(C_OVERFLOW, previous, previous + n);
  }

  #advanceRead(n: number): void {
    const previous = this.#read;
    const next = previous + n;
    this.#read = next;
    const index = this.#readIndex + n;
    this.#readIndex = index >= this.capacity ? index - this.capacity : index;
    this.#publish(C_READ, previous, next);
    if (!this.retain) {
      this.#publish(C_RELEASE, this.#release, next);
      this.#release = next;
    }
  }

  #moveRead(position: number): void {
    this.#publish(C_READ, this.#read, position);
    this.#read = position;
    this.#readIndex = position % this.capacity;
  }

  #copyOut(at: number, dst: SampleArrayOf<K>, dstOffset: number, n: number): void {
    const first = n < this.capacity - at ? n : this.capacity - at;
    copy(this.storage, at, dst, dstOffset, first);
    if (first < n) copy(this.storage, 0, dst, dstOffset + first, n - first);
  }

  #describe(into: RingSegments<K>, position: number, at: number, n: number): number {
    const first = n < this.capacity - at ? n : this.capacity - at;
    into.storage = this.storage;
    into.position = position;
    into.firstStart = at;
    into.firstLength = first;
    into.secondStart = 0;
    into.secondLength = n - first;
    return n;
  }

  #checkArray(array: unknown): void {
    if (!(array instanceof this.#ArrayType)) {
      throw new DspError('DSP_INVALID_BUFFER', `a ${this.kind} ring reads and writes ${this.#ArrayType.name}s`);
    }
  }
}
