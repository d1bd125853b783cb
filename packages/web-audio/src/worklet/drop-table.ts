/**
 * Where the shared ring lost audio, for the page to splice at exactly the right frame.
 *
 * A full SampleRing counts what did not fit (overflowSamples) but not where in the stream it was
 * lost. A message would arrive too late: the page drains the ring on its own timer and could read
 * past the loss before the message came. So the worklet writes each lost stretch here, in shared
 * memory, *before* it writes the first frame after it into the ring: a page that has loaded the
 * ring's write cursor (Atomics) past a loss also sees its record.
 *
 * Layout of the SharedArrayBuffer:
 *   Int32   [0] published  records written by the worklet (wrapping count)
 *           [1] consumed   records the page has applied (wrapping count)
 *   Float64 from byte 8, `slots` records of 3: at (ring position of the splice), from (first lost
 *           worklet frame), frames (how many)
 * Single producer (the worklet), single consumer (the page); plain stores of a record are ordered by
 * the Atomics.store of `published` that follows them, as in core's SampleRing.
 *
 * Garbage: none on either side after construction.
 */
export const DROP_TABLE_SLOTS = 32;

const PUBLISHED = 0;
const CONSUMED = 1;
const RECORD = 3;

export class DropTable {
  readonly buffer: SharedArrayBuffer;
  readonly slots: number;
  readonly #ctl: Int32Array;
  readonly #records: Float64Array;
  /** The side's own count (producer: published, consumer: consumed). */
  #own: number;

  static create(slots = DROP_TABLE_SLOTS): DropTable {
    return new DropTable(new SharedArrayBuffer(8 + slots * RECORD * 8));
  }

  constructor(buffer: SharedArrayBuffer) {
    this.buffer = buffer;
    this.slots = Math.floor((buffer.byteLength - 8) / (RECORD * 8));
    this.#ctl = new Int32Array(buffer, 0, 2);
    this.#records = new Float64Array(buffer, 8, this.slots * RECORD);
    this.#own = 0;
  }

  /** Producer: records a loss; false when every slot still waits for the page (the run goes on). */
  publish(at: number, from: number, frames: number): boolean {
    const own = this.#own;
    if (((own - Atomics.load(this.#ctl, CONSUMED)) | 0) >= this.slots) return false;
    const base = (own >>> 0) % this.slots * RECORD;
    const records = this.#records;
    records[base] = at;
    records[base + 1] = from;
    records[base + 2] = frames;
    this.#own = (own + 1) | 0;
    Atomics.store(this.#ctl, PUBLISHED, this.#own);
    return true;
  }

  /** Producer: records published that the page has not applied yet. */
  unread(): number {
    return (this.#own - Atomics.load(this.#ctl, CONSUMED)) | 0;
  }

  /**
   * Consumer: the ring position of the next loss not yet applied, or -1. Load the ring's write cursor
   * first (availableToRead()): every loss before it is then visible here.
   */
  nextAt(): number {
    if (Atomics.load(this.#ctl, PUBLISHED) === this.#own) return -1;
    return this.#records[(this.#own >>> 0) % this.slots * RECORD] as number;
  }

  /** Consumer: first lost worklet frame of the record nextAt() described. */
  nextFrom(): number {
    return this.#records[(this.#own >>> 0) % this.slots * RECORD + 1] as number;
  }

  /** Consumer: its length in frames. */
  nextFrames(): number {
    return this.#records[(this.#own >>> 0) % this.slots * RECORD + 2] as number;
  }

  /** Consumer: done with the record; its slot may be written again. */
  consume(): void {
    this.#own = (this.#own + 1) | 0;
    Atomics.store(this.#ctl, CONSUMED, this.#own);
  }
}
