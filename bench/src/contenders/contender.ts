/**
 * What the benchmark needs from a resampler: a stream that takes 128-sample blocks and writes into a
 * caller-owned buffer. Our Resampler satisfies it as is; the other libraries get a thin adapter each
 * (one file per library), written the way a careful user would: no allocation of ours per call.
 */
export interface StreamingResampler {
  /** Consumes all of `input` and writes every output it produces to output[0, n); returns n. */
  process(input: Float32Array, output: Float32Array): number;
  /** Writes the outputs still owed at end of stream; absent where the library cannot do that. */
  flush?(output: Float32Array): number;
  /** Frees native (WebAssembly) memory; absent where there is none. */
  dispose?(): void;
}

export type ContenderFamily = 'ours' | 'libsamplerate' | 'speex' | 'linear';

export interface Contender {
  /** Stable key used in the JSON, e.g. 'ours-best-wasm'. */
  readonly id: string;
  /** What the table prints. */
  readonly label: string;
  readonly family: ContenderFamily;
  /**
   * True for ours: output n is the input at instant n·fin/16000 exactly (no timeline delay), so the
   * quality code checks the measured delay is zero instead of compensating it.
   */
  readonly zeroDelay: boolean;
  /** A fresh stream from `inputRate` to 16 kHz. Async because WebAssembly modules load async. */
  create(inputRate: number): Promise<StreamingResampler>;
  /** Algorithmic latency in ms when the implementation states it (ours does); else it is measured. */
  statedLatencyMs?(inputRate: number): number;
}

/** Every contender resamples to this rate: the realtime socket's PCM16 rate. */
export const OUTPUT_RATE = 16000;

/** Output room for one input block of `frames`, with slack for rounding and held-back bursts. */
export function outputRoomFor(frames: number, inputRate: number): number {
  return Math.ceil((frames * OUTPUT_RATE) / inputRate) + 64;
}
