import { Resampler, encodePcm16, type ResamplerKernel } from '../../src/index.js';

/**
 * A whole stream through a bare Resampler (float output) and encodePcm16: what the encode path must
 * produce for it, sample for sample, computed without FrameEncoder, its slots or the fused kernel path.
 */
export function offlinePcm16(input: Float32Array, inputRate: number, options: { channels?: number; kernel?: ResamplerKernel } = {}): Int16Array {
  const r = new Resampler({ inputRate, outputRate: 16_000, channels: options.channels ?? 1, kernel: options.kernel ?? 'auto' });
  const frames = input.length / r.channels;
  const out = new Float32Array(r.maxOutputFor(frames) + r.latencyFrames + 4);
  let n = r.process(input, out);
  n += r.flush(out, n);
  const bytes = new Uint8Array(n * 2);
  encodePcm16(out.subarray(0, n), bytes);
  return new Int16Array(bytes.buffer);
}
