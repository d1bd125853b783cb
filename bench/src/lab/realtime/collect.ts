import type { CliOptions } from '../../cli.js';
import type { BenchReport } from '../../results.js';
import { collectCapacity } from './capacity.js';
import { collectLatency } from './latency.js';

/** The realtime suites, when picked: `--only realtime-capacity,realtime-latency`. */
export async function collectRealtime(options: CliOptions): Promise<BenchReport['realtime']> {
  const capacity = options.sections.has('realtime-capacity');
  const latency = options.sections.has('realtime-latency');
  if (!capacity && !latency) return undefined;
  const measured = capacity ? await collectCapacity({ quick: options.quick, recognizers: options.recognizers }) : { rows: [], paced: [] };
  return { capacity: measured.rows, paced: measured.paced, latency: latency ? await collectLatency({ quick: options.quick }) : [] };
}
