import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, type RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, cli } from '../cli/support/cli.js';

const KEY = 'key-cli-probe';

/** One second of a 440 Hz tone as 16 kHz mono PCM16 WAV. */
function tinyWav(): Uint8Array {
  const n = 16_000;
  const out = new Uint8Array(44 + n * 2);
  const view = new DataView(out.buffer);
  out.set([...'RIFF'].map((c) => c.charCodeAt(0)), 0);
  view.setUint32(4, 36 + n * 2, true);
  out.set([...'WAVEfmt '].map((c) => c.charCodeAt(0)), 8);
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, 16_000, true);
  view.setUint32(28, 32_000, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  out.set([...'data'].map((c) => c.charCodeAt(0)), 36);
  view.setUint32(40, n * 2, true);
  for (let i = 0; i < n; i++) view.setInt16(44 + i * 2, Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / 16_000)), true);
  return out;
}

/**
 * The `soundclone` command given what users get wrong: every mistake is one line on stderr with a
 * code, exit 2 for bad command-line use (before any server starts or anything is uploaded), exit 1 for
 * what the command could not do.
 */
describe('soundclone: bad input', () => {
  let server: RunningServer;
  let dir: string;
  beforeAll(async () => {
    buildCli();
    server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY] });
    dir = mkdtempSync(join(tmpdir(), 'cli-probe-'));
    writeFileSync(join(dir, 'notes.txt'), 'not audio at all');
    writeFileSync(join(dir, 'empty.wav'), '');
    mkdirSync(join(dir, 'folder'));
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  const remote = { SOUNDCLONE_BASE_URL: undefined as string | undefined, SOUNDCLONE_ACCESS_KEY: KEY };
  const env = (): Record<string, string | undefined> => ({ ...remote, SOUNDCLONE_BASE_URL: server.url });
  const oneLine = (stderr: string): string => {
    const lines = stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    return lines[0] as string;
  };

  it('a flag value that starts with a dash says which flag and how to write it', async () => {
    const run = await cli(['history', '--limit', '-1'], env());
    expect(run.code).toBe(2);
    expect(oneLine(run.stderr)).toMatch(/--limit needs a value; write a value that starts with "-" as --limit=VALUE/);
    const written = await cli(['history', '--limit=-1'], env());
    expect(written.code).toBe(2);
    expect(oneLine(written.stderr)).toContain('--limit takes a positive integer, got "-1"');
  });

  it('a URL of another scheme is refused as usage, not reported as a missing file', async () => {
    for (const input of ['ftp://example.com/a.wav', 's3://bucket/a.wav', 'file:///etc/passwd']) {
      const run = await cli(['transcribe', input], env());
      expect(run.code).toBe(2);
      expect(oneLine(run.stderr)).toMatch(/transcribe takes a FILE or an http\(s\) URL; \w+:\/\/ URLs are not fetched/);
    }
    expect(server.requests.filter((r) => r.path.endsWith('/uploads') || r.path.endsWith('/stt/transcriptions'))).toEqual([]);
  });

  it('missing files, folders and files that are not audio fail with their code and exit 1, nothing uploaded', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['transcribe', join(dir, 'missing.wav')], /ENOENT.*\[SOURCE_READ_FAILED\]$/],
      [['transcribe', join(dir, 'folder')], /is a directory.*\[SOURCE_READ_FAILED\]$/],
      [['captions', join(dir, 'notes.txt')], /not a RIFF\/WAVE file \[SOURCE_UNSUPPORTED_FORMAT\]$/],
      [['captions', join(dir, 'empty.wav')], /not a RIFF\/WAVE file \[SOURCE_UNSUPPORTED_FORMAT\]$/],
      [['captions', join(dir, 'missing.wav')], /\[SOURCE_READ_FAILED\]$/],
    ];
    for (const [args, message] of cases) {
      const run = await cli(args, env());
      expect({ args, code: run.code }).toEqual({ args, code: 1 });
      expect(oneLine(run.stderr)).toMatch(message);
    }
    expect(server.requests.filter((r) => r.path.endsWith('/uploads'))).toEqual([]);
  });

  it('a file the service cannot decode is its UNSUPPORTED_TYPE, exit 1', async () => {
    const run = await cli(['transcribe', join(dir, 'notes.txt')], env());
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n').at(-1)).toMatch(/\[UNSUPPORTED_TYPE\]$/);
  });

  it('an --out path that cannot be written, and flags the service would refuse, are usage errors before anything is uploaded or charged', async () => {
    const audio = join(dir, 'speech.wav');
    writeFileSync(audio, Buffer.from(tinyWav()));
    const cases: Array<[string[], RegExp]> = [
      [['transcribe', audio, '--wait', '--out', join(dir, 'no-such-folder', 'out.txt')], /cannot write --out .*: the folder .* does not exist/],
      [['transcribe', audio, '--wait', '--out', join(dir, 'folder')], /cannot write --out .*: it is a directory/],
      [['transcripts', 'get', 'tr_x', '--out', join(dir, 'no-such-folder', 'out.txt')], /cannot write --out/],
      [['transcribe', audio, '--language', 'xx'], /--language must be one of auto, en, eng/],
      [['transcribe', audio, '--title', 't'.repeat(300)], /--title must be at most 256 characters/],
    ];
    const from = server.requests.length;
    for (const [args, message] of cases) {
      const run = await cli(args, env());
      expect({ args: args.slice(0, 2), code: run.code }).toEqual({ args: args.slice(0, 2), code: 2 });
      expect(oneLine(run.stderr)).toMatch(message);
    }
    expect(server.requests.slice(from)).toEqual([]);
  });

  it('a base URL with a query is refused as invalid, not sent to the wrong path', async () => {
    const run = await cli(['user'], { ...remote, SOUNDCLONE_BASE_URL: `${server.url}/?region=eu` });
    expect(run.code).toBe(1);
    expect(oneLine(run.stderr)).toMatch(/baseUrl: must not have a query or fragment \[VALIDATION_FAILED\]$/);
  });
});
