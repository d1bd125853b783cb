import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cli } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-balance';
const KEY_JSON = 'key-cli-balance-json';

/** `soundclone captions` when the account's balance runs out mid-session: one plain line, exit 1. */
describe('soundclone captions: balance used up', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    // 20 Characters: two seconds of audio at 600 a minute.
    setup = await startCliServer(KEY, 'cli-balance-', { accessKeys: [KEY_JSON], accountOverrides: { [KEY]: { totalMonthlyChars: 0, totalOrderChars: 20 }, [KEY_JSON]: { totalMonthlyChars: 0, totalOrderChars: 20 } }, realtimeTiming: { supplementWaitMs: 200 } });
    ({ server, dir } = setup);
  }, 120_000);
  afterAll(() => setup?.close());

  it('prints how much audio the balance paid for and how to add characters, and exits 1', async () => {
    const path = join(dir, 'five.wav');
    execFileSync('sox', ['-q', BUNDLED_SAMPLE.path, '-r', '16000', '-c', '1', '-b', '16', path, 'trim', '0', '5']);
    const run = await cli(['captions', path, '--pace', 'fast', '--base-url', server.url, '--access-key', KEY], {}, 30_000);
    expect(run.code, run.stderr).toBe(1);
    const balance = run.stdout.split('\n').filter((l) => l.startsWith('balance used up'));
    expect(balance).toEqual([
      'balance used up after 2.00 s of audio (charged 20 characters): the session ended and the rest was not transcribed; add characters to the account (a bigger plan or a character order) and start captions again',
    ]);
    // Told once, in plain words: no error line, no gap lines, no reconnects.
    expect(run.stderr).not.toContain('soundclone: error');
    expect(run.stderr).not.toMatch(/reconnecting|refused|gap/);
    expect(run.stdout).not.toContain('finished:');

    // Nothing is left after the first run: refused at creation, a typed error line.
    const again = await cli(['captions', path, '--pace', 'fast', '--base-url', server.url, '--access-key', KEY], {}, 30_000);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('[INSUFFICIENT_CHARACTERS]');

    // --json: one balance_exhausted record with the numbers.
    const json = await cli(['captions', path, '--pace', 'fast', '--json', '--base-url', server.url, '--access-key', KEY_JSON], {}, 30_000);
    expect(json.code, json.stderr).toBe(1);
    const records = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.filter((r) => r['type'] === 'balance_exhausted')).toEqual([
      expect.objectContaining({ code: 'REALTIME_BALANCE_EXHAUSTED', receivedSamples: 32_000, seconds: 2, billableCharacters: '20', notAccepted: expect.objectContaining({ from: 32_000 }) }),
    ]);
  }, 60_000);
});
