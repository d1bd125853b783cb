#!/usr/bin/env node
/**
 * Runs the testing kit's example suites (examples/testing/*) over and over and stops at the first
 * failure, printing how many repetitions in a row passed.
 *
 *   node scripts/repeat-examples.mjs [--times 1000] [--runner-times 3] [--example captions-worker] [--lanes 1]
 *
 * Two loops, in order:
 *  1. In this process, `--times` repetitions (default 1,000): each starts a fresh test server (and the
 *     example's `openFixture(server)` when it has one: the React example's browser and backend), as
 *     each runner's suite file does, runs every case of the example's `test/*.cases.js` in order, and
 *     closes them. Starting a test runner costs seconds, so this is the loop that makes a thousand
 *     feasible: about 1.7 s a repetition for the captions worker; the React example plays its audio
 *     in real time in Chromium, about 10 s (`--example NAME` runs one example). `--lanes N` runs N
 *     repetitions at a time, each with its own server, fixture and browser, so the wait for real-time
 *     audio overlaps: the count is of repetitions passed before the first failure in any lane. At the
 *     end, the process must hold no more handles than before it.
 *  2. `--runner-times` repetitions (default 3) of the example's own `npm test`: every runner it
 *     declares (node:test, vitest, jest), each a real process, as a user runs them.
 *
 * Needs a build (`pnpm build`): the examples import the packages' dist through the workspace links.
 * Exit code 0 when every repetition passed, 1 at the first failure (its error printed).
 */
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const examplesDir = join(root, 'examples', 'testing');

const { values } = parseArgs({
  options: {
    times: { type: 'string', default: '1000' },
    'runner-times': { type: 'string', default: '3' },
    example: { type: 'string', multiple: true },
    lanes: { type: 'string', default: '1' },
  },
});
const times = Number(values.times);
const runnerTimes = Number(values['runner-times']);
const lanes = Number(values.lanes);
if (!Number.isInteger(times) || times < 0 || !Number.isInteger(runnerTimes) || runnerTimes < 0 || !Number.isInteger(lanes) || lanes < 1) {
  console.error('--times and --runner-times take a whole number, --lanes one from 1');
  process.exit(2);
}
const examples = values.example ?? readdirSync(examplesDir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();

/** The cases modules of an example: every test/*.cases.js. */
function casesModules(example) {
  const dir = join(examplesDir, example, 'test');
  return readdirSync(dir).filter((f) => f.endsWith('.cases.js')).sort().map((f) => join(dir, f));
}

/** Loaded once: a repetition re-runs the cases, not the module (the runners load it once a run too). */
const suites = [];
for (const example of examples) {
  for (const file of casesModules(example)) {
    const mod = await import(pathToFileURL(file).href);
    // The kit from the example's own dependencies, the copy its cases use.
    const kit = await import(pathToFileURL(join(examplesDir, example, 'node_modules', '@soundclone', 'testing', 'dist', 'index.js')).href);
    suites.push({ name: `${example}/${file.slice(file.lastIndexOf('/') + 1)}`, kit, mod });
  }
}
if (suites.length === 0) {
  console.error(`no test/*.cases.js in ${examples.join(', ')}`);
  process.exit(2);
}

/** Runs every suite once, as one runner run would: a server per suite, the cases in order. */
async function runOnce() {
  for (const { name, kit, mod } of suites) {
    const server = await kit.startTestServer({ script: mod.script });
    try {
      // What an example's cases share besides the server (the React example's browser and backend).
      const fixture = mod.openFixture === undefined ? undefined : await mod.openFixture(server);
      try {
        for (const c of mod.cases) {
          try {
            await c.run(server, fixture);
          } catch (error) {
            throw Object.assign(new Error(`${name}: ${c.name}`), { cause: error });
          }
        }
      } finally {
        await fixture?.close();
      }
    } finally {
      await server.close();
    }
  }
}

const handlesBefore = process.getActiveResourcesInfo().length;
const started = performance.now();
let passed = 0;
const caseCount = suites.reduce((n, s) => n + s.mod.cases.length, 0);
console.log(`in process: ${times} repetitions of ${suites.map((s) => s.name).join(', ')} (${caseCount} cases each)${lanes > 1 ? `, ${lanes} at a time` : ''}`);
let begun = 0;
let failure;
/** One lane: repetitions one after another until the count is reached or any lane failed. */
async function lane() {
  while (failure === undefined && begun < times) {
    begun++;
    try {
      await runOnce();
    } catch (error) {
      failure ??= { error, after: passed };
      return;
    }
    if (failure !== undefined) return;
    passed++;
    if (passed % 10 === 0) console.log(`  ${passed} of ${times} in a row (${((performance.now() - started) / 1000).toFixed(0)} s)`);
  }
}
await Promise.all(Array.from({ length: lanes }, () => lane()));
if (failure !== undefined) {
  console.error(`FAILED after ${failure.after} repetitions in a row:`);
  console.error(failure.error);
  process.exit(1);
}
// Let closed sockets finish closing before the handles are counted.
await new Promise((r) => setTimeout(r, 200));
const handlesAfter = process.getActiveResourcesInfo().length;
console.log(`in process: ${passed} of ${times} in a row passed, ${passed * caseCount} cases, ${((performance.now() - started) / 1000).toFixed(1)} s; handles ${handlesBefore} before, ${handlesAfter} after`);
if (handlesAfter > handlesBefore) {
  console.error(`FAILED: the repetitions left ${handlesAfter - handlesBefore} handles open: ${process.getActiveResourcesInfo().join(', ')}`);
  process.exit(1);
}

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
for (const example of examples) {
  for (let i = 0; i < runnerTimes; i++) {
    const run = spawnSync(npm, ['test'], { cwd: join(examplesDir, example), encoding: 'utf8', timeout: 300_000 });
    if (run.status !== 0) {
      console.error(`FAILED: ${example} npm test, run ${i + 1}, after ${i} in a row:\n${run.stdout}${run.stderr}`);
      process.exit(1);
    }
  }
  if (runnerTimes > 0) console.log(`through the runners: ${example} npm test ${runnerTimes} of ${runnerTimes} in a row passed`);
}
