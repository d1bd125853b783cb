import { SampleRing } from '@soundclone/core';
import type { HotLoop } from '../hot-loop.js';
import { benchSignal, blocksOf } from '../signals.js';

/**
 * SampleRing write + read of one 128-sample block into a caller buffer: the hand-off between the
 * audio thread and the encoder. Measured over a plain ArrayBuffer and over a SharedArrayBuffer
 * (Atomics cursors), the one an AudioWorklet uses. One object plays both roles here, so this is
 * the cost of the calls, not of cross-core cache traffic.
 */
export function ringLoops(inputRate = 48000): HotLoop[] {
  const blocks = blocksOf(benchSignal(inputRate), 128);
  return [false, true].map((shared) => {
    const ring = new SampleRing({ kind: 'float32', capacity: 4096, shared });
    const dst = new Float32Array(128);
    let next = 0;
    return {
      id: `ring/${shared ? 'shared' : 'local'}/${inputRate}`,
      label: `SampleRing write+read 128, ${shared ? 'SharedArrayBuffer' : 'ArrayBuffer'}`,
      samplesPerStep: 128,
      inputRate,
      step: () => {
        ring.write(blocks[next]);
        ring.read(dst);
        next = next + 1 === blocks.length ? 0 : next + 1;
      },
    };
  });
}
