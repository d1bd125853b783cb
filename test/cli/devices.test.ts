import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadPvRecorder } from '../../packages/node-mic/src/mic/pvrecorder-backend.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, cli } from './support/cli.js';

/**
 * The microphone where there is none: no audio server reachable (PULSE_SERVER points nowhere) and, in
 * this test machine, no sound card. pvrecorder's native ALSA probing must not reach the terminal.
 */
describe.skipIf(loadPvRecorder() instanceof Error)('soundclone without a microphone (pvrecorder)', () => {
  let dir: string;
  let env: Record<string, string>;
  beforeAll(() => {
    buildCli();
    dir = mkdtempSync(join(tmpdir(), 'cli-nomic-'));
    env = { PULSE_SERVER: `unix:${join(dir, 'nothing-here')}`, XDG_RUNTIME_DIR: dir, HOME: dir };
  }, 120_000);
  afterAll(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('captions --mic fails with its one error line and nothing else (no "ALSA lib" lines, no local server notes)', async () => {
    const run = await cli(['captions', '--mic', '--backend', 'pvrecorder'], env, 30_000);
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain('ALSA lib');
    expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
    expect(run.stderr.trim()).toMatch(/^soundclone: error: .*\[MIC_[A-Z_]+\]$/);
  });

  it("devices does not list ALSA's plugins as microphones", async () => {
    const run = await cli(['devices', '--backend', 'pvrecorder', '--json'], env, 30_000);
    expect(run.code, run.stderr).toBe(0);
    const names = (JSON.parse(run.stdout) as Array<{ name: string }>).map((d) => d.name);
    expect(names.filter((n) => /Discard all samples|Rate Converter Plugin|^Plugin (for|using)/.test(n))).toEqual([]);
  });
});
