import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const BIN = fileURLToPath(new URL('../../../packages/cli/bin/soundclone.js', import.meta.url));

/**
 * The CLI runs as shipped: compiled JavaScript. tsc -b is incremental, so this is quick when nothing
 * changed. Test files run in parallel workers: a lock directory keeps two builds from writing the
 * same dist/ files at once (the second then finds everything up to date).
 */
export function buildCli(): void {
  const lock = join(tmpdir(), `soundclone-cli-build-${createHash('sha1').update(ROOT).digest('hex').slice(0, 12)}.lock`);
  const deadline = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 300_000) rmSync(lock, { recursive: true, force: true }); // left by a killed run
      if (Date.now() > deadline) throw new Error(`another test run holds ${lock}`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
    }
  }
  try {
    execFileSync(process.execPath, [fileURLToPath(new URL('../../../node_modules/typescript/bin/tsc', import.meta.url)), '-b', 'packages/cli'], { cwd: ROOT, stdio: 'inherit' });
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * A CLI run without a base URL starts the local reference server, which keeps its state in a data
 * directory. Tests never let it write to the real home: every run gets SOUNDCLONE_DATA_DIR, a fresh
 * directory under one root per test file (removed after the file's other afterAll hooks: hooks run in
 * reverse order, and this one is registered first, when the file imports this module).
 */
const dataRoot = mkdtempSync(join(tmpdir(), 'soundclone-cli-data-'));
afterAll(() => rmSync(dataRoot, { recursive: true, force: true }));

export function freshDataDir(): string {
  return mkdtempSync(join(dataRoot, 'run-'));
}

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `soundclone ARGS` as a process without a terminal (scripts, pipes) with exactly `env`, plus a
 * fresh SOUNDCLONE_DATA_DIR when `env` has no such key (see freshDataDir).
 */
export function cli(args: readonly string[], env: Record<string, string | undefined>, timeoutMs = 60_000): Promise<CliRun> {
  const clean: Record<string, string> = { PATH: process.env['PATH'] ?? '/usr/bin:/bin' };
  if (!('SOUNDCLONE_DATA_DIR' in env)) clean['SOUNDCLONE_DATA_DIR'] = freshDataDir();
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  return new Promise((resolve) => {
    execFile(process.execPath, [BIN, ...args], { env: clean, timeout: timeoutMs, cwd: ROOT }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? ((error as { code: number }).code) : -1;
      resolve({ code, stdout, stderr });
    });
  });
}
