/**
 * The ring's public shapes (options, the cross-thread handle, segment descriptions, views) and the
 * package-internal region option, apart from the ring itself so that code describing ring storage
 * does not need the class.
 */
export type SampleKind = 'float32' | 'int16';
export type SampleArrayOf<K extends SampleKind> = K extends 'int16' ? Int16Array : Float32Array;

export interface SampleRingOptions<K extends SampleKind = SampleKind> {
  kind: K;
  /** Samples the ring holds, an integer in 1..2^30. */
  capacity: number;
  /** Allocate a SharedArrayBuffer so that another thread can attach(). Default false. */
  shared?: boolean;
  /**
   * Keep data after it is read until release(position) says so, so that it can be read again with
   * rewind() or peek() (a realtime client resends what the server has not acknowledged). Default
   * false: data is released as soon as it is read.
   */
  retain?: boolean;
  /**
   * Absolute position every cursor starts at, a safe integer. Default 0. A client resuming a stream
   * at a server offset starts there; tests use it to cross 2^32 without writing 2^32 samples.
   */
  startPosition?: number;
}

/** What another thread needs to attach to a ring; structured-cloneable (postMessage it). */
export interface SampleRingHandle<K extends SampleKind = SampleKind> {
  readonly kind: K;
  readonly capacity: number;
  readonly retain: boolean;
  /** Control words followed by the samples; see ring-control.ts for the layout. */
  readonly buffer: ArrayBuffer | SharedArrayBuffer;
  /** Where the ring starts in `buffer` when it is part of a larger one (RING_REGION); absent otherwise. */
  readonly byteOffset?: number;
}

/**
 * A reusable description of up to two runs of ring storage, filled by readSegments() and
 * writeSegments(). The run starting at `position` is storage[firstStart, firstStart + firstLength)
 * followed, at the wrap, by storage[secondStart, secondStart + secondLength) with secondStart = 0.
 */
export class RingSegments<K extends SampleKind = SampleKind> {
  /** The ring's whole storage; index with the starts below. An empty array until first filled. */
  storage: SampleArrayOf<K>;
  /** Absolute position of the first sample described. */
  position = 0;
  firstStart = 0;
  firstLength = 0;
  secondStart = 0;
  secondLength = 0;

  constructor(storage?: SampleArrayOf<K>) {
    this.storage = storage ?? (EMPTY_FLOAT32 as SampleArrayOf<K>);
  }

  /** firstLength + secondLength. */
  get length(): number {
    return this.firstLength + this.secondLength;
  }
}

/** Views returned by readViews(); `second` is empty unless the data wraps. */
export interface RingViews<K extends SampleKind = SampleKind> {
  readonly first: SampleArrayOf<K>;
  readonly second: SampleArrayOf<K>;
  /** Absolute position of first[0]. */
  readonly position: number;
}

export const EMPTY_FLOAT32 = new Float32Array(0);
export const EMPTY_INT16 = new Int16Array(0);

/**
 * Package-internal option (not exported by the package): build a new, non-shared ring inside
 * `buffer` from `byteOffset` (a multiple of 4) instead of allocating one, so that its storage can
 * share a buffer with other data. SampleRing.attach() builds a handle's ring with it when the handle
 * names a byteOffset.
 */
export const RING_REGION = Symbol('ring region');

export interface RingRegion {
  readonly buffer: ArrayBuffer;
  readonly byteOffset: number;
}
