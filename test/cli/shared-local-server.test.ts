import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, buildCli, cli, freshDataDir } from './support/cli.js';

/**
 * Several soundclone processes on one data directory, none given a base URL: the first starts the
 * local reference server and publishes its address in DIR/server.json; the others use that server.
 */
interface Running {
  readonly child: ChildProcess;
  readonly stderr: () => string;
  readonly stdout: () => string;
  readonly exited: Promise<number | null>;
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
}

const started: ChildProcess[] = [];

function launch(args: readonly string[], dataDir: string): Running {
  const child = spawn(process.execPath, [BIN, ...args, '--recognizer', 'deterministic'], {
    cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', SOUNDCLONE_DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    stderr: () => stderr,
    stdout: () => stdout,
    exited,
    async waitFor(pattern, timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const match = stderr.match(pattern);
        if (match !== null) return match;
        if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no ${String(pattern)} (exit ${String(child.exitCode)}); stderr:\n${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

const STARTED = /started the local reference server at (http:\/\/127\.0\.0\.1:\d+)/;
const USING = /using the local reference server of another soundclone command \(process (\d+)\) at (http:\/\/127\.0\.0\.1:\d+)/;

describe('soundclone commands on one data directory share its local server', () => {
  beforeAll(() => buildCli(), 120_000);
  afterEach(() => {
    for (const child of started.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('a command run while captions holds the directory uses its server at once; the holder waits for it before stopping', async () => {
    const dir = freshDataDir();
    const holder = launch(['captions', '--sample'], dir);
    const [, url] = (await holder.waitFor(STARTED)) as unknown as [string, string];
    await holder.waitFor(/\[session rs_\S+: streaming\]/);
    const published = JSON.parse(readFileSync(join(dir, 'server.json'), 'utf8')) as { url: string; pid: number };
    expect(published).toMatchObject({ url, pid: holder.child.pid });

    // A short command: no waiting line, no lock error; the holder's server answered it.
    const user = await cli(['user', '--json', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(user.code, user.stderr).toBe(0);
    expect(user.stderr).toContain(`using the local reference server of another soundclone command (process ${String(holder.child.pid)}) at ${url}`);
    expect(user.stderr).not.toContain('waiting for');
    expect(user.stderr).not.toContain('started the local reference server');

    // A long one that outlasts the holder: the holder finishes its own work, then keeps the server for it.
    const borrower = launch(['captions', '--sample'], dir);
    const using = await borrower.waitFor(USING);
    expect(using[1]).toBe(String(holder.child.pid));
    expect(using[2]).toBe(url);
    await borrower.waitFor(/\[session rs_\S+: streaming\]/);
    await holder.waitFor(new RegExp(`keeping the local reference server at ${url.replace(/\./g, '\\.')} until another soundclone command \\(process ${String(borrower.child.pid)}\\) finishes with it`), 40_000);
    // While the holder waits, its address is gone: nobody new borrows a server that is about to stop.
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
    expect(holder.child.exitCode).toBeNull();
    expect(await borrower.exited, borrower.stderr()).toBe(0);
    expect(borrower.stdout()).toMatch(/finished: COMPLETED, \d+ lines, 15\.39 s captured/);
    expect(await holder.exited, holder.stderr()).toBe(0);
    expect(holder.stdout()).toMatch(/finished: COMPLETED, \d+ lines, 15\.39 s captured/);

    // Both sessions went to the one server and its journal: the next command sees both in the history.
    const listed = await cli(['history', '--json', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(STARTED);
    const titles = (JSON.parse(listed.stdout) as Array<{ title: string }>).map((t) => t.title);
    expect(titles.filter((t) => t === 'soundclone captions sample'), listed.stdout).toHaveLength(2);
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  }, 90_000);

  it('two commands started at the same instant: one starts the server, the other uses it; both succeed', async () => {
    const dir = freshDataDir();
    const a = launch(['captions', '--sample', '--title', 'a'], dir);
    const b = launch(['captions', '--sample', '--title', 'b'], dir);
    expect(await a.exited, a.stderr()).toBe(0);
    expect(await b.exited, b.stderr()).toBe(0);
    const starters = [a, b].filter((r) => STARTED.test(r.stderr()));
    const users = [a, b].filter((r) => USING.test(r.stderr()));
    expect(starters).toHaveLength(1);
    expect(users).toHaveLength(1);
    const starter = starters[0] as Running;
    const using = USING.exec((users[0] as Running).stderr()) as RegExpExecArray;
    expect(using[1]).toBe(String(starter.child.pid));
    expect(using[2]).toBe(STARTED.exec(starter.stderr())?.[1]);
    for (const r of [a, b]) expect(r.stderr()).not.toContain('STATE_LOCKED');
  }, 90_000);

  it('an address file left by a killed command (dead pid) is ignored and replaced', async () => {
    const dir = freshDataDir();
    // A pid that surely ended: a process of ours that exited.
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => gone.once('exit', r));
    writeFileSync(join(dir, 'server.json'), `${JSON.stringify({ url: 'http://127.0.0.1:9', pid: gone.pid, recognizer: 'energy-v1' })}\n`);
    const run = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(STARTED);
    expect(run.stderr).not.toContain('using the local reference server');
    // The command published its own address over the stale one and removed it when it stopped.
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  });

  it('an address of a live process that does not answer the local key (a reused pid) is ignored', async () => {
    const dir = freshDataDir();
    // This test process is alive and serves nothing at port 9 (discard): what a pid reused by an
    // unrelated program looks like.
    writeFileSync(join(dir, 'server.json'), `${JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid, recognizer: 'energy-v1' })}\n`);
    const run = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(STARTED);
  });

  it('an address that is not on 127.0.0.1 is never used (the local key is not sent anywhere else)', async () => {
    const dir = freshDataDir();
    writeFileSync(join(dir, 'server.json'), `${JSON.stringify({ url: 'http://192.0.2.1:8787', pid: process.pid, recognizer: 'energy-v1' })}\n`);
    const run = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(STARTED);
  });

  it('soundclone server over the CLI\'s data directory publishes its address; commands use it with the local key', async () => {
    const dir = freshDataDir();
    const server = launch(['server', '--port', '0', '--data-dir', dir], dir);
    for (let i = 0; i < 200 && !/^http:\/\/127\.0\.0\.1:\d+\n/.test(server.stdout()); i++) await new Promise((r) => setTimeout(r, 50));
    const url = server.stdout().split('\n')[0] as string;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const run = await cli(['voices', 'list', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`using the local reference server of another soundclone command (process ${String(server.child.pid)}) at ${url}`);
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
  });

  it('a holder killed outright (SIGKILL): the borrower starts the server again at the same address and says so; its live session ends at once with a clear error', async () => {
    const dir = freshDataDir();
    const server = launch(['server', '--port', '0', '--data-dir', dir], dir);
    for (let i = 0; i < 200 && !/^http:\/\/127\.0\.0\.1:\d+\n/.test(server.stdout()); i++) await new Promise((r) => setTimeout(r, 50));
    const url = server.stdout().split('\n')[0] as string;
    const borrower = launch(['captions', '--sample'], dir);
    await borrower.waitFor(USING);
    await borrower.waitFor(/\[session rs_\S+: streaming\]/);
    server.child.kill('SIGKILL');
    await borrower.waitFor(new RegExp(`the local reference server of process ${String(server.child.pid)} stopped while this command used it; this command now runs it at ${url.replace(/\./g, '\\.')}`));
    // The session's audio was in the killed process: its reconnect reaches the new server, which does not
    // know it, so it ends with that error instead of retrying against a closed port.
    expect(await borrower.exited).toBe(1);
    expect(borrower.stderr()).toContain('[REALTIME_SESSION_NOT_FOUND]');
    expect(existsSync(join(dir, 'server.json'))).toBe(false);
    const next = await cli(['history', '--json', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dir });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(STARTED);
  }, 60_000);

  it('a holder told to stop while another command uses its server says whom it waits for; a second Ctrl-C stops it at once', async () => {
    const dir = freshDataDir();
    const server = launch(['server', '--port', '0', '--data-dir', dir], dir);
    for (let i = 0; i < 200 && !/^http:\/\/127\.0\.0\.1:\d+\n/.test(server.stdout()); i++) await new Promise((r) => setTimeout(r, 50));
    const borrower = launch(['captions', '--sample'], dir);
    await borrower.waitFor(USING);
    await borrower.waitFor(/\[session rs_\S+: streaming\]/);
    server.child.kill('SIGINT');
    await server.waitFor(new RegExp(`keeping the local reference server at \\S+ until another soundclone command \\(process ${String(borrower.child.pid)}\\) finishes with it; Ctrl-C stops it now`));
    // Still serving: the borrower's session goes on.
    await new Promise((r) => setTimeout(r, 500));
    expect(server.child.exitCode).toBeNull();
    expect(borrower.child.exitCode).toBeNull();
    server.child.kill('SIGINT');
    expect(await server.exited).toBe(0);
    expect(server.stderr()).toContain(`stopping the local reference server while process ${String(borrower.child.pid)} still uses it`);
    expect(server.stderr()).toContain('server stopped');
  }, 60_000);
});
