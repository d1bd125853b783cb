import { INPUT_RATES } from '../contenders/index.js';
import { oursContender } from '../contenders/ours.js';
import type { CliOptions } from '../cli.js';
import type { HotLoop, Throughput } from '../hot-loop.js';
import { pairedRatio } from '../measure/paired-ratio.js';
import { measureThroughput } from '../measure/throughput.js';
import type { PathRow } from '../results.js';
import { memcpyLoop, pcm16Loops, referencePcm16Loop } from '../suites/pcm16.js';
import { frameEncoderLoop, sessionEncodeLoop } from '../suites/session-encode.js';
import { resampleLoop } from '../suites/resample.js';
import { ringLoops } from '../suites/ring.js';
import { progress } from './progress.js';
import { streamFigures } from './stream-figures.js';

/** The second table: PCM16 and memcpy, the whole encode path against the resampler, the ring. */
export async function collectPaths(options: CliOptions): Promise<PathRow[]> {
  const rows: PathRow[] = [];
  const time = (name: string, loops: readonly HotLoop[], rounds = options.rounds): Map<string, Throughput> =>
    measureThroughput(name, loops, {
      maxTime: options.maxTime,
      rounds,
      onCycle: (loop, t) => progress(`${loop.id}: ${t.msps.toFixed(1)} Ms/s, ${t.usPerStep.toFixed(3)} µs/call ±${t.rmePercent.toFixed(1)} %`),
    });
  const add = async (loop: HotLoop, throughput: Throughput | undefined): Promise<void> => {
    if (throughput === undefined) return;
    const row: PathRow = { id: loop.id, label: loop.label, inputRate: loop.inputRate, throughput };
    if (options.sections.has('stream')) row.stream = await streamFigures(loop, options.minutes);
    rows.push(row);
  };

  if (options.sections.has('pcm16')) {
    const loops = [memcpyLoop(), ...pcm16Loops(), referencePcm16Loop()];
    const results = time('pcm16', loops);
    for (const loop of loops) await add(loop, results.get(loop.id));
  }

  if (options.sections.has('session-encode')) {
    for (const inputRate of INPUT_RATES) {
      // The ratio is the target, so the pair is timed back to back in alternating order, at least
      // four times, each keeping its fastest round: drift on a shared VM then hits both alike.
      const alone = await resampleLoop(oursContender('best'), inputRate);
      const resampler: HotLoop = { ...alone, id: `session-encode/resampler-alone/${inputRate}`, label: 'Resampler best alone (paired with the session encode path)' };
      const pipeline = sessionEncodeLoop(inputRate);
      const int16 = sessionEncodeLoop(inputRate, 'int16');
      const encoder = frameEncoderLoop(inputRate);
      const results = time(`session-encode ${inputRate}`, [resampler, pipeline, int16, encoder], Math.max(4, options.rounds));
      await add(resampler, results.get(resampler.id));
      await add(pipeline, results.get(pipeline.id));
      await add(int16, results.get(int16.id));
      await add(encoder, results.get(encoder.id));
      // The target itself: per-round CPU-time ratios of the same pair, median (measure/paired-ratio.ts).
      const paired = pairedRatio(pipeline, resampler, { rounds: options.quick ? 9 : 41, roundMs: options.quick ? 40 : 60 });
      const row = rows.find((r) => r.id === pipeline.id);
      if (row !== undefined) row.pairedRatio = paired;
      progress(`session-encode ${inputRate}: paired CPU-time ratio ${paired.median.toFixed(3)} (quartiles ${paired.q1.toFixed(3)}–${paired.q3.toFixed(3)}, ${paired.rounds} rounds)`);
    }
  }

  if (options.sections.has('ring')) {
    const loops = ringLoops();
    const results = time('ring', loops);
    for (const loop of loops) await add(loop, results.get(loop.id));
  }
  return rows;
}
