import { EncodePipeline } from '@soundclone/core';
import type { HotLoop } from '../hot-loop.js';
import { benchSignal, blocksOf } from '../signals.js';
import { BLOCK } from './resample.js';

/**
 * The whole encode path on one 128-sample block: EncodePipeline.push() (resample, PCM16 into the
 * int16 ring) and then every 20 ms frame nextFrame() has ready, as the realtime client drains it.
 * Target: within 20 % of the resampler alone, timed as a pair in collect/paths.ts.
 */
export function pipelineLoop(inputRate: number, signal = benchSignal(inputRate)): HotLoop & { frames(): number; checksum(): number } {
  const pipeline = new EncodePipeline({ inputRate, quality: 'best' });
  const blocks = blocksOf(signal, BLOCK);
  let next = 0;
  let frames = 0;
  let checksum = 0;
  return {
    id: `pipeline/best/${inputRate}`,
    label: 'EncodePipeline best (resample + PCM16 + 20 ms frames)',
    samplesPerStep: BLOCK,
    inputRate,
    step: () => {
      pipeline.push(blocks[next]);
      next = next + 1 === blocks.length ? 0 : next + 1;
      for (let frame = pipeline.nextFrame(); frame !== null; frame = pipeline.nextFrame()) {
        // Touch the payload as a sender would, so the frame's work cannot be skipped.
        checksum = (checksum + frame.bytes[frame.payloadOffset]) | 0;
        frames++;
      }
    },
    frames: () => frames,
    checksum: () => checksum,
  };
}
