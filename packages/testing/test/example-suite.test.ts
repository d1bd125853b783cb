import { execFileSync, spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The example a user copies (examples/testing/captions-worker: a Node captions worker and its
 * cases) passes as a user runs it: `node --test` against the built packages (the vitest and jest
 * runs, and all three from packed tarballs, are in test/smoke/testing-examples.test.ts). Built first
 * here, so the run never sees a stale dist.
 */
const root = resolve(import.meta.dirname, '../../..');
const example = resolve(root, 'examples/testing/captions-worker');

describe('example suite under node:test', () => {
  it('passes every test of the captions worker example', () => {
    execFileSync(process.execPath, [resolve(root, 'node_modules/typescript/bin/tsc'), '-b', 'packages/testing'], { cwd: root, stdio: 'pipe' });
    const run = spawnSync(process.execPath, ['--test', 'test/node/'], { cwd: example, encoding: 'utf8', timeout: 120_000 });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).toMatch(/^# pass 3$/m);
    expect(output).toMatch(/^# fail 0$/m);
    expect(run.status).toBe(0);
  });
});
