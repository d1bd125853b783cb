import { encodePcm16 } from '@soundclone/core';
import type { HotLoop } from '../hot-loop.js';
import { benchSignal, blocksOf } from '../signals.js';

/** PCM16 runs on the 16 kHz side of the resampler. */
const RATE = 16000;

/**
 * encodePcm16() alone, into a caller-owned byte buffer: on 128-sample blocks (the per-call cost
 * matters most there) and on 320-sample blocks, one 20 ms frame at 16 kHz, what the pipeline
 * encodes. Target: at least 200 Ms/s.
 */
export function pcm16Loops(): HotLoop[] {
  const signal = benchSignal(RATE);
  return [128, 320].map((size) => {
    const blocks = blocksOf(signal, size);
    const bytes = new Uint8Array(size * 2);
    let next = 0;
    return {
      id: `pcm16/encode-${size}`,
      label: `encodePcm16, ${size}-sample blocks`,
      samplesPerStep: size,
      inputRate: RATE,
      step: () => {
        encodePcm16(blocks[next], bytes, 0);
        next = next + 1 === blocks.length ? 0 : next + 1;
      },
    };
  });
}

/**
 * A reference with no API around it: one inline loop, clamp first, then round half away from zero
 * by truncating v ± 0.5 (NaN falls through every compare and truncates to 0). It tells whether a
 * miss of the 200 Ms/s target is the machine (this row is slow too) or encodePcm16 (only it is).
 */
export function referencePcm16Loop(): HotLoop {
  const blocks = blocksOf(benchSignal(RATE), 128);
  const out = new Int16Array(128);
  let next = 0;
  return {
    id: 'pcm16/reference-128',
    label: 'reference: inline clamp+round loop, 128',
    samplesPerStep: 128,
    inputRate: RATE,
    step: () => {
      const block = blocks[next];
      for (let i = 0; i < block.length; i++) {
        let v = block[i] * 32768;
        v = v >= 32767 ? 32767 : v <= -32768 ? -32768 : v;
        out[i] = (v < 0 ? v - 0.5 : v + 0.5) | 0;
      }
      next = next + 1 === blocks.length ? 0 : next + 1;
    },
  };
}

/**
 * Float32Array.set() of a 128-sample block: moving the input samples at all, the physical limit of
 * any stage of the path (measured earlier at ~2,000 Ms/s).
 */
export function memcpyLoop(inputRate = 48000): HotLoop {
  const blocks = blocksOf(benchSignal(inputRate), 128);
  const dst = new Float32Array(128);
  let next = 0;
  return {
    id: `memcpy/f32-128/${inputRate}`,
    label: 'memcpy (Float32Array.set), 128-sample blocks',
    samplesPerStep: 128,
    inputRate,
    step: () => {
      dst.set(blocks[next]);
      next = next + 1 === blocks.length ? 0 : next + 1;
    },
  };
}
