import LibSampleRate from '@alexanderolsen/libsamplerate-js';
import { OUTPUT_RATE, type Contender, type StreamingResampler } from './contender.js';

type LibSampleRateSrc = Awaited<ReturnType<typeof LibSampleRate.create>>;

/** The converter presets we compare against (SINC_* are libsamplerate's windowed-sinc ones). */
export type LibSampleRatePreset = 'SRC_SINC_FASTEST' | 'SRC_SINC_MEDIUM_QUALITY' | 'SRC_SINC_BEST_QUALITY';

const SHORT_NAME: Record<LibSampleRatePreset, string> = {
  SRC_SINC_FASTEST: 'FASTEST',
  SRC_SINC_MEDIUM_QUALITY: 'MEDIUM',
  SRC_SINC_BEST_QUALITY: 'BEST',
};

/**
 * libsamplerate-js in its streaming mode, `full(input, output, frames)`, with a caller-owned output
 * buffer: the cheapest way the package can stream. Still, per our earlier measurements, each
 * call makes ~225 B of embind garbage, and `full()` never sets end-of-input, so the last 19–143
 * outputs (the filter delay) are held back and there is no flush. Only one call per instance is
 * ever mixed: never `simple()` on the same instance, which breaks its streaming state.
 */
class LibSampleRateStream implements StreamingResampler {
  readonly #src: LibSampleRateSrc;
  /** full() reports its output count through an object; one, reused. */
  readonly #frames = { frames: 0 };

  constructor(src: LibSampleRateSrc) {
    this.#src = src;
  }

  process(input: Float32Array, output: Float32Array): number {
    // full() demands output.length ≥ ratio·input.length (outputRoomFor() gives that) and copies its
    // result into `output` element by element.
    this.#src.full(input, output, this.#frames);
    return this.#frames.frames;
  }

  dispose(): void {
    this.#src.destroy();
  }
}

export function libSampleRateContender(preset: LibSampleRatePreset): Contender {
  return {
    id: `libsamplerate-${SHORT_NAME[preset].toLowerCase()}`,
    label: `libsamplerate-js ${SHORT_NAME[preset]}`,
    family: 'libsamplerate',
    zeroDelay: false,
    create: async (inputRate) => {
      // Each create() instantiates its own WebAssembly module (~50 ms): the glue keeps global state.
      const src = await LibSampleRate.create(1, inputRate, OUTPUT_RATE, { converterType: LibSampleRate.ConverterType[preset] });
      return new LibSampleRateStream(src);
    },
  };
}
