import { VoiceGate } from '@soundclone/core/internal';
import type { GateProcessorOptions } from './protocol.js';

/** Longest block the history takes in one piece; a longer one is gated in pieces of this size. */
export const GATE_PIECE = 1024;

/**
 * The voice gate as the capture worklet runs it, synchronously in process(), on the render quanta
 * at the context's rate: core's VoiceGate decides, and this keeps the audio it may reach back to (the
 * pre-roll) in a ring of history, and the books of what was handed on.
 *
 * For each piece (take()), the owner reads the decision from the fields:
 *   - `sendFrom`/`sendTo`: worklet frames to deliver now (copy them out of `history` with `at()`);
 *     before them, `skipBefore` frames were skipped (deliver that skip first, it precedes the audio);
 *   - `skip`: frames to declare skipped after the audio (the gate is closed and they can no longer
 *     become pre-roll);
 *   - `speechEnd`, `speechStart`: utterance edges in worklet frames (-1: none), end before start.
 * Every frame of the stream is either sent or skipped, exactly once, in order: `given` is the end of
 * what was handed on; the rest (at most `historySamples`) is held back until the gate decides.
 *
 * Garbage: the history and the gate are allocated in the constructor; take() allocates nothing.
 */
export class WorkletGate {
  readonly gate: VoiceGate;
  /** The last `history.length` frames, frame p at p % history.length. */
  readonly history: Float32Array;
  /** Worklet frames handed on (sent or skipped). */
  given = 0;
  sendFrom = 0;
  sendTo = 0;
  skipBefore = 0;
  skip = 0;
  speechStart = -1;
  speechEnd = -1;
  #position = 0;

  constructor(options: GateProcessorOptions) {
    this.gate = new VoiceGate(options);
    this.history = new Float32Array(this.gate.historySamples + GATE_PIECE);
  }

  /** Frames given to the gate so far. */
  get position(): number {
    return this.#position;
  }

  /** Frame p of the stream (within the history): the owner copies the sends with it. */
  at(p: number): number {
    return this.history[p % this.history.length] as number;
  }

  /** src[offset, offset + n) (n <= GATE_PIECE) through the gate; the decision is in the fields. */
  take(src: Float32Array, offset: number, n: number): void {
    const history = this.history;
    const length = history.length;
    for (let i = 0, p = this.#position % length; i < n; i++) {
      history[p] = src[offset + i] as number;
      if (++p === length) p = 0;
    }
    const end = this.#position + n;
    this.speechStart = this.speechEnd = -1;
    this.skipBefore = this.skip = 0;
    this.sendFrom = this.sendTo = this.given;
    this.#decide(src, offset, n);
    this.#position = end;
    if (this.sendTo === this.sendFrom && !this.gate.isOpen) {
      // Closed: what is older than the history can no longer become pre-roll.
      const settled = end - this.gate.historySamples;
      if (settled > this.given) {
        this.skip = settled - this.given;
        this.given = settled;
      }
    }
  }

  /** The end of the stream: an utterance still open ends, the held-back rest is skipped time. */
  finish(): void {
    const d = this.gate.finish();
    this.speechStart = -1;
    this.speechEnd = d.speechEnd;
    this.skipBefore = 0;
    this.sendFrom = this.sendTo = this.given;
    this.skip = this.#position - this.given;
    this.given = this.#position;
  }

  #decide(src: Float32Array, offset: number, n: number): void {
    const d = this.gate.process(subarrayOf(src, offset, n));
    if (d.speechEnd >= 0) this.speechEnd = d.speechEnd;
    if (d.speechStart >= 0) this.speechStart = d.speechStart;
    if (d.sendTo > d.sendFrom) {
      // The skip up to the send goes before it (the gate's ranges start where the last one ended, or later).
      if (d.sendFrom > this.given) this.skipBefore = d.sendFrom - this.given;
      this.sendFrom = d.sendFrom > this.given ? d.sendFrom : this.given;
      this.sendTo = d.sendTo;
      this.given = d.sendTo;
    }
  }
}

/**
 * The gate takes a whole Float32Array; a render quantum is one (offset 0, n = length), and so is
 * every piece of a quantum the processor cuts (it gates quanta whole). Only a longer block (not a
 * render quantum) is cut, with a view: that allocates, off the worklet's steady path.
 */
function subarrayOf(src: Float32Array, offset: number, n: number): Float32Array {
  return offset === 0 && n === src.length ? src : src.subarray(offset, offset + n);
}
