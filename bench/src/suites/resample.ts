import { OUTPUT_RATE, outputRoomFor, type Contender, type StreamingResampler } from '../contenders/index.js';
import type { HotLoop } from '../hot-loop.js';
import { benchSignal, blocksOf } from '../signals.js';

/** The block size of an AudioWorklet, which the encode-path targets are stated for. */
export const BLOCK = 128;

/** A resampler streaming 128-sample blocks, with the counts the streaming figures need. */
export interface ResampleLoop extends HotLoop {
  readonly contender: Contender;
  readonly stream: StreamingResampler;
  /** Input samples fed since the stream was created. */
  consumed(): number;
  /** Outputs it produced since the stream was created. */
  produced(): number;
  /** Calls flush() once if the contender has one; returns its outputs, or null without a flush. */
  flush(): number | null;
}

/**
 * The hot function of the encode path: Resampler.process() on one 128-sample block, and the same
 * call on every contender. Blocks are views over 30 s of audio made once and cycled, so the step
 * does nothing but index, call and count.
 */
export async function resampleLoop(contender: Contender, inputRate: number, signal = benchSignal(inputRate)): Promise<ResampleLoop> {
  const stream = await contender.create(inputRate);
  const blocks = blocksOf(signal, BLOCK);
  // Room for a block's outputs, or for a flush (ours owes up to half a filter, ~100 outputs).
  const out = new Float32Array(outputRoomFor(4096, inputRate));
  let next = 0;
  let steps = 0;
  let produced = 0;
  const step = (): void => {
    produced += stream.process(blocks[next], out);
    next = next + 1 === blocks.length ? 0 : next + 1;
    steps++;
  };
  return {
    id: `resample/${contender.id}/${inputRate}`,
    label: contender.label,
    samplesPerStep: BLOCK,
    inputRate,
    step,
    contender,
    stream,
    consumed: () => steps * BLOCK,
    produced: () => produced,
    flush: () => {
      if (stream.flush === undefined) return null;
      const n = stream.flush(out);
      produced += n;
      return n;
    },
  };
}

/** out − floor(N·16000/fin): negative when outputs are held back. */
export function countError(loop: ResampleLoop): number {
  return loop.produced() - Math.floor((loop.consumed() * OUTPUT_RATE) / loop.inputRate);
}
