import { EncodePipeline } from '@soundclone/core';

/** What a session makes of `input` at `rate` as one segment (its tail flushed): core's encode path in Node, 16 kHz PCM16. */
export function encode(input: Float32Array, rate: number): Int16Array {
  const p = new EncodePipeline({ inputRate: rate, outputRate: 16_000, channels: 1, bufferMs: 600_000 });
  p.push(input);
  p.flush();
  const out = new Int16Array(p.ring.availableToRead());
  p.ring.read(out);
  return out;
}
