import { DspError } from '../errors/dsp-error.js';
import { designPolyphase, type ResamplerQuality } from './filter-design.js';
import { LITTLE_ENDIAN_HOST, encodePcm16Into } from './pcm16.js';
import { CONTROL_BYTES } from './ring-control.js';
import { isSupportedRate, reduceRatio } from './rates.js';
import { ResampleClock } from './resample-clock.js';
import { Resampler, type NonFinitePolicy, type ResamplerKernel, type ResamplerOptions, type SampleBlock } from './resampler.js';
import { RING_REGION, RingSegments, SampleRing, type RingRegion, type SampleRingOptions } from './sample-ring.js';

export interface EncodePipelineOptions {
  /** Rate of the Float32 blocks pushed in. */
  inputRate: number;
  /** Interleaved channels per input frame, averaged to mono. Default 1. */
  channels?: number;
  /** Default 16000, what the realtime socket takes. */
  outputRate?: number;
  quality?: ResamplerQuality;
  kernel?: ResamplerKernel;
  nonFinite?: NonFinitePolicy;
  /** Frame duration in milliseconds of output audio. Default 20. */
  frameMs?: number;
  /** Bytes left free in front of each frame's payload for a transport header. Default 0. */
  headerBytes?: number;
  /** Largest block push() takes without allocating; bigger blocks are split into views. Default 8192 frames. */
  maxBlockFrames?: number;
  /**
   * Encoded samples held before the oldest are dropped, in milliseconds of output. Default 30000.
   * With `retain`, this is also how much unacknowledged audio survives an outage.
   */
  bufferMs?: number;
  /** Keep sent frames until acknowledge(position), so rewind() can send them again. Default false. */
  retain?: boolean;
  /** Absolute output sample at which the stream starts (a stream continued after a device change). Default 0. */
  startSample?: number;
  /**
   * Called when the buffer is full and the oldest samples [from, to) are dropped to make room:
   * positions stay true, so the receiver sees the gap. The live end of the audio is never dropped.
   */
  onOverflow?: (from: number, to: number) => void;
}

/**
 * One frame of PCM16 little-endian audio. The same object is reused by every nextFrame() call and
 * `bytes` points into the pipeline's own buffer: send or copy it before the next call.
 */
export interface EncodedFrame {
  /** Header space (zeros unless you write it) followed by the payload. */
  readonly bytes: Uint8Array;
  /** Absolute output sample of the first payload sample. */
  readonly startSample: number;
  readonly sampleCount: number;
  /** Where the payload starts in `bytes`: headerBytes. */
  readonly payloadOffset: number;
}

interface MutableFrame {
  bytes: Uint8Array;
  startSample: number;
  sampleCount: number;
  payloadOffset: number;
}

/**
 * The encode path: Float32 blocks at any supported rate in, framed 16 kHz PCM16 out, each frame
 * tagged with its absolute start sample.
 *
 *   push(block) ─► Resampler.processPcm16 ─► int16 SampleRing ─► nextFrame() (copyWithin)
 *
 * Frames are cut from the ring when asked for, so a consumer that falls behind loses nothing until
 * the ring is full, and a reconnecting client can rewind() to the server's cursor.
 *
 * Layout: the ring and the frame buffer share one buffer, so a frame is copied out of the ring with
 * copyWithin() (a memmove, no view to allocate). With the wasm kernel that buffer is a region of the
 * Resampler's wasm memory (`reserveBytes`), and the kernel quantizes its outputs straight into the
 * ring: no JS loop touches a sample on the way. A push whose output would wrap around the end of the
 * ring or overflow it (rare: once per pass over the ring, or when the consumer stalls), flush() and
 * endSegment() take the float path instead, Resampler.process into a scratch then encodePcm16Into, which gives
 * the same bytes (the wasm quantizer equals encodePcm16 for every float32). With the js kernel every
 * push takes that path.
 *
 * Garbage: only the constructor, blocks longer than maxBlockFrames (split into views) and the final
 * short frame after flush() (a shorter view) allocate. Steady-state push()/nextFrame() allocate nothing.
 */
export class EncodePipeline {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly channels: number;
  readonly frameSamples: number;
  readonly headerBytes: number;
  readonly resampler: Resampler;
  readonly ring: SampleRing<'int16'>;

  readonly #scratch: Float32Array;
  readonly #maxBlockSamples: number;
  readonly #segments: RingSegments<'int16'>;
  readonly #frameBuffer: Uint8Array;
  /** Whether push() lets the wasm kernel write PCM16 into the ring (the ring is in its memory). */
  readonly #direct: boolean;
  /**
   * Int16 view over the ring's storage and the frame buffer (little-endian hosts: int16 in memory is
   * then the wire format), for copyWithin(); null on big-endian hosts, which store bytes one by one.
   */
  readonly #region16: Int16Array | null;
  /** Index in #region16 of ring.storage[0], and of the frame's first payload sample. */
  readonly #storageIndex: number;
  readonly #payloadIndex: number;
  readonly #frame: MutableFrame;
  readonly #onOverflow: ((from: number, to: number) => void) | undefined;
  #overflowSamples = 0;
  #flushed = false;

  constructor(options: EncodePipelineOptions) {
    const {
      inputRate, channels = 1, outputRate = 16000, quality, kernel, nonFinite,
      frameMs = 20, headerBytes = 0, maxBlockFrames = 8192, bufferMs = 30_000, retain = false, startSample = 0,
    } = options;
    // The buffer sizes, worked out before the Resampler exists because its wasm memory must hold
    // them: the same figures as its maxOutputFor() (same clock); any option it would refuse gives 0,
    // and the Resampler's own error follows.
    const scratchLength = scratchLengthFor(inputRate, outputRate, quality ?? 'best', maxBlockFrames);
    const frameSamples = (frameMs * outputRate) / 1000;
    const capacity = Math.max(Math.ceil((bufferMs * outputRate) / 1000), scratchLength, frameSamples);
    const ringBytes = validLayout(frameSamples, headerBytes, bufferMs, scratchLength) ? SampleRing.byteLengthFor('int16', capacity) : 0;
    // The frame buffer after the ring, placed so that the payload is 2-aligned whatever headerBytes is.
    const frameOffset = ringBytes + (headerBytes % 2);
    const regionBytes = ringBytes === 0 ? 0 : frameOffset + headerBytes + frameSamples * 2;

    const resamplerOptions: ResamplerOptions = {
      inputRate, outputRate, channels, blockFrames: Math.min(maxBlockFrames, 4096), reserveBytes: regionBytes,
    };
    if (quality !== undefined) resamplerOptions.quality = quality;
    if (nonFinite !== undefined) resamplerOptions.nonFinite = nonFinite;
    if (kernel !== undefined) resamplerOptions.kernel = kernel;
    this.resampler = new Resampler(resamplerOptions);
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.channels = channels;

    if (!Number.isInteger(frameSamples) || frameSamples < 1 || frameSamples > outputRate * 10) {
      throw new DspError('DSP_INVALID_OPTION', `frameMs ${String(frameMs)} must give a whole number of samples at ${outputRate} Hz, at most 10 s`);
    }
    if (!Number.isInteger(headerBytes) || headerBytes < 0 || headerBytes > 65536) {
      throw new DspError('DSP_INVALID_OPTION', `headerBytes must be an integer from 0 to 65536, got ${String(headerBytes)}`);
    }
    if (!Number.isInteger(maxBlockFrames) || maxBlockFrames < 1 || maxBlockFrames > 1 << 20) {
      throw new DspError('DSP_INVALID_OPTION', `maxBlockFrames must be an integer from 1 to 1048576, got ${String(maxBlockFrames)}`);
    }
    if (!(bufferMs > 0) || bufferMs > 3_600_000) {
      throw new DspError('DSP_INVALID_OPTION', `bufferMs must be in (0, 3600000], got ${String(bufferMs)}`);
    }
    this.frameSamples = frameSamples;
    this.headerBytes = headerBytes;
    this.#maxBlockSamples = maxBlockFrames * channels;
    // The float path's scratch: one block's outputs and flush()'s. The ring must hold at least that
    // and one frame, or a push could not be stored whole (capacity above).
    this.#scratch = new Float32Array(this.resampler.maxOutputFor(maxBlockFrames) + this.resampler.maxOutputFor(this.resampler.latencyFrames + 1));
    if (this.#scratch.length !== scratchLength) throw new Error('EncodePipeline: buffer sizes disagree with the Resampler'); // cannot happen
    const reserved = this.resampler.reservedRegion;
    this.#direct = reserved !== null;
    const region: RingRegion = reserved === null
      ? { buffer: new ArrayBuffer(regionBytes), byteOffset: 0 }
      : { buffer: reserved.buffer as ArrayBuffer, byteOffset: reserved.byteOffset };
    const ringOptions: SampleRingOptions<'int16'> & { [RING_REGION]: RingRegion } = {
      kind: 'int16', capacity, retain, startPosition: startSample, [RING_REGION]: region,
    };
    this.ring = new SampleRing(ringOptions);
    this.#segments = this.ring.createSegments();
    this.#frameBuffer = new Uint8Array(region.buffer, region.byteOffset + frameOffset, headerBytes + frameSamples * 2);
    this.#region16 = LITTLE_ENDIAN_HOST ? new Int16Array(region.buffer, region.byteOffset, regionBytes >> 1) : null;
    this.#storageIndex = CONTROL_BYTES >> 1;
    this.#payloadIndex = (frameOffset + headerBytes) >> 1;
    this.#frame = { bytes: this.#frameBuffer, startSample: 0, sampleCount: 0, payloadOffset: headerBytes };
    this.#onOverflow = options.onOverflow;
  }

  /** Absolute output position just past the last encoded sample. */
  get producedSamples(): number { return this.ring.writeCursor; }
  /** Encoded samples not yet handed out by nextFrame(). */
  get queuedSamples(): number { return this.ring.availableToRead(); }
  /** Samples dropped because the buffer was full (see onOverflow). */
  get overflowSamples(): number { return this.#overflowSamples; }
  get flushed(): boolean { return this.#flushed; }

  /**
   * Resamples and encodes a block of interleaved frames, Float32 or PCM16 (read as value / 32768 on
   * the way into the resampler, no float copy). Returns the output samples it produced.
   */
  push(block: SampleBlock): number {
    if (this.#flushed) throw new DspError('DSP_INVALID_STATE', 'push() after flush(); call reset() to start a new stream');
    if (block.length <= this.#maxBlockSamples) {
      return this.#direct ? this.#encodeDirect(block) : this.#encode(this.resampler.process(block, this.#scratch));
    }
    let produced = 0;
    for (let at = 0; at < block.length; at += this.#maxBlockSamples) {
      produced += this.#encode(this.resampler.process(block.subarray(at, at + this.#maxBlockSamples), this.#scratch));
    }
    return produced;
  }

  /** Ends the stream: the resampler's tail is encoded, and the last frame may be short. */
  flush(): number {
    if (this.#flushed) return 0;
    const produced = this.#encode(this.resampler.flush(this.#scratch));
    this.#flushed = true;
    return produced;
  }

  /**
   * Ends a segment without ending the stream (a realtime pause: the audio before it must all go out,
   * the audio after it is not continuous with it anyway). The resampler's tail is encoded as flush()
   * would, then the resampler starts afresh, so positions continue and push() goes on. Each segment
   * gets exactly floor(frames·up/down) samples, as a stream of its own would; the filter does not reach
   * across the cut, and the resampler's counters (inputFrames, outputFrames, nonFiniteSamples) restart.
   * Returns the samples it produced; 0 after flush().
   */
  endSegment(): number {
    if (this.#flushed) return 0;
    const produced = this.#encode(this.resampler.flush(this.#scratch));
    this.resampler.reset();
    return produced;
  }

  /**
   * The next whole frame, or after flush() the short last one; null when there is none yet. The
   * returned object and its bytes are reused by the next call.
   */
  nextFrame(): EncodedFrame | null {
    const ring = this.ring;
    const available = ring.availableToRead();
    if (available < this.frameSamples && (available === 0 || !this.#flushed)) return null;
    const segments = this.#segments;
    const count = ring.readSegments(this.frameSamples, segments);
    this.#copyPayload(segments);
    ring.consume(count);
    const frame = this.#frame;
    frame.startSample = segments.position;
    frame.sampleCount = count;
    frame.bytes = count === this.frameSamples ? this.#frameBuffer : this.#frameBuffer.subarray(0, this.headerBytes + count * 2);
    return frame;
  }

  /** With `retain`: the receiver has everything before `position`; that audio may now be overwritten. */
  acknowledge(position: number): void {
    // An acknowledgement past what was handed out (frames in flight before a rewind) skips them too.
    this.ring.release(Math.min(position, this.ring.writeCursor));
  }

  /** With `retain`: hand out frames again from `position` (the receiver's cursor after a reconnect). */
  rewind(position: number): void {
    this.ring.rewind(position);
  }

  /** Starts a new stream at `startSample` (default: where this one ended). */
  reset(startSample = this.ring.writeCursor): void {
    this.resampler.reset();
    this.ring.reset(startSample);
    this.#overflowSamples = 0;
    this.#flushed = false;
  }

  /**
   * push() of one block with the wasm kernel: its outputs go straight into the ring when they fit
   * without wrapping; otherwise (and for misuse, which the Resampler reports) the float path.
   */
  #encodeDirect(block: SampleBlock): number {
    const resampler = this.resampler;
    const frames = block.length / this.channels;
    if (Number.isInteger(frames)) {
      const count = resampler.outputCountFor(frames);
      const segments = this.#segments;
      if (this.ring.writeSegments(count, segments) === count && segments.secondLength === 0) {
        const written = resampler.processPcm16(block, segments.storage, segments.firstStart);
        if (written > 0) this.ring.commitWrite(written);
        return written;
      }
    }
    return this.#encode(resampler.process(block, this.#scratch));
  }

  #encode(count: number): number {
    if (count === 0) return 0;
    const ring = this.ring;
    if (ring.availableToWrite() < count) this.#dropOldest(count - ring.availableToWrite());
    const segments = this.#segments;
    const room = ring.writeSegments(count, segments);
    encodePcm16Into(this.#scratch, 0, segments.firstLength, segments.storage, segments.firstStart);
    if (segments.secondLength > 0) {
      encodePcm16Into(this.#scratch, segments.firstLength, segments.secondLength, segments.storage, segments.secondStart);
    }
    ring.commitWrite(room);
    return count;
  }

  /** Frees `need` samples from the old end (release also skips unread ones): audio is lost, so say where. */
  #dropOldest(need: number): void {
    const from = this.ring.releaseCursor;
    this.ring.release(from + need);
    this.#overflowSamples += need;
    this.#onOverflow?.(from, from + need);
  }

  #copyPayload(segments: RingSegments<'int16'>): void {
    const { storage, firstStart, firstLength, secondStart, secondLength } = segments;
    const region = this.#region16;
    if (region !== null) {
      const from = this.#storageIndex + firstStart;
      region.copyWithin(this.#payloadIndex, from, from + firstLength);
      if (secondLength > 0) {
        const second = this.#storageIndex + secondStart;
        region.copyWithin(this.#payloadIndex + firstLength, second, second + secondLength);
      }
      return;
    }
    // Big-endian host: store the bytes little-endian one by one.
    const bytes = this.#frameBuffer;
    let b = this.headerBytes;
    for (let i = 0; i < firstLength; i++, b += 2) {
      const v = storage[firstStart + i];
      bytes[b] = v & 0xff;
      bytes[b + 1] = (v >> 8) & 0xff;
    }
    for (let i = 0; i < secondLength; i++, b += 2) {
      const v = storage[secondStart + i];
      bytes[b] = v & 0xff;
      bytes[b + 1] = (v >> 8) & 0xff;
    }
  }
}

/**
 * Resampler.maxOutputFor(maxBlockFrames) + maxOutputFor(latencyFrames + 1) for these options, computed
 * without a Resampler; 0 when the Resampler would refuse them.
 */
function scratchLengthFor(inputRate: number, outputRate: number, quality: ResamplerQuality, maxBlockFrames: number): number {
  if (!isSupportedRate(inputRate) || !isSupportedRate(outputRate) || (quality !== 'best' && quality !== 'fast')) return 0;
  if (!Number.isInteger(maxBlockFrames) || maxBlockFrames < 1 || maxBlockFrames > 1 << 20) return 0;
  const same = inputRate === outputRate;
  const { up, down } = same ? { up: 1, down: 1 } : reduceRatio(inputRate, outputRate);
  const latency = same ? 0 : designPolyphase(inputRate, outputRate, quality).taps / 2;
  const clock = new ResampleClock(up, down, latency);
  return clock.maxOutputsFor(maxBlockFrames) + clock.maxOutputsFor(latency + 1);
}

/** The option checks of the constructor, as a boolean (it throws the errors after the Resampler's). */
function validLayout(frameSamples: number, headerBytes: number, bufferMs: number, scratchLength: number): boolean {
  return scratchLength > 0 && Number.isInteger(frameSamples) && frameSamples >= 1 && frameSamples <= 10 * 96000 &&
    Number.isInteger(headerBytes) && headerBytes >= 0 && headerBytes <= 65536 && bufferMs > 0 && bufferMs <= 3_600_000;
}
