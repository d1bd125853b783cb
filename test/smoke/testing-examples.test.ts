import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { root } from './pack.js';
import { cleanEnv, installScratchApp, packAll, soundclonePackagesOf, type PackedSet } from './scratch-app.js';

/**
 * The testing kit's example suites (examples/testing/*) as a user runs them: our packages packed
 * (`pnpm pack`, what publishing ships), each example copied into a scratch app outside the workspace,
 * installed there with `npm install` from the tarballs and the npm registry (npm's cache first), and
 * its tests run by each runner's script. Every runner must pass the example's whole suite.
 *
 * Needs the npm registry, or npm's cache holding the examples' third-party packages (a first install
 * takes a minute or two, later ones less). About two minutes in all on 2 cores.
 */
const EXAMPLES: ReadonlyArray<{ readonly name: string; readonly cases: number; readonly runners: readonly Runner[] }> = [
  { name: 'captions-worker', cases: 3, runners: ['node', 'vitest', 'jest'] },
  // Real Chromium (/usr/bin/chromium) with its fake capture device; the audio plays in real time.
  { name: 'react-captions', cases: 2, runners: ['node', 'vitest', 'jest'] },
];
type Runner = 'node' | 'vitest' | 'jest';

/** How many tests passed and failed, read from each runner's summary. */
const SUMMARY: Record<Runner, (output: string) => { passed: number; failed: number } | undefined> = {
  node: (out) => {
    const pass = /^# pass (\d+)$/m.exec(out);
    const fail = /^# fail (\d+)$/m.exec(out);
    return pass && fail ? { passed: Number(pass[1]), failed: Number(fail[1]) } : undefined;
  },
  vitest: (out) => {
    const line = /^\s*Tests\s+(.*)$/m.exec(out)?.[1];
    if (line === undefined) return undefined;
    return { passed: Number(/(\d+) passed/.exec(line)?.[1] ?? 0), failed: Number(/(\d+) failed/.exec(line)?.[1] ?? 0) };
  },
  jest: (out) => {
    const line = /^Tests:\s+(.*)$/m.exec(out)?.[1];
    if (line === undefined) return undefined;
    return { passed: Number(/(\d+) passed/.exec(line)?.[1] ?? 0), failed: Number(/(\d+) failed/.exec(line)?.[1] ?? 0) };
  },
};

let dir: string;
let packed: PackedSet;
const apps = new Map<string, string>();

beforeAll(() => {
  // The tarballs ship dist: build what the examples import first, so a run never packs a stale one.
  execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-b', 'tsconfig.json'], { cwd: root, stdio: 'pipe' });
  dir = mkdtempSync(join(tmpdir(), 'soundclone-examples-'));
  const tarballs = join(dir, 'tarballs');
  mkdirSync(tarballs);
  packed = packAll(new Set(EXAMPLES.flatMap((e) => soundclonePackagesOf(e.name))), tarballs);
  for (const example of EXAMPLES) {
    const app = join(dir, example.name);
    installScratchApp(example.name, app, packed, 240_000);
    apps.set(example.name, app);
  }
}, 600_000);

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe.each(EXAMPLES)('example $name, installed from the packed tarballs', (example) => {
  it('has our packages as npm unpacked them from the tarballs, not links into the workspace', () => {
    const app = apps.get(example.name)!;
    for (const name of soundclonePackagesOf(example.name)) {
      const folder = join(app, 'node_modules', ...name.split('/'));
      expect(lstatSync(folder).isSymbolicLink(), name).toBe(false);
      expect(readFileSync(join(folder, 'package.json'), 'utf8'), name).not.toContain('workspace:');
    }
    const lock = JSON.parse(readFileSync(join(app, 'package-lock.json'), 'utf8')) as { packages: Record<string, { resolved?: string }> };
    expect(lock.packages['node_modules/@soundclone/testing']?.resolved).toMatch(/^file:\.\.\/tarballs\/soundclone-testing-.*\.tgz$/);
  });

  it.each(example.runners)('passes every test under %s', (runner) => {
    const run = spawnSync('npm', ['run', `test:${runner}`], { cwd: apps.get(example.name)!, encoding: 'utf8', timeout: 180_000, env: cleanEnv() });
    const output = `${run.stdout}${run.stderr}`;
    expect(SUMMARY[runner](output), output).toEqual({ passed: example.cases, failed: 0 });
    expect(run.status, output).toBe(0);
  });
});
