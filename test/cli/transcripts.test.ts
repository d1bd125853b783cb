import { execFile, spawn } from 'node:child_process';
import { chmodSync, closeSync, openSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cli, freshDataDir } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-transcripts';
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { version: string }).version;
const KEPT_NOTE = /^soundclone: local state is kept in /m;
const EPHEMERAL_NOTE = /^soundclone: --ephemeral: the local reference server keeps nothing after this command exits$/m;

/** Runs the CLI with stdout redirected to a file (not a pipe, not a terminal): the bytes as written. */
function cliToFile(args: readonly string[], env: Record<string, string>, path: string): Promise<{ code: number | null; stderr: string }> {
  const fd = openSync(path, 'w');
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env['PATH'] ?? '', ...env }, cwd: ROOT, stdio: ['ignore', fd, 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => {
      closeSync(fd);
      resolve({ code, stderr });
    });
  });
}

/** Transcripts by id, the version, and the CLI's plain-words promises, as a real process. */
describe('soundclone transcripts, version and honest notes', () => {
  let setup: CliServer | undefined;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-transcripts-');
    ({ env, dir } = setup);
  }, 120_000);
  afterAll(() => setup?.close());

  it('transcribe without --wait prints an id that transcripts wait and transcripts get accept', async () => {
    const started = await cli(['transcribe', BUNDLED_SAMPLE.path, '--title', 'by id'], env);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    expect(id).toMatch(/^\S+$/);
    expect(started.stderr).toContain(`soundclone transcripts get ${id}`);
    const waited = await cli(['transcripts', 'wait', id], env);
    expect(waited.code, waited.stderr).toBe(0);
    expect(waited.stderr).toMatch(/status COMPLETED, \d+\.\d s elapsed/);
    const text = waited.stdout.trim();
    expect(text.length).toBeGreaterThan(0);
    const got = await cli(['transcripts', 'get', id], env);
    expect(got).toMatchObject({ code: 0 });
    expect(got.stdout.trim()).toBe(text);
    const json = await cli(['transcripts', 'get', id, '--format', 'json'], env);
    expect(JSON.parse(json.stdout)).toMatchObject({ transcriptionId: id, status: 'COMPLETED', title: 'by id' });
    const srtPath = join(dir, 'by-id.srt');
    const srt = await cli(['transcripts', 'get', id, '--format', 'srt', '--out', srtPath], env);
    expect(srt.code).toBe(0);
    expect(readFileSync(srtPath, 'utf8')).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> /);
    // A history id is accepted too.
    const history = JSON.parse((await cli(['history', '--json'], env)).stdout) as Array<{ transcriptionId: string }>;
    expect(history.map((h) => h.transcriptionId)).toContain(id);
  });

  it('transcripts: an unknown id is one error line with its code, exit 1; bad use is exit 2; --help shows the usage', async () => {
    const missing = await cli(['transcripts', 'get', 'tr_nope'], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split('\n')).toHaveLength(1);
    expect(missing.stderr.trim()).toMatch(/^soundclone: error: .*\[[A-Z_]+\]$/);
    expect(await cli(['transcripts', 'get'], env)).toMatchObject({ code: 2 });
    expect(await cli(['transcripts', 'fetch', 'x'], env)).toMatchObject({ code: 2 });
    expect(await cli(['transcripts', 'get', 'x', '--format', 'mp3'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--format takes one of txt, json, srt') });
    const help = await cli(['transcripts', '--help'], {});
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/soundclone transcripts get ID \[--format txt\|json\|srt\|segmented_json\|html\|docx\|pdf\] \[--out PATH\]/);
    expect((await cli(['--help'], {})).stdout).toMatch(/^\s+transcripts get\|wait ID/m);
  });

  it('--format pdf goes to a redirected stdout (a file): the bytes are the PDF', async () => {
    const path = join(dir, 'stdout.pdf');
    const run = await cliToFile(['transcribe', BUNDLED_SAMPLE.path, '--format', 'pdf'], env, path);
    expect(run.code, run.stderr).toBe(0);
    expect(readFileSync(path).subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const docx = join(dir, 'stdout.docx');
    const piped = await cliToFile(['transcribe', BUNDLED_SAMPLE.path, '--format', 'docx'], env, docx);
    expect(piped.code, piped.stderr).toBe(0);
    expect(readFileSync(docx).subarray(0, 2).toString('latin1')).toBe('PK');
  });

  it('a long batch job shows the elapsed time on its status lines, and a line every few seconds while the status holds', async () => {
    const slow = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], taskTiming: { processingMs: 7_000 } });
    try {
      const run = await cli(['transcribe', BUNDLED_SAMPLE.path, '--wait'], { SOUNDCLONE_BASE_URL: slow.url, SOUNDCLONE_ACCESS_KEY: KEY });
      expect(run.code, run.stderr).toBe(0);
      const processing = run.stderr.split('\n').filter((l) => l.startsWith('soundclone: status PROCESSING'));
      for (const line of processing) expect(line).toMatch(/^soundclone: status PROCESSING, \d+\.\d s elapsed$/);
      expect(processing.length).toBeGreaterThanOrEqual(2);
      expect(run.stderr).toMatch(/^soundclone: status COMPLETED, ([7-9]|\d\d)\.\d s elapsed$/m);
    } finally {
      await slow.close();
    }
  }, 40_000);

  it('transcribe refuses an unreadable file before any server or upload: one SOURCE_READ_FAILED line, like captions', async () => {
    const unreadable = join(dir, 'locked.wav');
    writeFileSync(unreadable, readFileSync(BUNDLED_SAMPLE.path).subarray(0, 1000));
    chmodSync(unreadable, 0o000);
    const cases = [join(dir, 'missing.wav'), dir];
    // root reads any file whatever its mode: the permission case means something only for other users.
    if (process.getuid?.() !== 0) cases.push(unreadable);
    for (const path of cases) {
      // No server configured: had it started one, its "started the local reference server" note would show.
      const run = await cli(['transcribe', path, '--wait'], {}, 20_000);
      expect(run.code, path).toBe(1);
      expect(run.stderr.trim().split('\n'), run.stderr).toHaveLength(1);
      expect(run.stderr.trim()).toMatch(/^soundclone: error: .*\[SOURCE_READ_FAILED\]$/);
      expect(run.stdout).toBe('');
    }
    expect(statSync(unreadable).size).toBe(1000);
  });

  it('captions --sample with a FILE is a usage error (exit 2), like any other pair of sources', async () => {
    for (const args of [['--sample', BUNDLED_SAMPLE.path], [BUNDLED_SAMPLE.path, '--sample'], ['--sample', '-'], ['--sample', '--mic']]) {
      const run = await cli(['captions', ...args], {}, 10_000);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toMatch(/^soundclone: error: captions takes one source: .* \(see --help\)\n$/);
      expect(run.stdout).toBe('');
    }
  });

  it('--version and version print the CLI package version', async () => {
    for (const args of [['--version'], ['-V'], ['version']]) {
      const run = await cli(args, {}, 10_000);
      expect(run, args.join(' ')).toMatchObject({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
    }
    expect(JSON.parse((await cli(['version', '--json'], {})).stdout)).toEqual({ version: VERSION });
    expect((await cli(['--help'], {})).stdout).toMatch(/^\s+version\s/m);
  });

  it('with the in-process local server, every command says in one line where local state is kept; --ephemeral says nothing is kept', async () => {
    const dataDir = freshDataDir();
    for (const args of [['voices', 'list'], ['voices', 'create', '--name', 'Kept', BUNDLED_SAMPLE.path], ['history'], ['user']]) {
      const run = await cli([...args, '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dataDir });
      expect(run.code, `${args.join(' ')}\n${run.stderr}`).toBe(0);
      expect(run.stderr.split('\n').filter((l) => KEPT_NOTE.test(l)), args.join(' ')).toEqual([`soundclone: local state is kept in ${dataDir} (set SOUNDCLONE_DATA_DIR to move it, --ephemeral to keep nothing)`]);
      expect(run.stderr).not.toMatch(EPHEMERAL_NOTE);
    }
    const ephemeral = await cli(['voices', 'list', '--ephemeral', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dataDir });
    expect(ephemeral.code, ephemeral.stderr).toBe(0);
    expect(ephemeral.stderr.split('\n').filter((l) => EPHEMERAL_NOTE.test(l))).toHaveLength(1);
    expect(ephemeral.stderr).not.toMatch(KEPT_NOTE);
    // Against a configured server the CLI keeps nothing itself, so nothing is said.
    const remote = await cli(['voices', 'list'], env);
    expect(remote.stderr).not.toMatch(KEPT_NOTE);
    expect(remote.stderr).not.toMatch(EPHEMERAL_NOTE);
  });

  it('captions --help and transcribe --help list the audio formats they take', async () => {
    const captions = await cli(['captions', '--help'], {});
    expect(captions.stdout).toMatch(/WAV file: integer 8\/16\/24\/32-bit or float 32-bit PCM, any rate and channels/);
    expect(captions.stdout).toMatch(/headerless PCM16LE with --raw/);
    const transcribe = await cli(['transcribe', '--help'], {});
    expect(transcribe.stdout).toMatch(/WAV \(integer 8\/16\/24\/32-bit or float 32-bit, any\s+rate 1-384 kHz, 1-32 channels\)/);
    expect(transcribe.stdout).toMatch(/PCM16LE 16 kHz mono/);
    expect(transcribe.stdout).toMatch(/Matroska/);
    expect(transcribe.stdout).toMatch(/soundclone transcripts get ID/);
  });

  it("the README's spelling from the repository root: pnpm soundclone --help", async () => {
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('pnpm', ['soundclone', '--help'], { cwd: ROOT, timeout: 60_000 }, (error, stdout, stderr) => {
        resolve({ code: error === null ? 0 : ((error as { code?: number }).code ?? -1), stdout, stderr });
      });
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^usage: soundclone COMMAND/m);
    expect(run.stdout).toContain('transcripts get|wait ID');
  });

  it('the root captions script says it is building before it builds', () => {
    const script = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts['captions'] ?? '';
    expect(script).toMatch(/^echo '[^']*build[^']*' >&2 && npm run build/);
  });
});
