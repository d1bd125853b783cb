import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { TestingMeasure } from './measure.js';
import { measures } from './measures/index.js';

/**
 * `pnpm bench:testing`: the testing kit's bench. Runs every measure of `measures/index.ts` in order,
 * each in this process, and prints one table, a row per measure. A full run writes it to
 * bench/results/testing.md; `--only a,b` runs some measures and writes nothing unless `--write`,
 * so a partial run cannot replace the full record. Ctrl-C aborts the measure running.
 */
const RESULTS = fileURLToPath(new URL('../../../results/', import.meta.url));
const USAGE = `usage: node bench/dist/lab/testing/run.js [--only ID,ID] [--write | --no-write]
  --only ID,...   run these measures only (${measures.map((m) => m.id).join(', ')}); writes nothing without --write
  --write         write bench/results/testing.md (a full run does by default)
  --no-write      print only`;

interface Options {
  readonly chosen: readonly TestingMeasure[];
  readonly write: boolean;
}

function parse(argv: readonly string[]): Options {
  let only: string[] | undefined;
  let write: boolean | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--only') only = (argv[++i] ?? usage('--only needs a value')).split(',').filter((s) => s !== '');
    else if (arg === '--write') write = true;
    else if (arg === '--no-write') write = false;
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else usage(`unknown argument ${String(arg)}`);
  }
  const unknown = only?.filter((id) => !measures.some((m) => m.id === id)) ?? [];
  if (unknown.length > 0) usage(`no measure ${unknown.join(', ')}`);
  const chosen = only === undefined ? measures : measures.filter((m) => only.includes(m.id));
  return { chosen, write: write ?? only === undefined };
}

function usage(problem: string): never {
  process.stderr.write(`${problem}\n${USAGE}\n`);
  process.exit(2);
}

/** A table cell: pipes escaped, never empty. */
function cell(value: string | undefined): string {
  return value === undefined || value === '' ? '–' : value.replaceAll('|', '\\|');
}

async function main(): Promise<void> {
  const { chosen, write } = parse(process.argv.slice(2));
  const abort = new AbortController();
  process.once('SIGINT', () => abort.abort(new Error('interrupted')));
  const rows: string[] = [];
  for (const measure of chosen) {
    process.stderr.write(`${measure.id}…\n`);
    const started = performance.now();
    const outcome = await measure.run(abort.signal);
    process.stderr.write(`${measure.id}: ${outcome.result} (${((performance.now() - started) / 1000).toFixed(1)} s)\n`);
    const met = outcome.met === undefined ? '–' : outcome.met ? 'yes' : '**no**';
    rows.push(`| ${cell(measure.label)} | ${cell(outcome.result)} | ${cell(outcome.target)} | ${met} | ${cell(outcome.detail)} |`);
  }
  const text = [
    `# Testing kit (@soundclone/testing) (${cpus()[0]?.model ?? 'unknown cpu'}, ${String(cpus().length)} cores, Node ${process.version})`,
    '',
    '| measure | result | target | met | detail |',
    '|---|---|---|---|---|',
    ...rows,
  ].join('\n');
  process.stdout.write(`${text}\n`);
  if (write) {
    await mkdir(RESULTS, { recursive: true });
    await writeFile(`${RESULTS}testing.md`, `${text}\n`);
  }
}

main().catch((caught: unknown) => {
  process.stderr.write(`${caught instanceof Error ? (caught.stack ?? caught.message) : String(caught)}\n`);
  process.exitCode = 1;
});
