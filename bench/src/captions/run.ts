import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { recordTrace, type Trace } from './trace.js';
import { captionsText, runCaptionsBench, writeCaptionsResult } from './bench.js';

/**
 * `pnpm bench:captions`: the caption churn/delay table alone (bench.ts says what it measures; `pnpm
 * bench` prints the same table in its `captions` section).
 *
 * `--write` (default) puts the table in bench/results/captions.md; `--no-write` leaves it alone.
 * `--trace FILE` keeps the recorded session (and reuses it when it exists): replays without re-streaming.
 */
async function main(): Promise<void> {
  const write = !process.argv.includes('--no-write');
  const at = process.argv.indexOf('--trace');
  const traceFile = at >= 0 ? process.argv[at + 1] : undefined;
  let trace: Trace;
  if (traceFile !== undefined && existsSync(traceFile)) trace = JSON.parse(readFileSync(traceFile, 'utf8')) as Trace;
  else {
    process.stderr.write('captions: streaming the LibriVox clips at 1x through PocketSphinx…\n');
    trace = await recordTrace();
    if (traceFile !== undefined) writeFileSync(traceFile, JSON.stringify(trace));
  }
  const text = captionsText(await runCaptionsBench(trace));
  process.stdout.write(text);
  if (write) await writeCaptionsResult(text, 'pnpm bench:captions');
}

await main();
