import { LITTLE_ENDIAN_HOST } from './pcm16.js';
import { FRAME, encodeFrameHeader } from '../protocol.js';

/**
 * One socket-ready frame: the 16-byte header (magic, version, epoch, start sample: docs/protocol.md
 * "Binary audio frames") then PCM16 little-endian, 16 kHz mono.
 */
export interface EncodedFrame {
  /** Header and payload; exactly the message to send. The payload is `bytes.subarray(FrameEncoder.headerBytes)`. */
  readonly bytes: Uint8Array;
  /** First sample: what the header says (a session's frames carry the server's positions). */
  readonly startSample: number;
  /** Samples in the payload: a whole frame, or fewer for the last one of a stream or a segment. */
  readonly sampleCount: number;
}

interface SlotFrame {
  bytes: Uint8Array;
  startSample: number;
  sampleCount: number;
}

/** Where a store's bytes live: the resampler's wasm memory (so its kernel writes into them), or its own buffer. */
export interface SlotRegion {
  readonly buffer: ArrayBufferLike;
  readonly byteOffset: number;
}

/**
 * The encoded audio of a FrameEncoder, stored frame-shaped: `count` slots side by side, each 16 bytes of
 * header room then one frame of PCM16. The encoder writes the 16 kHz samples straight into the slots'
 * payloads (the resampler's kernel through writeRuns(), PCM16 writers through writeSamples()); a slot
 * that is full, or sealed by a short frame (pause, finish), gets its header written in place and its
 * bytes go to send() as they are. So the frame is the retained copy: nothing is copied between the
 * encoder's output and the socket.
 *
 *   slot:  [ header 16 B | payload frameSamples × int16 ]  [ header | payload ] …   (a circle of `count`)
 *          ▲ release (oldest kept)        ▲ the open slot takes the next samples
 *
 * Positions are captured positions. The slots kept are contiguous: each holds [start, start + length),
 * the next starts where it ends. A slot is opened when the first sample lands in it; a short frame
 * seals its slot (the header of the next frame needs room in front of its first sample, so the audio
 * after a pause starts a fresh slot; the rest of the sealed one stays unused until it comes round).
 *
 * Slots are freed only in whole: release(position) frees the slots that end at or before it, so a
 * server cursor inside a slot keeps that slot. Resending from such a cursor (rare: frames go out
 * whole, so the server's cursor is normally at a slot boundary) builds one fresh frame for the rest
 * of that slot; every frame after it is a slot again. When the slots run out, dropOldest() frees the
 * oldest whole slot; the outbox declares what it held as a gap if the server never got it.
 *
 * A slot is overwritten only after it was released (in a session, once the server acknowledged it:
 * bytes a WebSocket may still hold by reference after send() are safe then, see realtime/audio-outbox.ts)
 * or dropped by an overflow.
 *
 * Big-endian hosts: the encoder writes native int16; a slot's payload is turned to little-endian in
 * place when it first goes out as a frame (it takes no more samples then), and read back accordingly.
 *
 * Garbage: everything is made in the constructor (the views and frame object of every slot). A short
 * frame (a subarray view) and a frame from a cursor inside a slot (a fresh buffer) allocate.
 */
export class FrameSlots {
  readonly frameSamples: number;
  readonly count: number;
  readonly slotBytes: number;
  /** Every slot's memory as int16: the encoder's output array (writeRuns() says where). */
  readonly samples: Int16Array;
  readonly #bytes: Uint8Array;
  readonly #view: DataView;
  readonly #full: Uint8Array[] = [];
  readonly #frames: SlotFrame[] = [];
  readonly #start: Float64Array;
  readonly #length: Int32Array;
  readonly #sealed: Uint8Array;
  /** Big-endian hosts: the payload was turned to wire order. */
  readonly #wire: Uint8Array;
  #head = 0;
  #used = 0;
  #write: number;

  static byteLengthFor(frameSamples: number, count: number): number {
    return count * (FRAME.headerBytes + frameSamples * FRAME.bytesPerSample);
  }

  constructor(frameSamples: number, count: number, startPosition: number, region?: SlotRegion) {
    this.frameSamples = frameSamples;
    this.count = count;
    // 16 + 2·frameSamples: a multiple of 4 for any even frame, so every payload is int32-aligned.
    this.slotBytes = FRAME.headerBytes + frameSamples * FRAME.bytesPerSample;
    const byteLength = FrameSlots.byteLengthFor(frameSamples, count);
    const buffer = region?.buffer ?? new ArrayBuffer(byteLength);
    const byteOffset = region?.byteOffset ?? 0;
    this.#bytes = new Uint8Array(buffer, byteOffset, byteLength);
    this.#view = new DataView(buffer, byteOffset, byteLength);
    this.samples = new Int16Array(buffer, byteOffset, byteLength >> 1);
    for (let i = 0; i < count; i++) {
      const full = this.#bytes.subarray(i * this.slotBytes, (i + 1) * this.slotBytes);
      this.#full.push(full);
      this.#frames.push({ bytes: full, startSample: 0, sampleCount: 0 });
    }
    this.#start = new Float64Array(count);
    this.#length = new Int32Array(count);
    this.#sealed = new Uint8Array(count);
    this.#wire = new Uint8Array(count);
    this.#write = startPosition;
  }

  /** Samples the slots can hold. */
  get capacity(): number {
    return this.count * this.frameSamples;
  }

  /** Start of the oldest sample kept. */
  get releaseCursor(): number {
    return this.#used > 0 ? this.#start[this.#head]! : this.#write;
  }

  /** Just past the last sample written. */
  get writeCursor(): number {
    return this.#write;
  }

  /** Samples that can be written before the oldest slot must go: the open slot's rest and every free slot. */
  room(): number {
    return this.#openRoom() + (this.count - this.#used) * this.frameSamples;
  }

  /** Frees the oldest slot whatever it holds; returns the samples it held (0 when none is kept). */
  dropOldest(): number {
    if (this.#used === 0) return 0;
    const n = this.#length[this.#head]!;
    this.#head = this.#next(this.#head);
    this.#used--;
    return n;
  }

  /** Frees every slot that ends at or before `position` (the server has it all). */
  release(position: number): void {
    while (this.#used > 0) {
      const head = this.#head;
      const end = this.#start[head]! + this.#length[head]!;
      // The open slot may still take samples: it goes only once sealed or full.
      if (end > position || (this.#used === 1 && this.#openRoom() > 0)) return;
      this.#head = this.#next(head);
      this.#used--;
    }
  }

  /**
   * Describes where the next `n` samples go, as (start, length) pairs in `samples`, into `runs`;
   * returns how many pairs. n must be at most room(). Then commit(n).
   */
  writeRuns(n: number, runs: Int32Array): number {
    let r = 0;
    let left = n;
    const open = this.#openRoom();
    if (open > 0 && left > 0) {
      const tail = this.#tail();
      const take = Math.min(open, left);
      runs[0] = this.#payloadIndex(tail) + this.#length[tail]!;
      runs[1] = take;
      r = 1;
      left -= take;
    }
    let slot = this.#used > 0 ? this.#next(this.#tail()) : this.#head;
    while (left > 0) {
      const take = Math.min(this.frameSamples, left);
      runs[2 * r] = this.#payloadIndex(slot);
      runs[2 * r + 1] = take;
      r++;
      left -= take;
      slot = this.#next(slot);
    }
    return r;
  }

  /** The most pairs writeRuns() can describe: size the runs array with it (2 Int32 per pair). */
  maxRunsFor(n: number): number {
    return Math.ceil(n / this.frameSamples) + 1;
  }

  /** Makes the `n` samples written where writeRuns(n) said part of the stream. */
  commit(n: number): void {
    let left = n;
    const open = this.#openRoom();
    if (open > 0 && left > 0) {
      const take = Math.min(open, left);
      this.#length[this.#tail()]! += take;
      left -= take;
    }
    this.#write += n - left;
    while (left > 0) {
      const take = Math.min(this.frameSamples, left);
      const slot = this.#used > 0 ? this.#next(this.#tail()) : this.#head;
      this.#start[slot] = this.#write;
      this.#length[slot] = take;
      this.#sealed[slot] = 0;
      this.#wire[slot] = 0;
      this.#used++;
      this.#write += take;
      left -= take;
    }
  }

  /** Copies src[at, at + n) in (PCM16 that needs no encoding); n at most room(). */
  writeSamples(src: Int16Array, at: number, n: number, runs: Int32Array): void {
    const count = this.writeRuns(n, runs);
    const samples = this.samples;
    let from = at;
    for (let r = 0; r < count; r++) {
      const to = runs[2 * r]!;
      const length = runs[2 * r + 1]!;
      for (let i = 0; i < length; i++) samples[to + i] = src[from + i]!;
      from += length;
    }
    this.commit(n);
  }

  /**
   * The frame from captured `position` to the end of its slot, headed (epoch, `serverStart`); null when
   * that slot is still filling (or nothing is there) unless `allowShort`, which seals it and sends what
   * it holds. `position` must be at least releaseCursor. The frame's bytes stay untouched until the
   * slot is released or dropped. `maxSamples` cuts the frame short where the stream must break inside
   * a slot (skipped time follows, or audio not decided yet): such a frame is built apart (one fresh
   * buffer) and the slot stays as it is, open or not.
   */
  frame(position: number, epoch: number, serverStart: number, allowShort: boolean, maxSamples = Number.POSITIVE_INFINITY): EncodedFrame | null {
    if (position >= this.#write) return null;
    const slot = this.#find(position);
    const start = this.#start[slot]!;
    const length = this.#length[slot]!;
    if (maxSamples < start + length - position) {
      return maxSamples < 1 ? null : this.#fresh(slot, position - start, maxSamples, epoch, serverStart);
    }
    if (length < this.frameSamples && this.#sealed[slot] === 0) {
      if (!allowShort) return null;
      this.#sealed[slot] = 1;
    }
    const sampleCount = start + length - position;
    if (position !== start) return this.#fresh(slot, position - start, sampleCount, epoch, serverStart);
    if (!LITTLE_ENDIAN_HOST && this.#wire[slot] === 0) {
      swapPayload(this.#bytes, slot * this.slotBytes + FRAME.headerBytes, length);
      this.#wire[slot] = 1;
    }
    encodeFrameHeader(this.#view, slot * this.slotBytes, epoch, serverStart);
    const frame = this.#frames[slot]!;
    const full = this.#full[slot]!;
    frame.bytes = length === this.frameSamples ? full : full.subarray(0, FRAME.headerBytes + length * FRAME.bytesPerSample);
    frame.startSample = serverStart;
    frame.sampleCount = sampleCount;
    return frame;
  }

  /** Copies the kept samples [from, from + out.length) into `out` (native int16); returns how many were there. */
  peek(from: number, out: Int16Array, outOffset = 0, n = out.length - outOffset): number {
    let at = Math.max(from, this.releaseCursor);
    const end = Math.min(from + n, this.#write);
    let copied = 0;
    while (at < end) {
      const slot = this.#find(at);
      const offset = at - this.#start[slot]!;
      const take = Math.min(this.#length[slot]! - offset, end - at);
      for (let i = 0; i < take; i++) out[outOffset + (at - from) + i] = this.#sample(slot, offset + i);
      at += take;
      copied += take;
    }
    return copied;
  }

  /**
   * Takes over every slot `other` keeps, as they are (same positions, same bytes, sealed or open):
   * a new resampler's memory replaces the old one's. The oldest whole slots are dropped when this
   * store is smaller; returns the samples dropped. Only on an empty store.
   */
  adopt(other: FrameSlots): number {
    let dropped = 0;
    while (other.#used > this.count) dropped += other.dropOldest();
    this.#write = other.releaseCursor;
    for (let k = 0, from = other.#head; k < other.#used; k++, from = other.#next(from)) {
      const to = k;
      this.#bytes.set(other.#full[from]!, to * this.slotBytes);
      this.#start[to] = other.#start[from]!;
      this.#length[to] = other.#length[from]!;
      this.#sealed[to] = other.#sealed[from]!;
      this.#wire[to] = other.#wire[from]!;
    }
    this.#head = 0;
    this.#used = other.#used;
    this.#write = other.#write;
    return dropped;
  }

  #fresh(slot: number, offset: number, count: number, epoch: number, serverStart: number): EncodedFrame {
    // A server cursor inside a slot: its header cannot go in front of that sample without overwriting
    // audio an earlier frame holds, so this one frame is built apart.
    const bytes = new Uint8Array(FRAME.headerBytes + count * FRAME.bytesPerSample);
    const view = new DataView(bytes.buffer);
    encodeFrameHeader(view, 0, epoch, serverStart);
    for (let i = 0; i < count; i++) view.setInt16(FRAME.headerBytes + 2 * i, this.#sample(slot, offset + i), true);
    return { bytes, startSample: serverStart, sampleCount: count };
  }

  /** Sample `i` of a slot's payload as a native int16, whatever order it is stored in. */
  #sample(slot: number, i: number): number {
    const v = this.samples[this.#payloadIndex(slot) + i]!;
    return this.#wire[slot] === 0 ? v : ((v & 0xff) << 24) >> 16 | ((v >> 8) & 0xff);
  }

  /** The kept slot holding `position` (releaseCursor ≤ position < writeCursor). */
  #find(position: number): number {
    // Slots hold frameSamples each but sealed ones: start from the estimate, walk to the right one.
    let k = Math.min(this.#used - 1, Math.max(0, Math.floor((position - this.releaseCursor) / this.frameSamples)));
    let slot = (this.#head + k) % this.count;
    while (k > 0 && this.#start[slot]! > position) {
      k--;
      slot = slot === 0 ? this.count - 1 : slot - 1;
    }
    while (k < this.#used - 1 && this.#start[slot]! + this.#length[slot]! <= position) {
      k++;
      slot = this.#next(slot);
    }
    return slot;
  }

  #openRoom(): number {
    if (this.#used === 0) return 0;
    const tail = this.#tail();
    return this.#sealed[tail] === 1 ? 0 : this.frameSamples - this.#length[tail]!;
  }

  #tail(): number {
    return (this.#head + this.#used - 1) % this.count;
  }

  #next(slot: number): number {
    return slot + 1 === this.count ? 0 : slot + 1;
  }

  #payloadIndex(slot: number): number {
    return (slot * this.slotBytes + FRAME.headerBytes) >> 1;
  }
}

function swapPayload(bytes: Uint8Array, from: number, samples: number): void {
  for (let b = from, end = from + samples * 2; b < end; b += 2) {
    const low = bytes[b]!;
    bytes[b] = bytes[b + 1]!;
    bytes[b + 1] = low;
  }
}
