import { Resampler, type ResamplerOptions } from '@soundclone/core';
import { OUTPUT_RATE, type Contender } from './contender.js';

type Quality = NonNullable<ResamplerOptions['quality']>;
type Kernel = NonNullable<ResamplerOptions['kernel']>;

/**
 * Our Resampler needs no adapter: process(input, output) and flush(output) already have the
 * benchmark's shape, so the timed call is the call an application makes.
 *
 * kernel 'auto' is what users get (WebAssembly SIMD where it can run); its label names the kernel
 * it resolved to here. 'js' is the pure TypeScript path kept for where WebAssembly is not allowed.
 */
export function oursContender(quality: Quality, kernel: Kernel = 'auto'): Contender {
  const options = (inputRate: number): ResamplerOptions => ({ inputRate, outputRate: OUTPUT_RATE, quality, kernel });
  const resolved = kernel === 'auto' ? resolvedKernel(quality) : kernel;
  return {
    id: kernel === 'auto' ? `ours-${quality}` : `ours-${quality}-${kernel}`,
    label: `ours ${quality} (${resolved})`,
    family: 'ours',
    zeroDelay: true,
    create: (inputRate) => Promise.resolve(new Resampler(options(inputRate))),
    statedLatencyMs: (inputRate) => (new Resampler(options(inputRate)).latencyFrames / inputRate) * 1000,
  };
}

/** What 'auto' picks at the benchmark's rates: one kernel name, or 'auto' if they differ. */
function resolvedKernel(quality: Quality): string {
  const kinds = new Set([48000, 44100].map((inputRate) => new Resampler({ inputRate, outputRate: OUTPUT_RATE, quality }).kernel));
  return kinds.size === 1 ? [...kinds][0] : 'auto';
}
