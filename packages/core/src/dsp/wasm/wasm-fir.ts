import type { PolyphaseFilter } from '../filter-design.js';
import type { KernelCursor } from '../fir-kernel.js';

type PolyExport = (pos: number, entry: number, last: number, out: number, max: number, rowBytes: number, pcm: number) => number;
type SymExport = (pos: number, last: number, out: number, max: number, coef: number, halfBytes: number, mirror: number, step: number, pcm: number) => number;
type SanitizeExport = (pos: number, count: number) => number;

const RESULT_BYTES = 16;
const ENTRY_BYTES = 16;
/** Floats per SIMD pass: four f32x4 accumulators. Rows are zero padded to a multiple of this. */
const PASS = 16;
/** Outputs computed per call into wasm; larger requests loop. Bounds the scratch area. */
const MAX_SCRATCH = 4096;
const PAGE = 65536;

const align64 = (bytes: number): number => Math.ceil(bytes / 64) * 64;
const padToPass = (floats: number): number => Math.ceil(floats / PASS) * PASS;

/**
 * One Resampler's WebAssembly SIMD FIR (fir-simd.wat): its own fixed-size memory holding the
 * history, an output scratch area, the coefficients and the phase table, and after them the bytes
 * reserved for the caller (`reserved`). The memory never grows, so the views made here stay valid;
 * `history` is where the Resampler appends its input.
 *
 * Memory is allocated in the constructor; run() allocates nothing.
 */
export class WasmFir {
  /** The input history the kernel reads; written by the Resampler. */
  readonly history: Float32Array;
  /** The caller's bytes in this memory (64-aligned), empty unless reserveBytes > 0. */
  readonly reserved: Uint8Array;
  readonly #buffer: ArrayBuffer;
  readonly #scratch: Float32Array;
  readonly #result: Int32Array;
  readonly #poly: PolyExport;
  readonly #sym: SymExport;
  readonly #sanitize: SanitizeExport;
  readonly #symmetric: boolean;
  readonly #taps: number;
  readonly #historyBase: number;
  readonly #scratchBase: number;
  readonly #tableBase: number;
  readonly #coefBase: number;
  /** poly: padded row length in bytes; sym: padded folded half row length in bytes. */
  readonly #rowBytes: number;
  readonly #mirror: number;
  readonly #step: number;

  /** Whether this filter can run here (the padded folded row must not read before the window). */
  static supports(filter: PolyphaseFilter): boolean {
    return !filter.symmetric || filter.taps - 1 - padToPass(filter.taps / 2) >= 0;
  }

  constructor(module: WebAssembly.Module, filter: PolyphaseFilter, historyLength: number, reserveBytes = 0) {
    const { up, down, taps, symmetric } = filter;
    this.#symmetric = symmetric;
    this.#taps = taps;
    const rowFloats = symmetric ? padToPass(taps / 2) : padToPass(taps);
    const rows = symmetric ? 1 : up;
    const scratchLength = Math.min(MAX_SCRATCH, Math.ceil((historyLength * up) / down) + 2);

    this.#tableBase = RESULT_BYTES;
    this.#coefBase = align64(this.#tableBase + (symmetric ? 0 : up * ENTRY_BYTES));
    this.#scratchBase = align64(this.#coefBase + rows * rowFloats * 4);
    this.#historyBase = align64(this.#scratchBase + scratchLength * 4);
    // The history is followed by one pass of floats that stay zero: padded taps read them.
    const reservedBase = align64(this.#historyBase + (historyLength + PASS) * 4);
    const end = reservedBase + reserveBytes;
    const pages = Math.ceil(end / PAGE);
    const memory = new WebAssembly.Memory({ initial: pages, maximum: pages });
    const instance = new WebAssembly.Instance(module, { env: { memory } });
    this.#poly = instance.exports['poly'] as PolyExport;
    this.#sym = instance.exports['sym'] as SymExport;
    this.#sanitize = instance.exports['sanitize'] as SanitizeExport;

    const buffer = memory.buffer;
    this.#buffer = buffer;
    this.reserved = new Uint8Array(buffer, reservedBase, reserveBytes);
    this.#result = new Int32Array(buffer, 0, 2);
    this.#scratch = new Float32Array(buffer, this.#scratchBase, scratchLength);
    this.history = new Float32Array(buffer, this.#historyBase, historyLength);
    const coefficients = new Float32Array(buffer, this.#coefBase, rows * rowFloats);
    const c = filter.coefficients;
    if (symmetric) {
      const half = taps / 2;
      for (let k = 0; k < half - 1; k++) coefficients[k] = c[k];
      // The centre tap is folded with itself: (c/2)·(h + h), exactly c·h.
      coefficients[half - 1] = c[half - 1] * 0.5;
      this.#rowBytes = rowFloats * 4;
      this.#mirror = (taps - 5) * 4;
      this.#step = down * 4;
    } else {
      const table = new Int32Array(buffer, this.#tableBase, up * (ENTRY_BYTES / 4));
      for (let p = 0; p < up; p++) {
        coefficients.set(c.subarray(p * taps, (p + 1) * taps), p * rowFloats);
        table[p * 4] = this.#coefBase + p * rowFloats * 4;
        table[p * 4 + 1] = filter.advance[p] * 4;
        table[p * 4 + 2] = this.#tableBase + filter.nextPhase[p] * ENTRY_BYTES;
      }
      this.#rowBytes = rowFloats * 4;
      this.#mirror = 0;
      this.#step = 0;
    }
  }

  /** Replaces non-finite samples in history[from, from + count) by 0; returns how many there were. */
  sanitize(from: number, count: number): number {
    return this.#sanitize(this.#historyBase + from * 4, count);
  }

  /** Whether `array` lives in this kernel's memory (so pcm16 output can be written to it directly). */
  owns(array: Int16Array): boolean {
    return array.buffer === this.#buffer;
  }

  /** The FirKernel contract (fir-kernel.ts) over `history`: outputs go through the scratch area. */
  run(available: number, cursor: KernelCursor, output: Float32Array, outputOffset: number, maxCount: number): number {
    return this.#run(available, cursor, output, outputOffset, 0, maxCount);
  }

  /**
   * run() with the outputs quantized to PCM16 (pcm16.ts's convention) by the kernel itself, from the
   * scratch area straight to byte address `outputAddress` (> 0) of this memory (see owns()): no JS loop.
   */
  runPcm16(available: number, cursor: KernelCursor, outputAddress: number, maxCount: number): number {
    return this.#run(available, cursor, null, 0, outputAddress, maxCount);
  }

  #run(available: number, cursor: KernelCursor, output: Float32Array | null, outputOffset: number, address: number, maxCount: number): number {
    const last = available - this.#taps;
    const historyBase = this.#historyBase;
    const scratch = this.#scratch;
    let position = cursor.position;
    let phase = cursor.phase;
    let written = 0;
    while (written < maxCount && position <= last) {
      const request = Math.min(maxCount - written, scratch.length);
      let n: number;
      if (this.#symmetric) {
        n = this.#sym(historyBase + position * 4, historyBase + last * 4, this.#scratchBase, request,
          this.#coefBase, this.#rowBytes, this.#mirror, this.#step, address === 0 ? 0 : address + written * 2);
      } else {
        n = this.#poly(historyBase + position * 4, this.#tableBase + phase * ENTRY_BYTES, historyBase + last * 4,
          this.#scratchBase, request, this.#rowBytes, address === 0 ? 0 : address + written * 2);
        phase = (this.#result[1] - this.#tableBase) / ENTRY_BYTES;
      }
      position = (this.#result[0] - historyBase) / 4;
      if (output !== null) {
        for (let i = 0, o = outputOffset + written; i < n; i++, o++) output[o] = scratch[i];
      }
      written += n;
      if (n < request) break;
    }
    cursor.position = position;
    cursor.phase = phase;
    return written;
  }
}
