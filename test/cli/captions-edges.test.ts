import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cli } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-edges';

/** `soundclone captions` where it used to go wrong: unreadable sources, SIGTERM, no arguments. */
describe('soundclone captions edge cases', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-edges-');
    ({ server, dir } = setup);
    mkdirSync(join(dir, 'adir'));
  }, 120_000);
  afterAll(() => setup?.close());

  it('a missing or directory source (raw or WAV) is one SOURCE_READ_FAILED line, exit 1, before any server or session', async () => {
    for (const args of [['missing.raw', '--raw'], ['adir', '--raw'], ['missing.wav'], ['adir']]) {
      const run = await cli(['captions', join(dir, args[0] as string), ...args.slice(1)], {}, 20_000);
      expect(run.code, args.join(' ')).toBe(1);
      const lines = run.stderr.trim().split('\n');
      expect(lines, run.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(/^soundclone: error: .*\[SOURCE_READ_FAILED\]$/);
      expect(run.stdout).toBe('');
    }
  }, 60_000);

  it('a 24-bit WAVE_FORMAT_EXTENSIBLE file from sox is captioned to the end', async () => {
    const path = join(dir, 's24.wav');
    execFileSync('sox', ['-q', BUNDLED_SAMPLE.path, '-b', '24', '-c', '2', path, 'trim', '0', '2']);
    const run = await cli(['captions', path, '--pace', 'fast', '--base-url', server.url, '--access-key', KEY], {}, 30_000);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('(16000 Hz, 2 ch)');
    expect(run.stdout).toMatch(/finished: COMPLETED, \d+ lines, 2\.00 s captured \(32000 frames at 16000 Hz\)/);
  }, 40_000);

  it('SIGTERM finishes like Ctrl-C: exit 0, the summary is printed', async () => {
    const child = spawn(process.execPath, [BIN, 'captions', BUNDLED_SAMPLE.path, '--base-url', server.url, '--access-key', KEY], { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const streaming = new Promise<void>((resolve) => child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (/\[session rs_\S+: streaming\]/.test(stderr)) resolve();
    }));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    try {
      await streaming;
      await new Promise((r) => setTimeout(r, 1500));
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
    } finally {
      clearTimeout(timer);
    }
    expect(stderr).toContain('[SIGTERM: finishing the session');
    const m = /finished: COMPLETED, \d+ lines, ([\d.]+) s captured \((\d+) frames at 16000 Hz\)/.exec(stdout);
    expect(m, stdout).not.toBeNull();
    expect(Number(m?.[1])).toBeGreaterThan(1);
    expect(Number(m?.[1])).toBeLessThan(10);
    expect(stdout).toContain(`usage: ${m?.[2] ?? ''} samples received, ${m?.[2] ?? ''} captured`);
  }, 40_000);

  it('no arguments: the usage on stderr, nothing on stdout, exit 2; --help: usage on stdout, exit 0', async () => {
    const bare = await cli([], {}, 10_000);
    expect(bare.code).toBe(2);
    expect(bare.stdout).toBe('');
    expect(bare.stderr).toMatch(/^usage: soundclone COMMAND/);
    const help = await cli(['--help'], {}, 10_000);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: soundclone COMMAND/);
  }, 30_000);
});
