import { INPUT_RATES, OUTPUT_RATE, type Contender } from '../contenders/index.js';
import type { CliOptions } from '../cli.js';
import { measureThroughput } from '../measure/throughput.js';
import { measureQuality } from '../quality/figures.js';
import type { ResamplerRow } from '../results.js';
import { benchSignal } from '../signals.js';
import { countError, resampleLoop, type ResampleLoop } from '../suites/resample.js';
import { streamFigures } from './stream-figures.js';
import { progress } from './progress.js';

/**
 * The main table: for each input rate, every contender's throughput (one benchmark.js suite per
 * rate), then its streaming figures (garbage, GCs and counts over ten minutes, on the same stream),
 * then its quality. Each contender gets fresh streams from its own factory.
 */
export async function collectResamplers(contenders: readonly Contender[], options: CliOptions): Promise<ResamplerRow[]> {
  const { sections } = options;
  const rows: ResamplerRow[] = [];
  for (const inputRate of INPUT_RATES) {
    const signal = benchSignal(inputRate);
    // Streams for the timed sections; quality makes its own fresh ones.
    const loops: ResampleLoop[] = [];
    if (sections.has('resample') || sections.has('stream')) {
      for (const contender of contenders) loops.push(await resampleLoop(contender, inputRate, signal));
    }
    const byId = new Map<string, ResamplerRow>();
    for (const c of contenders) {
      const row: ResamplerRow = { id: c.id, label: c.label, family: c.family, inputRate };
      byId.set(c.id, row);
      rows.push(row);
    }

    if (sections.has('resample')) {
      const results = measureThroughput(`resample ${inputRate}`, loops, {
        maxTime: options.maxTime,
        rounds: options.rounds,
        onCycle: (loop, t) => progress(`resample ${loop.id}: ${t.msps.toFixed(2)} Ms/s, ${t.usPerStep.toFixed(2)} µs/block ±${t.rmePercent.toFixed(1)} %`),
      });
      for (const loop of loops) {
        const row = byId.get(loop.contender.id);
        const t = results.get(loop.id);
        if (row !== undefined && t !== undefined) row.throughput = t;
      }
    }

    for (const loop of loops) {
      const row = byId.get(loop.contender.id);
      if (row === undefined) continue;
      if (sections.has('stream')) {
        row.stream = await streamFigures(loop, options.minutes);
        const heldBack = countError(loop);
        const flushed = loop.flush();
        row.counts = { heldBack, hasFlush: flushed !== null, afterFlush: flushed === null ? null : countError(loop) };
        progress(`stream ${loop.id}: ${row.stream.gcs} GCs, ${row.stream.bytesPerCall?.toFixed(0) ?? '?'} B/call, held back ${heldBack}, after flush ${String(row.counts.afterFlush)}`);
      }
      loop.stream.dispose?.();
    }

    if (sections.has('quality')) {
      for (const contender of contenders) {
        const row = byId.get(contender.id);
        if (row === undefined) continue;
        row.quality = await measureQuality(contender, inputRate);
        progress(`quality ${contender.id}/${inputRate}: SNR ${row.quality.snr1kDb.toFixed(1)} dB, pass ${row.quality.worstPassbandDb.toFixed(3)} dB, 9k ${row.quality.level9kDb.toFixed(1)} dB, delay ${row.quality.delayMs.toFixed(4)} ms`);
      }
    }

    for (const contender of contenders) {
      const row = byId.get(contender.id);
      if (row !== undefined) latency(row, contender, inputRate);
    }
  }
  return rows;
}

/**
 * Ours states its latency (half the filter). The others' is measured: timeline delay plus the
 * outputs held back at the end of the stream, both of which delay a sample's arrival.
 */
function latency(row: ResamplerRow, contender: Contender, inputRate: number): void {
  if (contender.statedLatencyMs !== undefined) {
    row.latencyMs = contender.statedLatencyMs(inputRate);
  } else if (row.quality !== undefined && row.counts !== undefined) {
    row.latencyMs = row.quality.delayMs + (Math.max(0, -row.counts.heldBack) / OUTPUT_RATE) * 1000;
  }
}
