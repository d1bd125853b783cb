import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLIP_0930, wer } from './support.js';

/**
 * The server command a user runs (`pnpm --filter @soundclone/server start`) picks PocketSphinx by
 * itself when it is installed: real words come back. Runs the built CLI (dist), built here first.
 */
const serverDir = fileURLToPath(new URL('../..', import.meta.url));
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));
const KEY = 'cli-key';

describe('server CLI recognizer choice', () => {
  let child: ChildProcess;
  let url: string;
  let stderr = '';
  beforeAll(async () => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-b', serverDir], { stdio: 'pipe' });
    child = spawn(process.execPath, [cli, '--port', '0', '--access-key', KEY, '--max-decoders', '1'], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
      });
      child.once('exit', (code) => reject(new Error(`the server exited (${String(code)}): ${stderr}`)));
    });
  }, 90_000);
  afterAll(async () => {
    if (child?.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  });

  it('uses PocketSphinx by default when installed: a batch transcription returns the spoken words', async () => {
    expect(stderr).not.toContain('deterministic');
    const api = `${url}/sound_clone/api/v1`;
    const upload = await (await fetch(`${api}/uploads`, { method: 'POST', headers: { accessKey: KEY, 'Content-Type': 'audio/wav' }, body: readFileSync(CLIP_0930.path) })).json();
    const created = await fetch(`${api}/stt/transcriptions`, {
      method: 'POST',
      headers: { accessKey: KEY, 'Content-Type': 'application/json', 'Idempotency-Key': `cli-${process.pid}` },
      body: JSON.stringify({ uploadId: upload.data.uploadId, waitForCompletion: true, waitTimeoutMs: 30_000 }),
    });
    const task = (await created.json()).data;
    expect(task.status).toBe('COMPLETED');
    expect(wer(CLIP_0930.text, task.transcript.text)).toBeLessThanOrEqual(0.3);
  });

  it('--max-decoders bounds the realtime sessions PocketSphinx serves at once: the next one is 503 RECOGNIZER_BUSY', async () => {
    const create = (n: number) =>
      fetch(`${url}/sound_clone/api/v1/stt/realtime/sessions`, { method: 'POST', headers: { accessKey: KEY, 'Content-Type': 'application/json', 'Idempotency-Key': `cli-rt-${process.pid}-${n}` }, body: '{}' });
    expect((await create(1)).status).toBe(200);
    const refused = await create(2);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('5');
    expect(await refused.json()).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'RECOGNIZER_BUSY' } });
  });

  it('refuses an unknown --recognizer with exit code 2 and the choices', () => {
    const run = spawnSync(process.execPath, [cli, '--port', '0', '--access-key', KEY, '--recognizer', 'whisper'], { encoding: 'utf8', timeout: 20_000 });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('--recognizer takes auto, pocketsphinx, deterministic, got whisper');
  });
});
