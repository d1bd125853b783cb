import { DspError } from '../errors/dsp-error.js';
import { designPolyphase, type PolyphaseFilter, type ResamplerQuality } from './filter-design.js';
import { polyphaseKernel, symmetricKernel, type KernelCursor } from './fir-kernel.js';
import { quantizePcm16 } from './pcm16.js';
import { assertSupportedRate } from './rates.js';
import { ResampleClock } from './resample-clock.js';
import { firSimdModule } from './wasm/fir-simd-module.js';
import { WasmFir } from './wasm/wasm-fir.js';

export type NonFinitePolicy = 'zero' | 'throw';

/**
 * Which FIR implementation runs. 'wasm' is the WebAssembly SIMD kernel (wasm/fir-simd.wat, several
 * times faster); 'js' the plain TypeScript one, for where WebAssembly is unavailable or forbidden.
 * 'auto' (default) picks 'wasm' when it can run here, else 'js'.
 */
export type ResamplerKernel = 'auto' | 'js' | 'wasm';

/** Interleaved input: Float32 in [-1, 1], or PCM16 (read as value / 32768). */
export type SampleBlock = Float32Array | Int16Array;

export interface ResamplerOptions {
  inputRate: number;
  outputRate: number;
  /** Interleaved input channels, averaged to mono. Default 1. */
  channels?: number;
  /** Default 'best'. See QUALITY_PRESETS for what each guarantees. */
  quality?: ResamplerQuality;
  /** Input frames the history buffer takes at once; larger blocks are worked through in slices. Default 4096. */
  blockFrames?: number;
  /**
   * NaN and ±Infinity would poison every output whose window they enter. 'zero' (default) replaces
   * them with 0 and counts them in `nonFiniteSamples`; 'throw' raises DSP_NON_FINITE_SAMPLE before
   * any state changes for that block.
   */
  nonFinite?: NonFinitePolicy;
  /**
   * Default 'auto'. 'wasm' throws DSP_INVALID_OPTION where WebAssembly SIMD cannot run. The two
   * kernels sum in a different order and precision (JS: f64 accumulation, wasm: f32x4 lanes), so
   * their outputs differ in the last bits (below -130 dB); each is bit-identical across chunkings.
   */
  kernel?: ResamplerKernel;
  /**
   * Bytes of the wasm kernel's memory set aside for the caller, exposed as `reservedRegion`: an
   * Int16Array there is an output processPcm16() writes straight into, with no JS loop (FrameEncoder
   * keeps its frame slots there). Default 0; ignored by the js kernel.
   */
  reserveBytes?: number;
}

/** Float outputs per kernel call when processPcm16() has to go through JS (js kernel, or an output outside wasm memory). */
const PCM_CHUNK = 256;

/**
 * Replaces non-finite samples in history[from, to) by 0 and returns how many there were. One
 * branch-free pass first: the sum of v - v is 0 when all are finite and NaN otherwise.
 */
function sanitize(history: Float32Array, from: number, to: number): number {
  let sum = 0;
  for (let i = from; i < to; i++) sum += history[i] - history[i];
  if (sum === 0) return 0;
  let bad = 0;
  for (let i = from; i < to; i++) {
    const v = history[i];
    if (!(v - v === 0)) {
      history[i] = 0;
      bad++;
    }
  }
  return bad;
}

/** How #run computes outputs; a small integer so the dispatch is a switch, not a megamorphic call. */
const enum Mode { Copy, Polyphase, Symmetric, Wasm }

/**
 * Streaming polyphase windowed-sinc resampler with exact counts.
 *
 * Output n is the band-limited input at instant n·down/up (in input samples): there is no timeline
 * delay, and output n exists once the input reaches that instant plus half the filter. After N input
 * frames and `flush()`, exactly floor(N·up/down) outputs have been produced, bit-identical however
 * the input was chunked. The latency is `latencyFrames` input frames (half the filter).
 *
 * Memory: everything is allocated in the constructor (the coefficient table is shared between
 * instances with the same rates and quality; the wasm kernel gets its own fixed-size
 * WebAssembly.Memory holding a copy of it, the history and an output scratch area, and the module
 * is compiled once, synchronously, on first use). process(), flush(), processPcm16() and
 * flushPcm16() allocate nothing with either kernel.
 */
export class Resampler {
  readonly inputRate: number;
  readonly outputRate: number;
  readonly channels: number;
  readonly quality: ResamplerQuality;
  readonly up: number;
  readonly down: number;
  readonly taps: number;
  readonly latencyFrames: number;
  readonly nonFinite: NonFinitePolicy;
  /**
   * The kernel that runs: 'wasm' or 'js'. Same-rate streams are a plain copy and report 'js'
   * whatever was asked (after checking that a requested 'wasm' could run).
   */
  readonly kernel: 'js' | 'wasm';
  /**
   * The `reserveBytes` asked for, in the wasm kernel's memory (64-byte aligned, never detached);
   * null with the js kernel or when none were asked for.
   */
  readonly reservedRegion: Uint8Array | null;

  readonly #filter: PolyphaseFilter | null;
  readonly #mode: Mode;
  readonly #wasm: WasmFir | null;
  /** The input history; for the wasm kernel a view into its memory. */
  readonly #history: Float32Array;
  readonly #blockFrames: number;
  /** Decides every count; shared with the 24-hour test so that what is checked is what runs. */
  readonly #clock: ResampleClock;
  readonly #cursor: KernelCursor = { position: 0, phase: 0 };
  /** Float outputs on their way to PCM16 when they cannot be quantized inside wasm memory. */
  readonly #pcmChunk = new Float32Array(PCM_CHUNK);
  /** The last processPcm16() output, and its byte address in wasm memory (-1: not in it). */
  #pcmTarget: Int16Array | null = null;
  #pcmTargetBase = -1;
  /** processPcm16Runs(): where the outputs go, as (start, length) pairs in the output; null otherwise. */
  #runs: Int32Array | null = null;
  #runCount = 0;
  /** Valid samples in #history; #history[0] is input frame #historyStart. */
  #filled = 0;
  #inputFrames = 0;
  #outputFrames = 0;
  #nonFiniteSamples = 0;
  #flushed = false;

  constructor(options: ResamplerOptions) {
    const {
      inputRate, outputRate, channels = 1, quality = 'best', blockFrames = 4096, nonFinite = 'zero', kernel = 'auto', reserveBytes = 0,
    } = options;
    assertSupportedRate(inputRate, 'inputRate');
    assertSupportedRate(outputRate, 'outputRate');
    if (!Number.isInteger(channels) || channels < 1 || channels > 32) {
      throw new DspError('DSP_INVALID_OPTION', `channels must be an integer from 1 to 32, got ${String(channels)}`);
    }
    if (!Number.isInteger(blockFrames) || blockFrames < 1 || blockFrames > 1 << 20) {
      throw new DspError('DSP_INVALID_OPTION', `blockFrames must be an integer from 1 to 1048576, got ${String(blockFrames)}`);
    }
    if (nonFinite !== 'zero' && nonFinite !== 'throw') {
      throw new DspError('DSP_INVALID_OPTION', `nonFinite must be 'zero' or 'throw', got ${String(nonFinite)}`);
    }
    if (quality !== 'best' && quality !== 'fast') {
      throw new DspError('DSP_INVALID_OPTION', `quality must be 'best' or 'fast', got ${String(quality)}`);
    }
    if (!Number.isInteger(reserveBytes) || reserveBytes < 0 || reserveBytes > 2 ** 30) {
      throw new DspError('DSP_INVALID_OPTION', `reserveBytes must be an integer from 0 to 2^30, got ${String(reserveBytes)}`);
    }
    if (kernel !== 'auto' && kernel !== 'js' && kernel !== 'wasm') {
      throw new DspError('DSP_INVALID_OPTION', `kernel must be 'auto', 'js' or 'wasm', got ${String(kernel)}`);
    }
    const module = kernel === 'js' ? null : firSimdModule();
    if (kernel === 'wasm' && module === null) {
      throw new DspError('DSP_INVALID_OPTION', "kernel 'wasm' requested but WebAssembly SIMD is not available here");
    }
    this.inputRate = inputRate;
    this.outputRate = outputRate;
    this.channels = channels;
    this.quality = quality;
    this.nonFinite = nonFinite;
    this.#blockFrames = blockFrames;
    if (inputRate === outputRate) {
      // Same rate: a straight copy (after downmix). One tap, no latency, still exact counts.
      this.#filter = null;
      this.#mode = Mode.Copy;
      this.#wasm = null;
      this.kernel = 'js';
      this.up = 1;
      this.down = 1;
      this.taps = 1;
      this.latencyFrames = 0;
      this.#history = new Float32Array(blockFrames);
    } else {
      const filter = designPolyphase(inputRate, outputRate, quality);
      this.#filter = filter;
      this.up = filter.up;
      this.down = filter.down;
      this.taps = filter.taps;
      this.latencyFrames = filter.taps / 2;
      // Room for one window of kept history, a block, and the zeros flush() appends.
      const historyLength = filter.taps * 2 + blockFrames;
      if (module !== null && WasmFir.supports(filter)) {
        this.#wasm = new WasmFir(module, filter, historyLength, reserveBytes);
        this.#history = this.#wasm.history;
        this.#mode = Mode.Wasm;
        this.kernel = 'wasm';
      } else if (kernel === 'wasm') {
        throw new DspError('DSP_INVALID_OPTION', `kernel 'wasm' cannot run a ${filter.taps}-tap filter for ${inputRate} → ${outputRate}`);
      } else {
        this.#wasm = null;
        this.#history = new Float32Array(historyLength);
        this.#mode = filter.symmetric ? Mode.Symmetric : Mode.Polyphase;
        this.kernel = 'js';
      }
    }
    this.reservedRegion = this.#wasm !== null && reserveBytes > 0 ? this.#wasm.reserved : null;
    // Same rate: latency 0 and up = down = 1, so the clock counts one output per input frame.
    this.#clock = new ResampleClock(this.up, this.down, this.latencyFrames);
    this.reset();
  }

  /** Input frames consumed so far. */
  get inputFrames(): number { return this.#inputFrames; }
  /** Output samples produced so far. */
  get outputFrames(): number { return this.#outputFrames; }
  /** Non-finite input samples replaced by zero (under the 'zero' policy). */
  get nonFiniteSamples(): number { return this.#nonFiniteSamples; }
  get flushed(): boolean { return this.#flushed; }

  /** An upper bound on the outputs a block of `frames` input frames can produce; size output buffers with it. */
  maxOutputFor(frames: number): number {
    return this.#clock.maxOutputsFor(frames);
  }

  /** Exactly how many outputs process() would produce for `frames` more input frames. */
  outputCountFor(frames: number): number {
    return this.#clock.completeOutputs(this.#inputFrames + frames) - this.#outputFrames;
  }

  /** Exactly how many outputs flush() would produce now. */
  get pendingFlush(): number {
    return this.#clock.totalOutputs(this.#inputFrames) - this.#outputFrames;
  }

  /**
   * Consumes all of `input` (interleaved, `channels` per frame) and writes every output that is now
   * complete to `output` at `outputOffset`. Returns the number written. Int16 input is PCM16 read as
   * value / 32768 while it is copied into the history (the copy the filter needs anyway): no float
   * block is made for it.
   */
  process(input: SampleBlock, output: Float32Array, outputOffset = 0): number {
    return this.#process(input, output, false, outputOffset);
  }

  /**
   * process() with the outputs encoded as PCM16 (encodePcm16's rounding and clipping, native byte
   * order) into `output` at `outputOffset`: the same values as encodePcm16 of process()'s floats,
   * bit for bit. With the wasm kernel and an output inside `reservedRegion` the kernel quantizes
   * straight into it; otherwise the floats pass through a small chunk buffer.
   */
  processPcm16(input: SampleBlock, output: Int16Array, outputOffset = 0): number {
    return this.#process(input, output, true, outputOffset);
  }

  /**
   * processPcm16() into runs of `output` instead of one contiguous stretch: the outputs fill the run
   * at (runs[0], length runs[1]), then (runs[2], runs[3]), and so on for `runCount` runs, which must
   * hold them all. For a caller whose buffer is not contiguous, such as frame-shaped storage with
   * header room every frame: the kernel still quantizes straight into it (inside `reservedRegion`),
   * so a run boundary costs one more kernel call, not a copy. Same values as processPcm16().
   */
  processPcm16Runs(input: SampleBlock, output: Int16Array, runs: Int32Array, runCount: number): number {
    checkRuns(output, runs, runCount);
    this.#runs = runs;
    this.#runCount = runCount;
    try {
      return this.#process(input, output, true, 0);
    } finally {
      this.#runs = null;
    }
  }

  /**
   * Ends the stream: treats the input as followed by silence and writes the outputs still owed, so
   * the total is exactly floor(inputFrames·up/down). Further process() calls throw until reset().
   */
  flush(output: Float32Array, outputOffset = 0): number {
    return this.#flush(output, false, outputOffset);
  }

  /** flush() into PCM16, as processPcm16(). */
  flushPcm16(output: Int16Array, outputOffset = 0): number {
    return this.#flush(output, true, outputOffset);
  }

  #process(input: SampleBlock, output: Float32Array | Int16Array, pcm: boolean, outputOffset: number): number {
    if (this.#flushed) throw new DspError('DSP_INVALID_STATE', 'process() after flush(); call reset() to start a new stream');
    if (!(input instanceof Float32Array) && !(input instanceof Int16Array)) throw new DspError('DSP_INVALID_BUFFER', 'input must be a Float32Array or an Int16Array');
    const channels = this.channels;
    const frames = input.length / channels;
    if (!Number.isInteger(frames)) {
      throw new DspError('DSP_INVALID_BUFFER', `input length ${input.length} is not a whole number of ${channels}-channel frames`);
    }
    const count = this.outputCountFor(frames);
    if (this.#runs !== null) checkRunRoom(this.#runs, this.#runCount, count);
    else if (pcm) checkInt16Output(output as Int16Array, outputOffset, count);
    else checkFloatOutput(output as Float32Array, outputOffset, count);
    if (this.nonFinite === 'throw' && input instanceof Float32Array) this.#assertFinite(input);

    let written = 0;
    let consumed = 0;
    const history = this.#history;
    // Room kept free after the input for the zeros flush() appends.
    const reserve = this.#filter === null ? 0 : this.taps;
    while (consumed < frames) {
      // Compact only when the rest does not fit: one copy of the kept window every
      // ~blockFrames of input, not one per call. Moving samples changes no output.
      if (history.length - this.#filled - reserve < frames - consumed) this.#compact();
      const room = Math.min(frames - consumed, history.length - this.#filled - reserve);
      this.#append(input, consumed, room);
      consumed += room;
      written += pcm
        ? (this.#runs !== null ? this.#runPcm16Runs(output as Int16Array, written, count - written) : this.#runPcm16(output as Int16Array, outputOffset + written, count - written))
        : this.#run(output as Float32Array, outputOffset + written, count - written);
    }
    this.#inputFrames += frames;
    this.#outputFrames += written;
    return written;
  }

  #flush(output: Float32Array | Int16Array, pcm: boolean, outputOffset: number): number {
    if (this.#flushed) return 0;
    const count = this.pendingFlush;
    if (pcm) checkInt16Output(output as Int16Array, outputOffset, count);
    else checkFloatOutput(output as Float32Array, outputOffset, count);
    if (this.#filter !== null) {
      // Half a window of zeros completes every owed output; the count caps the kernel there.
      this.#history.fill(0, this.#filled, this.#filled + this.latencyFrames + 1);
      this.#filled += this.latencyFrames + 1;
    }
    const written = pcm ? this.#runPcm16(output as Int16Array, outputOffset, count) : this.#run(output as Float32Array, outputOffset, count);
    this.#outputFrames += written;
    this.#flushed = true;
    return written;
  }

  /** Forgets all input and starts a new stream with fresh counters. */
  reset(): void {
    this.#history.fill(0);
    // Outputs before input frame 0 see silence: half a window of zeros stands in front of the first frame.
    this.#filled = this.#filter === null ? 0 : this.latencyFrames - 1;
    this.#cursor.position = 0;
    this.#cursor.phase = 0;
    this.#inputFrames = 0;
    this.#outputFrames = 0;
    this.#nonFiniteSamples = 0;
    this.#flushed = false;
  }

  #assertFinite(input: Float32Array): void {
    for (let i = 0; i < input.length; i++) {
      const v = input[i];
      if (!(v - v === 0)) throw new DspError('DSP_NON_FINITE_SAMPLE', `input sample ${i} is ${String(v)}`);
    }
  }

  /** Copies (and downmixes) frames into the history, replacing non-finite samples by zero. */
  #append(input: SampleBlock, fromFrame: number, frames: number): void {
    if (input instanceof Int16Array) {
      this.#appendPcm16(input, fromFrame, frames);
      return;
    }
    const history = this.#history;
    const channels = this.channels;
    let h = this.#filled;
    let bad = 0;
    if (channels === 1 && fromFrame === 0 && frames === input.length) {
      // The usual case, a whole mono block: one memcpy, then a check (about 2x faster than a
      // checked copy loop; a subarray() for the other cases would allocate).
      history.set(input, h);
      bad = this.#wasm === null ? sanitize(history, h, h + frames) : this.#wasm.sanitize(h, frames);
      h += frames;
    } else if (channels === 1) {
      for (let i = fromFrame, end = fromFrame + frames; i < end; i++) {
        const v = input[i];
        // v - v is 0 for finite v and NaN otherwise; the compare is false for NaN.
        if (v - v === 0) history[h++] = v;
        else { history[h++] = 0; bad++; }
      }
    } else {
      const scale = 1 / channels;
      for (let f = fromFrame, end = fromFrame + frames; f < end; f++) {
        let sum = 0;
        for (let c = 0, i = f * channels; c < channels; c++, i++) {
          const v = input[i];
          if (v - v === 0) sum += v;
          else bad++;
        }
        history[h++] = sum * scale;
      }
    }
    this.#filled = h;
    this.#nonFiniteSamples += bad;
  }

  /**
   * #append for PCM16: value / 32768 (exact in float32), so the history holds the same floats a caller
   * converting first would have pushed, and the downmix sums them in the same order.
   */
  #appendPcm16(input: Int16Array, fromFrame: number, frames: number): void {
    const history = this.#history;
    const channels = this.channels;
    let h = this.#filled;
    if (channels === 1) {
      for (let i = fromFrame, end = fromFrame + frames; i < end; i++) history[h++] = input[i] / 32768;
    } else {
      const scale = 1 / channels;
      for (let f = fromFrame, end = fromFrame + frames; f < end; f++) {
        let sum = 0;
        for (let c = 0, i = f * channels; c < channels; c++, i++) sum += Math.fround(input[i] / 32768);
        history[h++] = sum * scale;
      }
    }
    this.#filled = h;
  }

  #run(output: Float32Array, offset: number, maxCount: number): number {
    switch (this.#mode) {
      case Mode.Wasm:
        return this.#wasm!.run(this.#filled, this.#cursor, output, offset, maxCount);
      case Mode.Symmetric:
        return symmetricKernel(this.#filter!, this.#history, this.#filled, this.#cursor, output, offset, maxCount);
      case Mode.Polyphase:
        return polyphaseKernel(this.#filter!, this.#history, this.#filled, this.#cursor, output, offset, maxCount);
      case Mode.Copy: {
        const history = this.#history;
        const from = this.#cursor.position;
        const n = Math.min(maxCount, this.#filled - from);
        for (let i = 0; i < n; i++) output[offset + i] = history[from + i];
        this.#cursor.position = from + n;
        return n;
      }
    }
  }

  /** #run() into PCM16: in wasm memory when it can, else through #pcmChunk, quantized by pcm16.ts. */
  #runPcm16(output: Int16Array, offset: number, maxCount: number): number {
    // The pipeline passes the same ring storage every time: remember the last answer of owns().
    if (output !== this.#pcmTarget) {
      this.#pcmTarget = output;
      this.#pcmTargetBase = this.#wasm !== null && this.#wasm.owns(output) ? output.byteOffset : -1;
    }
    if (this.#pcmTargetBase >= 0) {
      return this.#wasm!.runPcm16(this.#filled, this.#cursor, this.#pcmTargetBase + offset * 2, maxCount);
    }
    const chunk = this.#pcmChunk;
    let written = 0;
    while (written < maxCount) {
      const request = Math.min(maxCount - written, chunk.length);
      const n = this.#run(chunk, 0, request);
      quantizePcm16(chunk, 0, n, output, offset + written);
      written += n;
      if (n < request) break;
    }
    return written;
  }

  /** #runPcm16() for the outputs from logical index `at` on, laid into #runs in order. */
  #runPcm16Runs(output: Int16Array, at: number, maxCount: number): number {
    const runs = this.#runs!;
    const runCount = this.#runCount;
    let r = 0;
    let skip = at;
    while (r < runCount && skip >= runs[2 * r + 1]!) {
      skip -= runs[2 * r + 1]!;
      r++;
    }
    let written = 0;
    while (written < maxCount && r < runCount) {
      const want = Math.min(runs[2 * r + 1]! - skip, maxCount - written);
      const n = this.#runPcm16(output, runs[2 * r]! + skip, want);
      written += n;
      if (n < want) break;
      r++;
      skip = 0;
    }
    return written;
  }

  /** Moves the samples the next output still needs to the front of the history. */
  #compact(): void {
    const cursor = this.#cursor;
    const keep = cursor.position;
    if (keep === 0) return;
    this.#history.copyWithin(0, keep, this.#filled);
    this.#filled -= keep;
    cursor.position = 0;
  }
}

function checkFloatOutput(output: Float32Array, offset: number, count: number): void {
  if (!(output instanceof Float32Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be a Float32Array');
  checkRoom(output.length, offset, count);
}

function checkInt16Output(output: Int16Array, offset: number, count: number): void {
  if (!(output instanceof Int16Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be an Int16Array');
  checkRoom(output.length, offset, count);
}

function checkRuns(output: Int16Array, runs: Int32Array, runCount: number): void {
  if (!(output instanceof Int16Array)) throw new DspError('DSP_INVALID_BUFFER', 'output must be an Int16Array');
  if (!(runs instanceof Int32Array) || !Number.isInteger(runCount) || runCount < 0 || runCount * 2 > runs.length) {
    throw new DspError('DSP_INVALID_BUFFER', `runs must be an Int32Array holding ${String(runCount)} (start, length) pairs`);
  }
  for (let r = 0; r < runCount; r++) {
    const start = runs[2 * r]!;
    const length = runs[2 * r + 1]!;
    if (start < 0 || length < 0 || start + length > output.length) {
      throw new DspError('DSP_INVALID_BUFFER', `run ${r} [${start}, ${start + length}) is outside an output of ${output.length}`);
    }
  }
}

function checkRunRoom(runs: Int32Array, runCount: number, count: number): void {
  let room = 0;
  for (let r = 0; r < runCount; r++) room += runs[2 * r + 1]!;
  if (room < count) throw new DspError('DSP_OUTPUT_TOO_SMALL', `the runs have room for ${room} samples; this call produces ${count}`);
}

function checkRoom(length: number, offset: number, count: number): void {
  if (!Number.isInteger(offset) || offset < 0) throw new DspError('DSP_INVALID_BUFFER', `output offset ${String(offset)} is not a non-negative integer`);
  if (length - offset < count) {
    throw new DspError('DSP_OUTPUT_TOO_SMALL', `output has room for ${Math.max(0, length - offset)} samples at offset ${offset}; this call produces ${count}`);
  }
}
