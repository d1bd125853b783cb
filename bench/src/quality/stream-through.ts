import { OUTPUT_RATE, outputRoomFor, type StreamingResampler } from '../contenders/index.js';

/**
 * Streams `input` through `stream` in `blockSize` views, as an AudioWorklet would feed it, and
 * returns everything that came out (no flush: the analyses look at the middle of the signal).
 * Not a timed path, so it allocates freely.
 */
export function streamThrough(stream: StreamingResampler, input: Float32Array, inputRate: number, blockSize = 128): Float32Array {
  const output = new Float32Array(Math.ceil((input.length * OUTPUT_RATE) / inputRate) + 256);
  const scratch = new Float32Array(outputRoomFor(blockSize, inputRate));
  let produced = 0;
  for (let at = 0; at < input.length; at += blockSize) {
    const n = stream.process(input.subarray(at, Math.min(at + blockSize, input.length)), scratch);
    output.set(scratch.subarray(0, n), produced);
    produced += n;
  }
  return output.subarray(0, produced);
}
