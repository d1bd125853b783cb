/** What push() returns while no frame is complete: one shared empty array, nothing allocated. */
const EMPTY = new Int16Array(0);
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/**
 * Byte chunks (pipes, files, child processes) to whole interleaved PCM16LE frames. A chunk may end
 * in the middle of a sample or a frame; the tail waits for the next chunk, so no byte is dropped or
 * shifted.
 *
 * Allocates one buffer per chunk that completes a frame: the samples it returns, which the caller
 * keeps (the bytes are copied in once, with memcpy: an Int16Array must be aligned, and Buffers from
 * pipes are not), viewed as Int16Array. A chunk that completes no frame allocates nothing: its bytes
 * wait in storage made with the chunker, and push() returns one shared empty array. Big-endian hosts
 * swap each sample's bytes in place.
 */
export class Pcm16Chunker {
  readonly #frameBytes: number;
  /** The bytes of the incomplete frame carried to the next chunk: fewer than one frame. */
  readonly #carry: Uint8Array;
  #carried = 0;

  constructor(channels: number) {
    this.#frameBytes = 2 * channels;
    this.#carry = new Uint8Array(this.#frameBytes);
  }

  /** Whole frames from this chunk plus the carried tail; an empty array when none is complete yet. */
  push(chunk: Uint8Array): Int16Array {
    const carry = this.#carry;
    const carried = this.#carried;
    const total = carried + chunk.length;
    const usable = total - (total % this.#frameBytes);
    if (usable === 0) {
      carry.set(chunk, carried);
      this.#carried = total;
      return EMPTY;
    }
    // usable is at least one frame, more than the carried bytes: every carried byte goes out now.
    const bytes = new Uint8Array(usable);
    bytes.set(carry.subarray(0, carried), 0);
    bytes.set(chunk.subarray(0, usable - carried), carried);
    if (!LITTLE_ENDIAN) swapPairs(bytes);
    const rest = total - usable;
    carry.set(chunk.subarray(chunk.length - rest), 0);
    this.#carried = rest;
    return new Int16Array(bytes.buffer);
  }

  /** Bytes left over at the end of the stream (an incomplete frame). */
  get pendingBytes(): number {
    return this.#carried;
  }
}

/** Little-endian sample bytes to the host's order, in place (big-endian hosts only). */
function swapPairs(bytes: Uint8Array): void {
  for (let b = 0; b < bytes.length; b += 2) {
    const low = bytes[b]!;
    bytes[b] = bytes[b + 1]!;
    bytes[b + 1] = low;
  }
}
