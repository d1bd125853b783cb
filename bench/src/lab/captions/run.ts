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
const USAGE = `usage: node bench/dist/lab/captions/run.js [--trace FILE] [--write | --no-write]
  --trace FILE  keep the recorded session in FILE, and replay the one there without streaming when it exists
  --write       put the table in bench/results/captions.md (the default)
  --no-write    leave bench/results/captions.md alone`;

function parse(argv: readonly string[]): { write: boolean; traceFile: string | undefined } {
  let write = true;
  let traceFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    // pnpm passes a `--` before the script's own flags through.
    if (arg === '--') continue;
    if (arg === '--no-write') write = false;
    else if (arg === '--write') write = true;
    else if (arg === '--trace' && argv[i + 1] !== undefined) traceFile = argv[++i];
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else {
      process.stderr.write(`${arg === '--trace' ? '--trace needs a file' : `unknown argument '${String(arg)}'`}\n${USAGE}\n`);
      process.exit(2);
    }
  }
  return { write, traceFile };
}

async function main(): Promise<void> {
  const { write, traceFile } = parse(process.argv.slice(2));
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
