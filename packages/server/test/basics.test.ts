import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ERROR_STATUS, PATHS, buildPath } from '@soundclone/core/internal';
import { KEY_A, KEY_B, PREFIX, serverForSuite } from './support/server.js';

describe('envelope, auth and routing', () => {
  const server = serverForSuite();

  it('answers with the success envelope and a request id header', async () => {
    const r = await server.call('GET', '/voices');
    expect(r.status).toBe(200);
    expect(r.body.code).toBe(1);
    expect(r.body.message).toBe('success');
    expect(Array.isArray(r.body.data)).toBe(true);
    expect(r.headers.get('x-request-id')).toMatch(/^req_/);
  });

  it('refuses a missing key with 401 and the failure envelope', async () => {
    const r = await server.call('GET', '/user/info', { key: null });
    expect(r.status).toBe(401);
    expect(r.body).toMatchObject({ code: -1, errorCode: 'UNAUTHORIZED', message: 'missing accessKey header' });
    expect(r.body.requestId).toBe(r.headers.get('x-request-id'));
    expect(r.body.data).toBeUndefined();
  });

  it('refuses an unknown key with 401', async () => {
    const r = await server.call('GET', '/stt/capabilities', { key: 'nope' });
    expect(r.status).toBe(401);
    expect(r.body.errorCode).toBe('UNAUTHORIZED');
  });

  it('answers unknown paths with 404 and wrong methods with 405', async () => {
    const missing = await server.call('GET', '/nothing/here');
    expect(missing.status).toBe(404);
    expect(missing.body.errorCode).toBe('NOT_FOUND');
    const method = await server.call('POST', '/voices');
    expect(method.status).toBe(405);
    expect(method.body.errorCode).toBe('METHOD_NOT_ALLOWED');
  });

  it('refuses malformed JSON bodies with INPUT_INVALID', async () => {
    const r = await server.call('POST', '/voices/design/save', { body: '{not json', headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body.errorCode).toBe('INPUT_INVALID');
    expect(r.body.details.violations[0].field).toBe('body');
  });

  it('refuses a JSON body over 1 MiB with PAYLOAD_TOO_LARGE', async () => {
    const r = await server.call('DELETE', '/cover', { json: { ids: ['x'], pad: 'x'.repeat(1024 * 1024) } });
    expect(r.status).toBe(413);
    expect(r.body.errorCode).toBe('PAYLOAD_TOO_LARGE');
  });

  it('keeps the two accounts apart', async () => {
    const a = await server.call('GET', '/voices', { key: KEY_A });
    const b = await server.call('GET', '/voices', { key: KEY_B });
    const customA = a.body.data.filter((v: any) => v.type !== 'system').map((v: any) => v.id);
    const customB = b.body.data.filter((v: any) => v.type !== 'system').map((v: any) => v.id);
    expect(customA).toHaveLength(1);
    expect(customB).toHaveLength(1);
    expect(customA[0]).not.toBe(customB[0]);
  });

  it('builds paths from the shared protocol', () => {
    expect(buildPath(PATHS.transcription, { transcriptionId: 'a/b' })).toBe(`${PREFIX}/stt/transcriptions/a%2Fb`);
    expect(ERROR_STATUS.IDEMPOTENCY_CONFLICT).toBe(409);
  });
});

describe('CLI', () => {
  it('prints the base URL as its first stdout line and serves it', async () => {
    const cli = fileURLToPath(new URL('../src/cli.ts', import.meta.url));
    // Run the built CLI when present (pnpm build), else skip nothing: build output is required by `pnpm test`.
    const dist = cli.replace('/src/cli.ts', '/dist/cli.js');
    const child = spawn(process.execPath, [dist, '--port', '0', '--access-key', 'cli-1', '--access-key', 'cli-2'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const firstLine = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (d: Buffer) => {
          out += d.toString();
          const nl = out.indexOf('\n');
          if (nl >= 0) resolve(out.slice(0, nl));
        });
        child.on('exit', (code) => reject(new Error(`cli exited ${code}`)));
      });
      expect(firstLine).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      const r = await fetch(`${firstLine}${PREFIX}/user/info`, { headers: { accessKey: 'cli-2' } });
      expect(r.status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
