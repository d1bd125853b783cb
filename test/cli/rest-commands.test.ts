import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { startServer, type RunningServer } from '@soundclone/server';
import { SoundClone } from '@soundclone/core';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, cli } from './support/cli.js';
import { startCliServer, type CliServer } from './support/cli-server.js';

const KEY = 'key-cli-rest';

/** The REST subcommands as scripts use them: a real process, no terminal, config from the environment. */
describe('soundclone REST subcommands against the reference server', () => {
  let setup: CliServer | undefined;
  let server: RunningServer;
  let env: Record<string, string>;
  let dir: string;
  beforeAll(async () => {
    setup = await startCliServer(KEY, 'cli-rest-');
    ({ server, env, dir } = setup);
  }, 120_000);
  afterAll(() => setup?.close());

  it('user: a table for people, the same facts as JSON for scripts', async () => {
    const info = await new SoundClone({ accessKey: KEY, baseUrl: server.url }).user.info();
    const table = await cli(['user'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`^plan\\s+${info.plan}$`, 'm'));
    expect(table.stdout).toMatch(new RegExp(`^monthly characters\\s+${String(info.benefit.usedMonthlyChars)} / ${String(info.benefit.totalMonthlyChars)}$`, 'm'));
    const json = await cli(['user', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual(JSON.parse(JSON.stringify(info)));
    expect(json.stderr).toBe('');
  });

  it('voices create, list, rename', async () => {
    const created = await cli(['voices', 'create', '--name', 'Narrator', BUNDLED_SAMPLE.path, '--json'], env);
    expect(created.code).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    expect(id).toMatch(/\S/);
    const listed = await cli(['voices', 'list'], env);
    expect(listed.stdout.split('\n')[0]).toMatch(/^id\s+name\s+type\s+files\s+bytes$/);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+Narrator\\s`, 'm'));
    const renamed = await cli(['voices', 'rename', id, 'Storyteller'], env);
    expect(renamed).toMatchObject({ code: 0, stdout: `renamed voice ${id} to Storyteller\n` });
    const json = JSON.parse((await cli(['voices', 'list', '--json'], env)).stdout) as Array<{ id: string; name: string }>;
    expect(json.find((v) => v.id === id)?.name).toBe('Storyteller');
  });

  it('transcribe --wait: upload, progress to a terminal status, download; history lists it', async () => {
    const run = await cli(['transcribe', BUNDLED_SAMPLE.path, '--wait', '--title', 'cli sample'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/soundclone: uploading .*sense-and-sensibility\.wav/);
    const id = /transcription (\S+): /.exec(run.stderr)?.[1] as string;
    expect(run.stderr).toMatch(/status COMPLETED/);
    expect(run.stdout.trim().length).toBeGreaterThan(0);
    const srtPath = join(dir, 'out.srt');
    const srt = await cli(['transcribe', BUNDLED_SAMPLE.path, '--format', 'srt', '--out', srtPath], env);
    expect(srt.code).toBe(0);
    expect(readFileSync(srtPath, 'utf8')).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> /);
    const history = await cli(['history', '--json'], env);
    const items = JSON.parse(history.stdout) as Array<{ transcriptionId: string; title: string; status: string }>;
    expect(items.find((t) => t.transcriptionId === id)).toMatchObject({ title: 'cli sample', status: 'COMPLETED' });
    const table = await cli(['history', '--limit', '1'], env);
    expect(table.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('transcribe URL: the service fetches it; a source that answers 404 is one error line and exit 1', async () => {
    const media = createServer((req, res) => {
      if (req.url === '/talk.wav') res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(readFileSync(BUNDLED_SAMPLE.path));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', resolve));
    const port = (media.address() as AddressInfo).port;
    const fetching = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], allowMediaHosts: [`127.0.0.1:${String(port)}`] });
    try {
      const viaUrl = { SOUNDCLONE_BASE_URL: fetching.url, SOUNDCLONE_ACCESS_KEY: KEY };
      const ok = await cli(['transcribe', `http://127.0.0.1:${String(port)}/talk.wav`, '--wait', '--format', 'json'], viaUrl);
      expect(ok.code).toBe(0);
      expect(ok.stderr).not.toContain('uploading');
      expect(JSON.parse(ok.stdout)).toMatchObject({ status: 'COMPLETED', audioDurationMs: '15390' });
      const missing = await cli(['transcribe', `http://127.0.0.1:${String(port)}/missing.wav`, '--wait'], viaUrl);
      expect(missing.code).toBe(1);
      // The reference service checks the source at create time: one error line with its code.
      expect(missing.stderr.trim().split('\n').at(-1)).toMatch(/^soundclone: error: source answered 404.*\[[A-Z_]+\]$/);
    } finally {
      await fetching.close();
      await new Promise((resolve) => media.close(resolve));
    }
  });

  it('errors: one line and a non-zero exit; a stack only with --debug', async () => {
    const bad = await cli(['user'], { ...env, SOUNDCLONE_ACCESS_KEY: 'wrong' });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toMatch(/^soundclone: error: .*\[UNAUTHORIZED\]$/m);
    const debug = await cli(['user', '--debug'], { ...env, SOUNDCLONE_ACCESS_KEY: 'wrong' });
    expect(debug.code).toBe(1);
    expect(debug.stderr).toMatch(/\n\s+at /);
    const flagWins = await cli(['user', '--access-key', KEY], { ...env, SOUNDCLONE_ACCESS_KEY: 'wrong' });
    expect(flagWins.code).toBe(0);
    expect(await cli(['nope'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command "nope"') });
    const flag = await cli(['user', '--bogus'], env);
    expect(flag.code).toBe(2);
    expect(flag.stderr.trim().split('\n')).toHaveLength(1);
    const half = await cli(['user', '--base-url', server.url], {});
    expect(half).toMatchObject({ code: 2, stderr: expect.stringContaining('an access key is needed') });
    const missing = await cli(['captions', join(dir, 'missing.wav')], env);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/soundclone: error: .*missing\.wav.*\[SOURCE_READ_FAILED\]/);
    expect(await cli(['captions'], env)).toMatchObject({ code: 2 });
    expect(await cli(['captions', '--mic', '--pace', 'fast'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--pace and --raw apply to files') });
    expect(await cli(['captions', BUNDLED_SAMPLE.path, '--pace', 'slow'], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--pace takes one of realtime, fast') });
  });

  it('with no base URL and no key, the local reference server runs in-process, and says so', async () => {
    const run = await cli(['user', '--json'], {});
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/started the local reference server at http:\/\/127\.0\.0\.1:\d+/);
    expect(JSON.parse(run.stdout)).toHaveProperty('plan');
  });

  it('captions from stdin without a terminal: committed lines only, no escape codes; --json gives one object per line', async () => {
    const run = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> =>
      new Promise((resolve) => {
        const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        child.on('exit', (code) => resolve({ code, stdout, stderr }));
        child.stdin.end(readFileSync(BUNDLED_SAMPLE.path));
      });
    const plain = await run(['captions', '-', '--pace', 'fast']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).not.toContain('\x1b');
    expect(plain.stdout).toContain('finished: COMPLETED');
    expect(plain.stdout).toContain('(246240 frames at 16000 Hz)');
    const json = await run(['captions', '-', '--pace', 'fast', '--json']);
    expect(json.code).toBe(0);
    const docs = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; capturedFrames?: number; lines?: number; usage?: { receivedSamples: string } });
    const last = docs.at(-1);
    expect(last).toMatchObject({ type: 'finished', capturedFrames: 246_240, usage: { receivedSamples: '246240' } });
    expect(docs.filter((d) => d.type === 'line').length).toBe(last?.lines);
  });

  it('server: prints its URL and key, serves, stops on Ctrl-C (SIGINT)', async () => {
    const child = spawn(process.execPath, [BIN, 'server', '--port', '0', '--access-key', 'served-key'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const url = (await lines.next()).value as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await lines.next()).value).toBe('served-key');
    const user = await cli(['user', '--json'], { SOUNDCLONE_BASE_URL: url, SOUNDCLONE_ACCESS_KEY: 'served-key' });
    expect(user.code).toBe(0);
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(stderr).toContain('server stopped');
  });

  it('server: takes every flag of the reference server (realtime faults, decoder slots) and refuses a bad one with its message', async () => {
    const child = spawn(process.execPath, [BIN, 'server', '--port', '0', '--recognizer', 'deterministic', '--max-decoders', '2', '--withhold-acks', '--recovery-window-ms', '5000'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const url = (await lines.next()).value as string;
    const key = (await lines.next()).value as string;
    expect(key).toMatch(/^dev-[0-9a-f]{16}$/);
    // --withhold-acks is live: a realtime session gets no acknowledgement for the audio it sends.
    const session = await new SoundClone({ accessKey: key, baseUrl: url }).stt.realtime.connect({ sampleRate: 16_000 });
    session.writePcm16(new Int16Array(16_000));
    await new Promise((r) => setTimeout(r, 500));
    expect(session.stats.ackedSamples).toBe(0);
    expect(session.stats.sentSamples).toBe(16_000);
    session.close();
    child.kill('SIGINT');
    await new Promise((resolve) => child.once('exit', resolve));
    const bad = await cli(['server', '--max-decoders', '0'], {});
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--max-decoders takes a positive integer');
    const unknown = await cli(['server', '--no-such-flag'], {});
    expect(unknown.code).toBe(2);
  });
});
