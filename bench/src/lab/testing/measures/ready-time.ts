import { startTestServer } from '@soundclone/testing';
import { percentile } from '../../speech.js';
import type { TestingMeasure } from '../measure.js';

const STARTS = 200;

/**
 * `startTestServer()` ready time: from the call to the resolved server (service, store, account,
 * proxy listening), `STARTS` times in a row in one process, each closed before the next. The first
 * start pays for what a process does once (the module graph is already loaded here: importing the
 * kit is not counted) and is reported apart; the median and p95 are over the starts after it.
 */
export const measure: TestingMeasure = {
  id: 'ready-time',
  label: `startTestServer() ready time (${String(STARTS)} starts, one process)`,
  async run(signal) {
    const times: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      signal?.throwIfAborted();
      const started = performance.now();
      const server = await startTestServer();
      times.push(performance.now() - started);
      await server.close();
    }
    const first = times[0] ?? Number.NaN;
    const rest = times.slice(1).sort((a, b) => a - b);
    const median = percentile(rest, 50);
    const p95 = percentile(rest, 95);
    return {
      result: `median ${ms(median)}, p95 ${ms(p95)}`,
      target: 'every start within 150 ms, the first included',
      met: Math.max(first, rest.at(-1) ?? Number.NaN) <= 150,
      detail: `first start ${ms(first)}; slowest after it ${ms(rest.at(-1) ?? Number.NaN)}`,
    };
  },
};

function ms(value: number): string {
  return `${value < 10 ? value.toFixed(2) : value.toFixed(0)} ms`;
}
