import { FrameEncoder, type ResamplerKernel } from '@soundclone/core';

/**
 * What the session's encode path (FrameEncoder, which `session.write()` runs) makes of one whole
 * stream: the reference the server's stored audio must equal, sample for sample.
 */
export function encodeStream(input: Float32Array, inputRate: number, options: { channels?: number; kernel?: ResamplerKernel } = {}): Int16Array {
  const channels = options.channels ?? 1;
  const encoder = new FrameEncoder({ inputRate, channels, kernel: options.kernel ?? 'auto' });
  const out = new Int16Array(Math.floor(((input.length / channels) * 16_000) / inputRate));
  let filled = 0;
  const drain = (): void => {
    for (let f = encoder.nextFrame(); f !== null; f = encoder.nextFrame()) {
      out.set(new Int16Array(f.bytes.slice(FrameEncoder.headerBytes).buffer), filled);
      filled += f.sampleCount;
    }
  };
  // A second at a time, taking the frames as they come: well inside the encoder's bufferMs.
  const step = inputRate * channels;
  for (let at = 0; at < input.length; at += step) {
    encoder.write(input.subarray(at, at + step));
    drain();
  }
  encoder.flush();
  drain();
  return out;
}
