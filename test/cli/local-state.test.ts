import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '@soundclone/server';
import { BUNDLED_SAMPLE } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, buildCli, cli, freshDataDir } from './support/cli.js';

/** Each command a separate process on one data directory, with no base URL: the local server keeps state. */
describe('soundclone with the local reference server keeps state between commands', () => {
  let dataDir: string;
  let run: (args: readonly string[], timeoutMs?: number) => ReturnType<typeof cli>;
  beforeAll(() => {
    buildCli();
    dataDir = freshDataDir();
    run = (args, timeoutMs) => cli([...args, '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: dataDir }, timeoutMs);
  }, 120_000);

  it('voices create, then a separate voices list sees it; a rename is kept too', async () => {
    const created = await run(['voices', 'create', '--name', 'Narrator', BUNDLED_SAMPLE.path, '--json']);
    expect(created.code, created.stderr).toBe(0);
    const { id } = JSON.parse(created.stdout) as { id: string };
    const listed = await run(['voices', 'list']);
    expect(listed.stdout).toMatch(new RegExp(`^${id}\\s+Narrator\\s`, 'm'));
    expect((await run(['voices', 'rename', id, 'Storyteller'])).code).toBe(0);
    const json = JSON.parse((await run(['voices', 'list', '--json'])).stdout) as Array<{ id: string; name: string }>;
    expect(json.find((v) => v.id === id)?.name).toBe('Storyteller');
    // One key, kept beside the state, so every command is the same account.
    expect(readFileSync(join(dataDir, 'access-key'), 'utf8')).toMatch(/^local-[0-9a-f]{24}\n$/);
  });

  it('a transcription submitted in one process is fetched by transcripts get in another; history and the balance are kept', async () => {
    const before = JSON.parse((await run(['user', '--json'])).stdout) as { benefit: { usedMonthlyChars: string | number } };
    const started = await run(['transcribe', BUNDLED_SAMPLE.path, '--title', 'kept']);
    expect(started.code, started.stderr).toBe(0);
    const id = started.stdout.trim();
    expect(started.stderr).toContain(`soundclone transcripts get ${id}`);
    const got = await run(['transcripts', 'get', id, '--format', 'json']);
    expect(got.code, got.stderr).toBe(0);
    const task = JSON.parse(got.stdout) as { status: string; title: string; transcript: { text: string }; billing: { settledCharacters: string } };
    expect(task).toMatchObject({ status: 'COMPLETED', title: 'kept' });
    expect(task.transcript.text.length).toBeGreaterThan(0);
    const text = await run(['transcripts', 'get', id]);
    expect(text.stdout.length).toBeGreaterThan(0);
    const history = JSON.parse((await run(['history', '--json'])).stdout) as Array<{ transcriptionId: string; status: string }>;
    expect(history.find((h) => h.transcriptionId === id)).toMatchObject({ status: 'COMPLETED' });
    const after = JSON.parse((await run(['user', '--json'])).stdout) as { benefit: { usedMonthlyChars: string | number } };
    expect(BigInt(after.benefit.usedMonthlyChars) - BigInt(before.benefit.usedMonthlyChars)).toBe(BigInt(task.billing.settledCharacters));
  });

  it('--ephemeral keeps nothing: not in the data directory, not at the next command', async () => {
    const created = await run(['voices', 'create', '--name', 'Fleeting', BUNDLED_SAMPLE.path, '--json', '--ephemeral']);
    expect(created.code, created.stderr).toBe(0);
    expect(created.stderr).toContain('--ephemeral: the local reference server keeps nothing after this command exits');
    const listed = await run(['voices', 'list', '--json']);
    expect((JSON.parse(listed.stdout) as Array<{ name: string }>).map((v) => v.name)).not.toContain('Fleeting');
    expect(readFileSync(join(dataDir, 'state.jsonl'), 'utf8')).not.toContain('Fleeting');
    const untouched = freshDataDir();
    rmSync(untouched, { recursive: true });
    const alone = await cli(['voices', 'list', '--ephemeral', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: untouched });
    expect(alone.code, alone.stderr).toBe(0);
    expect(existsSync(untouched)).toBe(false);
  });

  it('the data directory: $XDG_DATA_HOME/soundclone, else ~/.local/share/soundclone; SOUNDCLONE_DATA_DIR wins', async () => {
    const home = mkdtempSync(join(tmpdir(), 'cli-home-'));
    try {
      const xdg = join(home, 'xdg');
      const viaXdg = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: undefined, XDG_DATA_HOME: xdg, HOME: home });
      expect(viaXdg.code, viaXdg.stderr).toBe(0);
      expect(viaXdg.stderr).toContain(`local state is kept in ${join(xdg, 'soundclone')} `);
      expect(existsSync(join(xdg, 'soundclone', 'state.jsonl'))).toBe(true);
      const viaHome = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: undefined, HOME: home });
      expect(viaHome.stderr).toContain(`local state is kept in ${join(home, '.local', 'share', 'soundclone')} `);
      expect(existsSync(join(home, '.local', 'share', 'soundclone', 'access-key'))).toBe(true);
      const explicit = join(home, 'explicit');
      const viaEnv = await cli(['user', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: explicit, XDG_DATA_HOME: xdg, HOME: home });
      expect(viaEnv.stderr).toContain(`local state is kept in ${explicit} `);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it('a journal whose last line a crash cut short: the next command drops it, says so on one line, and goes on', async () => {
    const dir = freshDataDir();
    const env = { SOUNDCLONE_DATA_DIR: dir };
    const created = await cli(['voices', 'create', '--name', 'Survivor', BUNDLED_SAMPLE.path, '--recognizer', 'deterministic'], env);
    expect(created.code, created.stderr).toBe(0);
    appendFileSync(join(dir, 'state.jsonl'), '{"type":"voice","voice":{"id":"100');
    const listed = await cli(['voices', 'list', '--recognizer', 'deterministic'], env);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stderr).toMatch(new RegExp(`^soundclone: ${join(dir, 'state.jsonl')}: line \\d+ was cut short by an earlier crash and was dropped \\(34 bytes\\)$`, 'm'));
    expect(listed.stdout).toMatch(/\sSurvivor\s/);
    expect(readFileSync(join(dir, 'state.jsonl'), 'utf8').endsWith('}\n')).toBe(true);
  });

  describe('a data directory another process holds', () => {
    let held: string;
    let release: (() => Promise<void>) | undefined;
    beforeAll(async () => {
      held = freshDataDir();
      const holder = await startServer({ accessKeys: ['holder'], dataDir: held });
      release = () => holder.close();
    });
    afterAll(() => release?.());

    it('a command waits a few seconds for it, then fails with one STATE_LOCKED error naming the holder', async () => {
      const refused = await cli(['voices', 'list', '--recognizer', 'deterministic'], { SOUNDCLONE_DATA_DIR: held });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(`waiting for another soundclone command (process ${process.pid}) to finish with ${held}`);
      expect(refused.stderr).toMatch(new RegExp(`^soundclone: error: ${held} is in use by process ${process.pid}.*\\[STATE_LOCKED\\]$`, 'm'));
      expect(refused.stdout).toBe('');
    });

    it('a command that is waiting goes on once the holder lets go', async () => {
      const child = spawn(process.execPath, [BIN, 'voices', 'list', '--json', '--recognizer', 'deterministic'], {
        cwd: ROOT, env: { PATH: process.env['PATH'] ?? '', SOUNDCLONE_DATA_DIR: held }, stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      const waitingSaid = new Promise<void>((resolve) => {
        child.stderr.on('data', (d: Buffer) => {
          stderr += d.toString();
          if (stderr.includes('waiting for another soundclone command')) resolve();
        });
      });
      const code = new Promise<number | null>((resolve) => child.once('exit', resolve));
      await waitingSaid;
      await release?.();
      release = undefined;
      expect(await code, stderr).toBe(0);
      expect(JSON.parse(stdout)).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'Aria' })]));
    });
  });
});
