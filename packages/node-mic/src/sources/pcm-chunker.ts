/**
 * Byte chunks (pipes, files, child processes) to whole interleaved PCM16LE frames. A chunk may end
 * in the middle of a sample or a frame; the tail waits for the next chunk, so no byte is dropped or
 * shifted. Copies once per chunk (the Int16Array must be aligned; Buffers from pipes are not).
 */
export class Pcm16Chunker {
  readonly #frameBytes: number;
  #carry: Uint8Array = new Uint8Array(0);

  constructor(channels: number) {
    this.#frameBytes = 2 * channels;
  }

  /** Whole frames from this chunk plus the carried tail; an empty array when none is complete yet. */
  push(chunk: Uint8Array): Int16Array {
    const total = this.#carry.length + chunk.length;
    const usable = total - (total % this.#frameBytes);
    const bytes = new Uint8Array(usable);
    const fromCarry = Math.min(this.#carry.length, usable);
    bytes.set(this.#carry.subarray(0, fromCarry), 0);
    bytes.set(chunk.subarray(0, usable - fromCarry), fromCarry);
    const rest = new Uint8Array(total - usable);
    rest.set(this.#carry.subarray(fromCarry), 0);
    rest.set(chunk.subarray(usable - fromCarry), this.#carry.length - fromCarry);
    this.#carry = rest;
    return littleEndianInt16(bytes);
  }

  /** Bytes left over at the end of the stream (an incomplete frame). */
  get pendingBytes(): number {
    return this.#carry.length;
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function littleEndianInt16(bytes: Uint8Array): Int16Array {
  if (LITTLE_ENDIAN) return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = new Int16Array(bytes.byteLength / 2);
  for (let i = 0; i < out.length; i++) out[i] = view.getInt16(2 * i, true);
  return out;
}
