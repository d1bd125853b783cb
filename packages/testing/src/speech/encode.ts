import { FrameEncoder } from '@soundclone/core';

/**
 * What the SDK's encode path (FrameEncoder, which a realtime session's `write()` runs) makes of a
 * whole captured stream: the PCM16 at 16 kHz the service must have stored, sample for sample, when
 * nothing was lost. `input` is interleaved Float32 at `inputRate` with `channels` channels.
 */
export function encodeLikeSdk(input: Float32Array, inputRate: number, channels = 1): Int16Array {
  const encoder = new FrameEncoder({ inputRate, channels });
  const out = new Int16Array(Math.floor(((input.length / channels) * 16_000) / inputRate));
  let filled = 0;
  const drain = (): void => {
    for (let frame = encoder.nextFrame(); frame !== null; frame = encoder.nextFrame()) {
      out.set(new Int16Array(frame.bytes.slice(FrameEncoder.headerBytes).buffer), filled);
      filled += frame.sampleCount;
    }
  };
  // A second at a time, taking frames as they come: well inside the encoder's buffer.
  const step = inputRate * channels;
  for (let at = 0; at < input.length; at += step) {
    encoder.write(input.subarray(at, at + step));
    drain();
  }
  encoder.flush();
  drain();
  return out.subarray(0, filled);
}
