import { DspError } from '../errors/dsp-error.js';
import { FRAME, REALTIME } from '../protocol.js';
import { FrameSlots, type EncodedFrame } from './frame-slots.js';
import { quantizePcm16 } from './pcm16.js';
import { Resampler, type ResamplerKernel, type SampleBlock } from './resampler.js';

export type { EncodedFrame } from './frame-slots.js';

export interface FrameEncoderOptions {
  /** Rate of the blocks write() takes: one of SUPPORTED_RATES. */
  readonly inputRate: number;
  /** Interleaved channels per input frame, averaged to mono. Default 1. */
  readonly channels?: number;
  /** Default 'auto': the wasm kernel where it can run, else js (same rates, same bytes). */
  readonly kernel?: ResamplerKernel;
  /** Milliseconds of 16 kHz audio per frame: a whole number of samples, at most 10 s. Default 20. */
  readonly frameMs?: number;
  /**
   * Encoded audio kept, in milliseconds, before the oldest whole frames are dropped to make room
   * (counted in overflowSamples). Default 30000.
   */
  readonly bufferMs?: number;
  /** Position of the first output sample (frames carry absolute positions). Default 0. */
  readonly startSample?: number;
}

/** Largest block the resampler takes in one call; longer write() blocks are split into views (which allocate). */
const MAX_BLOCK_FRAMES = 8192;
/**
 * Most outputs one call can add, at any input rate (8 kHz, the lowest supported, doubles): the slots
 * beyond bufferMs that let a write always find room by dropping old slots, never the one it fills.
 */
const MAX_OUTPUTS_PER_CALL = MAX_BLOCK_FRAMES * 2 + 2;

/**
 * The encode path the realtime session runs: Float32 or Int16 blocks at any supported rate in,
 * socket-ready 16 kHz PCM16 frames out. A Resampler writes its output straight into the payloads of
 * frame slots (16 bytes of header room, then one frame), and a full slot gets its header and is the
 * frame: nothing is copied between the resampler's output and the bytes handed to `socket.send`.
 *
 *   write(Float32 | Int16) ─► Resampler.processPcm16Runs ─► frame slots ─► nextFrame() ─► bytes
 *
 * `RealtimeSocketSession.write()` runs exactly this class (its outbox holds one and keeps the frames
 * until the server acknowledges them); use it on its own to encode without a session, as a benchmark
 * harness or a custom transport would:
 *
 * ```ts
 * const encoder = new FrameEncoder({ inputRate: 48_000 });
 * encoder.write(block);                                   // any size; mono, or interleaved with `channels`
 * for (let f = encoder.nextFrame(); f !== null; f = encoder.nextFrame()) send(f.bytes);
 * encoder.flush();                                        // end of stream, then nextFrame() gives the short last frame
 * ```
 *
 * Exact counts: N input frames give floor(N·16000/inputRate) samples once flushed, bit-identical
 * whatever the block sizes; with the wasm kernel the slots are a region of its memory and it quantizes
 * into them, with the js kernel a small float chunk is quantized into them (the same bytes).
 *
 * Garbage: the constructor allocates everything (every slot, its views and its frame object). In the
 * steady state write() and nextFrame() allocate nothing; a block longer than 8192 frames (split into
 * views) and a short frame (a subarray view) do.
 */
export class FrameEncoder {
  /** Bytes of header in front of every frame's payload (docs/protocol.md "Binary audio frames"). */
  static readonly headerBytes: number = FRAME.headerBytes;

  /** Samples per frame (16 kHz). */
  readonly frameSamples: number;
  /** @internal Samples `bufferMs` keeps (whole frames): the most one write may add. */
  readonly keptSamples: number;
  /** @internal Frame slots: fixed for the encoder's life (bufferMs and the largest write decide how many). */
  readonly slotCount: number;

  #inputRate: number;
  #channels: number;
  #resampler: Resampler;
  #slots: FrameSlots;
  /** resampler.flush()'s floats, quantized into the slots (a segment's tail: rare). */
  #scratch: Float32Array;
  /** (start, length) pairs in the slots' int16 memory where the next outputs go. */
  readonly #runs: Int32Array;
  #overflow = 0;
  /** Where nextFrame() reads next; frames before it were handed out and may be overwritten. */
  #read: number;

  constructor(options: FrameEncoderOptions) {
    const { inputRate, channels = 1, kernel = 'auto', frameMs = 20, bufferMs = 30_000, startSample = 0 } = options;
    const frameSamples = (frameMs * REALTIME.sampleRate) / 1000;
    if (!Number.isInteger(frameSamples) || frameSamples < 1 || frameSamples > REALTIME.sampleRate * 10) {
      throw new DspError('DSP_INVALID_OPTION', `frameMs ${String(frameMs)} must give a whole number of samples at ${REALTIME.sampleRate} Hz, at most 10 s`);
    }
    if (!(bufferMs > 0) || bufferMs > 3_600_000) {
      throw new DspError('DSP_INVALID_OPTION', `bufferMs must be in (0, 3600000], got ${String(bufferMs)}`);
    }
    this.frameSamples = frameSamples;
    // bufferMs of audio, plus room for the largest single write whatever the input rate (so one format
    // change keeps the same layout), plus the open slot.
    const kept = Math.ceil((bufferMs * REALTIME.sampleRate) / 1000 / frameSamples);
    this.keptSamples = kept * frameSamples;
    this.slotCount = kept + Math.ceil(MAX_OUTPUTS_PER_CALL / frameSamples) + 2;
    this.#runs = new Int32Array(2 * (Math.ceil(MAX_OUTPUTS_PER_CALL / frameSamples) + 2));
    this.#inputRate = inputRate;
    this.#channels = channels;
    this.#resampler = this.#makeResampler(inputRate, channels, kernel);
    this.#slots = this.#makeSlots(this.#resampler, startSample);
    this.#scratch = makeScratch(this.#resampler);
    this.#read = startSample;
  }

  /** Rate of the blocks write() takes. */
  get inputRate(): number {
    return this.#inputRate;
  }

  /** Interleaved channels per input frame. */
  get channels(): number {
    return this.#channels;
  }

  /** The resampler kernel that runs: 'wasm', or 'js' (asked for, or no WebAssembly SIMD / a CSP without 'wasm-unsafe-eval'). */
  get kernel(): 'js' | 'wasm' {
    return this.#resampler.kernel;
  }

  /** Samples encoded so far, from startSample: the end of the last one. */
  get producedSamples(): number {
    return this.#slots.writeCursor;
  }

  /** Samples dropped, oldest whole frames first, because `bufferMs` of audio was kept and more came. */
  get overflowSamples(): number {
    return this.#overflow;
  }

  /**
   * Resamples and encodes a block of interleaved frames, Float32 or Int16 (read as value / 32768 on the
   * way into the resampler, no float copy). Returns the 16 kHz samples it added. After flush(),
   * DSP_INVALID_STATE.
   */
  write(block: SampleBlock): number {
    if (this.#resampler.flushed) throw new DspError('DSP_INVALID_STATE', 'write() after the stream was flushed');
    const most = MAX_BLOCK_FRAMES * this.#channels;
    if (block.length <= most) return this.#encode(block);
    let produced = 0;
    for (let at = 0; at < block.length; at += most) produced += this.#encode(block.subarray(at, at + most));
    return produced;
  }

  /**
   * Ends the stream: the resampler's tail is encoded (floor(N·16000/inputRate) samples in all), and
   * nextFrame() then hands out the frame still filling, short. Returns the samples it added; 0 the
   * second time.
   */
  flush(): number {
    if (this.#resampler.flushed) return 0;
    return this.#encodeTail();
  }

  /**
   * The next frame, or null when none is complete yet (after flush(): when all went out). Headed with
   * the first epoch and its start sample, so its bytes are what a session would send for it.
   *
   * The frame object and its bytes are the encoder's own, in memory that comes round again: the next
   * nextFrame() call frees the frame, and its bytes are overwritten once `bufferMs` more audio has been
   * written after it (sooner only if more than `bufferMs` waits untaken: the oldest frames are dropped
   * then). Send them before the next call; a transport that keeps the buffer after send() (`ws` may,
   * while it is busy) has that much time.
   */
  nextFrame(): EncodedFrame | null {
    const slots = this.#slots;
    slots.release(this.#read);
    // An overflow dropped frames nobody took: go on with the oldest one kept.
    if (slots.releaseCursor > this.#read) this.#read = slots.releaseCursor;
    const frame = slots.frame(this.#read, REALTIME.firstEpoch, this.#read, this.#resampler.flushed);
    if (frame !== null) this.#read += frame.sampleCount;
    return frame;
  }

  // --- what the session's outbox uses besides: PCM16 as it is, segments, another format, frames by position ---

  /** @internal PCM16 at 16 kHz mono, copied into the slots as it is (no resampling, no requantisation). */
  writePcm16(samples: Int16Array): number {
    const slots = this.#slots;
    for (let at = 0; at < samples.length; at += this.frameSamples) {
      const count = Math.min(samples.length - at, this.frameSamples);
      this.#makeRoom(count);
      slots.writeSamples(samples, at, count, this.#runs);
    }
    return samples.length;
  }

  /**
   * @internal Encodes what the resampler still holds without ending the stream, then starts it afresh:
   * each segment gets exactly floor(frames·16000/inputRate) samples, as a stream of its own would, and
   * positions continue. Returns the samples the tail added; 0 after flush() or with nothing written.
   */
  endSegment(): number {
    if (this.#resampler.flushed) return 0;
    const produced = this.#encodeTail();
    this.#resampler.reset();
    return produced;
  }

  /** @internal Whether flush() ended the stream. */
  get flushed(): boolean {
    return this.#resampler.flushed;
  }

  /** @internal Outputs a block of `frames` input frames adds now. */
  outputCountFor(frames: number): number {
    return this.#resampler.outputCountFor(frames);
  }

  /**
   * @internal Takes blocks at another rate or channel count from now on: only between segments (the
   * resampler holds nothing then). The resampler is rebuilt; every kept slot moves into its memory as
   * it is (same positions, same bytes). Allocates: a device change, not a hot path. A format the
   * resampler refuses throws and leaves the encoder as it was.
   */
  setInput(inputRate: number, channels: number, kernel: ResamplerKernel): void {
    const resampler = this.#makeResampler(inputRate, channels, kernel);
    const slots = this.#makeSlots(resampler, this.#slots.releaseCursor);
    // Same slot count whatever the rate: nothing is dropped (adopt() would drop the oldest if it were).
    this.#overflow += slots.adopt(this.#slots);
    this.#resampler = resampler;
    this.#slots = slots;
    this.#scratch = makeScratch(resampler);
    this.#inputRate = inputRate;
    this.#channels = channels;
  }

  /** @internal Samples the slots hold at most. */
  get capacity(): number {
    return this.#slots.capacity;
  }

  /** @internal Start of the oldest sample kept. */
  get releaseCursor(): number {
    return this.#slots.releaseCursor;
  }

  /**
   * @internal The frame from `position` to the end of its slot (at most `maxSamples`), headed (epoch,
   * serverStart); null when that slot is still filling unless `allowShort`, which seals it (FrameSlots.frame()).
   */
  frameAt(position: number, epoch: number, serverStart: number, allowShort: boolean, maxSamples?: number): EncodedFrame | null {
    return this.#slots.frame(position, epoch, serverStart, allowShort, maxSamples);
  }

  /** @internal Frees the whole frames that end at or before `position`: their memory may be reused. */
  release(position: number): void {
    this.#slots.release(position);
  }

  /** @internal Copies the kept samples [from, from + out.length) into `out`; returns how many were there. */
  peek(from: number, out: Int16Array): number {
    return this.#slots.peek(from, out);
  }

  /** One block through the resampler, its outputs straight into the slots. */
  #encode(block: SampleBlock): number {
    const resampler = this.#resampler;
    const frames = block.length / this.#channels;
    // A block that is not whole frames: the resampler reports it (nothing is dropped for it first).
    const count = Number.isInteger(frames) ? resampler.outputCountFor(frames) : 0;
    this.#makeRoom(count);
    const slots = this.#slots;
    const runs = this.#runs;
    const runCount = slots.writeRuns(count, runs);
    // Most blocks land inside one slot (a 128-frame block gives about 43 samples of a 320-sample
    // frame): one contiguous call then; the runs only where a block crosses into the next slot.
    const written = runCount <= 1
      ? resampler.processPcm16(block, slots.samples, runCount === 1 ? runs[0]! : 0)
      : resampler.processPcm16Runs(block, slots.samples, runs, runCount);
    slots.commit(written);
    return written;
  }

  /** The resampler's tail (flush): through the float scratch, quantized into the slots as the kernel would. */
  #encodeTail(): number {
    const count = this.#resampler.pendingFlush;
    this.#makeRoom(count);
    const written = this.#resampler.flush(this.#scratch);
    const slots = this.#slots;
    const runs = this.#runs;
    const runCount = slots.writeRuns(written, runs);
    for (let r = 0, from = 0; r < runCount; r++) {
      quantizePcm16(this.#scratch, from, runs[2 * r + 1]!, slots.samples, runs[2 * r]!);
      from += runs[2 * r + 1]!;
    }
    slots.commit(written);
    return written;
  }

  /** Frees whole slots from the old end until `count` samples fit; the live end is never dropped. */
  #makeRoom(count: number): void {
    const slots = this.#slots;
    while (slots.room() < count) {
      const dropped = slots.dropOldest();
      if (dropped === 0 && slots.releaseCursor === slots.writeCursor) return; // cannot happen: writes fit the slots
      this.#overflow += dropped;
    }
  }

  #makeResampler(inputRate: number, channels: number, kernel: ResamplerKernel): Resampler {
    return new Resampler({
      inputRate,
      outputRate: REALTIME.sampleRate,
      channels,
      kernel,
      blockFrames: 4096,
      // The slots live in the wasm kernel's memory, so it quantizes its outputs straight into them.
      reserveBytes: FrameSlots.byteLengthFor(this.frameSamples, this.slotCount),
    });
  }

  #makeSlots(resampler: Resampler, startSample: number): FrameSlots {
    const region = resampler.reservedRegion;
    return new FrameSlots(this.frameSamples, this.slotCount, startSample, region === null ? undefined : region);
  }
}

function makeScratch(resampler: Resampler): Float32Array {
  return new Float32Array(resampler.maxOutputFor(resampler.latencyFrames + 1) + 1);
}
