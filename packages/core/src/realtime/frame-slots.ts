import { FRAME } from '../protocol.js';

/** One socket-ready frame: the 16-byte header then PCM16 little-endian (docs/protocol.md). */
export interface OutgoingFrame {
  /** Header and payload; exactly the message to send. */
  readonly bytes: Uint8Array;
  /** First sample, in the server's positions (what the header says). */
  readonly startSample: number;
  readonly sampleCount: number;
}

/** A reusable frame buffer with its views, made once; `end` is the captured position it holds up to. */
export interface FrameSlot {
  readonly full: Uint8Array;
  readonly header: DataView;
  /** The payload as int16 (little-endian hosts: int16 in memory is the wire format). */
  readonly payload: Int16Array;
  /** The same payload as int32 pairs (the header is 16 bytes, so it is 4-aligned): half the element copies. */
  readonly payload32: Int32Array;
  readonly frame: { bytes: Uint8Array; startSample: number; sampleCount: number };
  end: number;
}

/**
 * Most slots kept: 256 frames of 20 ms is 5 s in flight, over twice the session's default in-flight
 * window (32,000 samples), about 170 KB. Past it (many reconnects with no acknowledgement), frames are
 * made fresh and left to the collector rather than held forever.
 */
const MAX_SLOTS = 256;

/**
 * The frame buffers of the outbox, reused once the server has acknowledged what they carried.
 *
 * Why acknowledgement, not "after send()": a WebSocket may keep the very bytes it was given after
 * send() returns. `ws` copies a binary message while masking it only when it can send at once; when its
 * sender is busy (a permessage-deflate compression or a Blob read in progress) it queues the caller's
 * buffer, and when the random mask is all zeros it writes the caller's buffer to the TCP socket
 * unmasked, by reference, until flushed (ws lib/sender.js `frame()` and `send()`). A browser copies the
 * bytes in send() (the WebSocket standard queues a copy), but the session also takes any WebSocket
 * through options. Bytes the server has acknowledged were sent and received, by any implementation, so
 * overwriting them can never corrupt a message. Slots are reused in the order they were handed out,
 * which is the order acknowledgements free them.
 *
 * Garbage: slots are made while the pool grows to the in-flight window (the first second or so of a
 * session), and a short frame (pause, finish) is a subarray view. After that, nothing per frame.
 */
export class FrameSlots {
  readonly #frameSamples: number;
  readonly #slots: FrameSlot[] = [];
  #next = 0;

  constructor(frameSamples: number) {
    this.#frameSamples = frameSamples;
  }

  /** How many slots exist (for tests and stats): stops growing in the steady state. */
  get size(): number {
    return this.#slots.length;
  }

  /** A slot whose bytes no one can still be reading: everything before `acked` (captured) is acknowledged. */
  take(acked: number): FrameSlot {
    const slots = this.#slots;
    if (slots.length > 0) {
      const oldest = slots[this.#next]!;
      if (oldest.end <= acked) {
        this.#next = (this.#next + 1) % slots.length;
        return oldest;
      }
    }
    const slot = makeSlot(this.#frameSamples);
    if (slots.length >= MAX_SLOTS) return slot;
    // In front of the oldest: handed out last, so it comes round after every slot now in flight.
    slots.splice(this.#next, 0, slot);
    this.#next = (this.#next + 1) % slots.length;
    return slot;
  }
}

function makeSlot(frameSamples: number): FrameSlot {
  const full = new Uint8Array(FRAME.headerBytes + frameSamples * FRAME.bytesPerSample);
  return {
    full,
    header: new DataView(full.buffer),
    payload: new Int16Array(full.buffer, FRAME.headerBytes, frameSamples),
    payload32: new Int32Array(full.buffer, FRAME.headerBytes, frameSamples >> 1),
    frame: { bytes: full, startSample: 0, sampleCount: 0 },
    end: 0,
  };
}
