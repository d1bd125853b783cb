import createSpeexModule, { type SpeexModule } from '@echogarden/speex-resampler-wasm/simd';
import { OUTPUT_RATE, outputRoomFor, type Contender, type StreamingResampler } from './contender.js';

/** Largest input block one call takes; the benchmark feeds 128. */
const MAX_BLOCK = 4096;

/**
 * The thin wrapper we measured speexdsp's resampler with: the package is a
 * raw emscripten module, so we malloc the input, output and length cells once and make the heap
 * views once, after the last malloc (a later heap growth would detach them; nothing here grows it).
 * A call copies the block in, runs speex_resampler_process_float and copies the output out: zero
 * JS garbage. The SIMD build, as a user on Node 20 or a current browser would pick.
 *
 * speex has no flush: its filter delay (half the filter) shows up as timeline delay instead, so the
 * count is exact but every output is late by that much. The quality code measures it.
 */
class SpeexStream implements StreamingResampler {
  readonly #module: SpeexModule;
  readonly #state: number;
  readonly #inPtr: number;
  readonly #outPtr: number;
  readonly #inLenPtr: number;
  readonly #outLenPtr: number;
  readonly #outRoom: number;
  readonly #inView: Float32Array;
  readonly #outView: Float32Array;
  readonly #u32: Uint32Array;

  constructor(module: SpeexModule, inputRate: number, quality: number) {
    this.#module = module;
    const err = module._malloc(4);
    this.#state = module._speex_resampler_init(1, inputRate, OUTPUT_RATE, quality, err);
    const code = module.HEAPU32[err >> 2];
    module._free(err);
    if (this.#state === 0 || code !== 0) throw new Error(`speex_resampler_init failed with code ${code}`);
    this.#outRoom = outputRoomFor(MAX_BLOCK, inputRate);
    this.#inPtr = module._malloc(MAX_BLOCK * 4);
    this.#outPtr = module._malloc(this.#outRoom * 4);
    this.#inLenPtr = module._malloc(4);
    this.#outLenPtr = module._malloc(4);
    this.#inView = new Float32Array(module.HEAPF32.buffer, this.#inPtr, MAX_BLOCK);
    this.#outView = new Float32Array(module.HEAPF32.buffer, this.#outPtr, this.#outRoom);
    this.#u32 = module.HEAPU32;
  }

  /** Input frames of delay speex reports (half its filter); its latency on the timeline. */
  get inputLatency(): number {
    return this.#module._speex_resampler_get_input_latency(this.#state);
  }

  process(input: Float32Array, output: Float32Array): number {
    if (input.length > MAX_BLOCK) throw new RangeError(`speex adapter takes at most ${MAX_BLOCK} samples per call`);
    this.#inView.set(input);
    const u32 = this.#u32;
    u32[this.#inLenPtr >> 2] = input.length;
    u32[this.#outLenPtr >> 2] = this.#outRoom;
    this.#module._speex_resampler_process_float(this.#state, 0, this.#inPtr, this.#inLenPtr, this.#outPtr, this.#outLenPtr);
    // With room for every output, speex consumes the whole block; anything else would lose input.
    if (u32[this.#inLenPtr >> 2] !== input.length) throw new Error('speex left input unconsumed');
    const n = u32[this.#outLenPtr >> 2];
    // A copy loop, not output.set(outView.subarray(...)): subarray() would allocate a view per call.
    const out = this.#outView;
    for (let i = 0; i < n; i++) output[i] = out[i];
    return n;
  }

  dispose(): void {
    const m = this.#module;
    m._speex_resampler_destroy(this.#state);
    m._free(this.#inPtr);
    m._free(this.#outPtr);
    m._free(this.#inLenPtr);
    m._free(this.#outLenPtr);
  }
}

export function speexContender(quality: number): Contender {
  return {
    id: `speex-q${quality}`,
    label: `speex-wasm q${quality} (SIMD)`,
    family: 'speex',
    zeroDelay: false,
    // One module instance per stream, as two independent users of the package would have.
    create: async (inputRate) => new SpeexStream(await createSpeexModule(), inputRate, quality),
  };
}
