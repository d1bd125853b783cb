/**
 * The package ships a raw emscripten module and no types: these are the exports the thin wrapper in
 * speex.ts uses (speexdsp's speex_resampler.h, pointers as wasm32 byte offsets).
 */
declare module '@echogarden/speex-resampler-wasm/simd' {
  export interface SpeexModule {
    readonly HEAPF32: Float32Array;
    readonly HEAPU32: Uint32Array;
    _malloc(bytes: number): number;
    _free(pointer: number): void;
    /** Returns a SpeexResamplerState*; *err gets an error code. */
    _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, err: number): number;
    _speex_resampler_destroy(state: number): void;
    /** *inLength/*outLength: room in, then consumed/produced out. Returns an error code. */
    _speex_resampler_process_float(state: number, channel: number, input: number, inLength: number, output: number, outLength: number): number;
    _speex_resampler_get_input_latency(state: number): number;
    _speex_resampler_get_output_latency(state: number): number;
  }
  const factory: (options?: object) => Promise<SpeexModule>;
  export default factory;
}
