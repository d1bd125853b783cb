import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '@soundclone/server';
import { linkFromWorkspace, manifestOf, unpackInto } from './pack.js';

/**
 * `ws` is an optional peer dependency of @soundclone/core (packages/core/README.md "Install"). The
 * packed core goes into two consumer folders, one without `ws` and one with it, and a plain Node ESM
 * script in each starts a realtime session against the reference server on 127.0.0.1. Without `ws`
 * core still imports, and connect() and attach() reject with the typed REALTIME_NO_WEBSOCKET naming the
 * package to install, before anything reaches the server; with `ws` the same script streams and
 * finishes. The script removes any global WebSocket first: Node 20 has none, and on a later Node the
 * global would otherwise be used (with the token) and hide the case under test.
 */
const KEY = 'key-node-websocket';
const run = promisify(execFile);
let dir: string;
let server: RunningServer;
let withoutWs: string;
let withWs: string;

const SCRIPT = `
  delete globalThis.WebSocket;
  const core = await import('@soundclone/core');
  const [baseUrl, key] = process.argv.slice(2);
  const client = new core.SoundClone({ accessKey: key, baseUrl, maxRetries: 0 });
  const outcome = async (call) => {
    try {
      return { ok: await call() };
    } catch (e) {
      return { name: e.name, code: e.code, typed: core.isSoundCloneError(e, core.RealtimeError) && e instanceof core.RealtimeError, message: e.message, cause: e.cause?.code };
    }
  };
  const connect = await outcome(async () => {
    const session = await client.stt.realtime.connect({ sampleRate: 16000 });
    session.writePcm16(new Int16Array(16000));
    const { session: view } = await session.finish({ timeoutMs: 20000 });
    return { state: session.state, status: view.status, receivedSamples: String(view.usage.receivedSamples) };
  });
  const attach = await outcome(async () => {
    const session = await client.stt.realtime.attach({ sessionId: 'rs_unknown', token: 'not-a-token' });
    return { state: session.state };
  });
  console.log(JSON.stringify({ imported: typeof core.SoundClone, connect, attach }));
`;

function consumer(name: string, extra: string[]): string {
  const folder = join(dir, name);
  const tarballs = join(dir, `${name}-tarballs`);
  mkdirSync(tarballs, { recursive: true });
  mkdirSync(folder);
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  const core = unpackInto(folder, 'core', tarballs);
  linkFromWorkspace(folder, 'core', [...Object.keys(manifestOf(core).dependencies ?? {}), ...extra]);
  writeFileSync(join(folder, 'session.mjs'), SCRIPT);
  return folder;
}

async function session(folder: string): Promise<{ imported: string; connect: Record<string, unknown>; attach: Record<string, unknown> }> {
  // Asynchronous: the reference server answers from this process's event loop.
  const { stdout } = await run(process.execPath, ['session.mjs', server.url, KEY], { cwd: folder, encoding: 'utf8', timeout: 60_000 });
  return JSON.parse(stdout) as { imported: string; connect: Record<string, unknown>; attach: Record<string, unknown> };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'soundclone-node-websocket-'));
  withoutWs = consumer('without-ws', []);
  withWs = consumer('with-ws', ['ws']);
  server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY] });
}, 120_000);

afterAll(async () => {
  await server?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

describe('core in Node, with and without ws', () => {
  it('declares ws as an optional peer, not a dependency', () => {
    const manifest = manifestOf(join(withoutWs, 'node_modules', '@soundclone', 'core'));
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain('ws');
    expect(Object.keys(manifest.dependencies ?? {})).not.toContain('isomorphic-ws');
    expect(manifest.peerDependencies?.['ws']).toBeDefined();
    expect(manifest.peerDependenciesMeta?.['ws']?.optional).toBe(true);
  });

  it('without ws: imports, and connect() and attach() reject with REALTIME_NO_WEBSOCKET naming ws, before reaching the server', async () => {
    const before = server.requests.length;
    const socketsBefore = server.sockets.log.length;
    const result = await session(withoutWs);
    expect(result.imported).toBe('function');
    for (const outcome of [result.connect, result.attach]) {
      expect(outcome).toMatchObject({ name: 'RealtimeError', code: 'REALTIME_NO_WEBSOCKET', typed: true, cause: 'ERR_MODULE_NOT_FOUND' });
      expect(outcome['message']).toContain('`ws` package is not installed');
      expect(outcome['message']).toContain('npm i ws');
    }
    // connect() checked before creating a session that nothing could stream into.
    expect(server.requests.slice(before)).toEqual([]);
    expect(server.sockets.log.slice(socketsBefore)).toEqual([]);
  });

  it('with ws: the same script streams to the reference server and finishes', async () => {
    const before = server.requests.length;
    const socketsBefore = server.sockets.log.length;
    const result = await session(withWs);
    expect(result.connect).toEqual({ ok: { state: 'finished', status: 'COMPLETED', receivedSamples: '16000' } });
    // attach() reached the server: its socket was refused for the unknown session (a typed error, not the missing-WebSocket one).
    expect(result.attach).toMatchObject({ name: 'RealtimeError', typed: true });
    expect(result.attach['code']).not.toBe('REALTIME_NO_WEBSOCKET');
    expect(server.requests.slice(before).map((r) => `${r.method} ${r.path} ${r.status}`)).toContain('POST /sound_clone/api/v1/stt/realtime/sessions 200');
    expect(server.sockets.log.slice(socketsBefore).map((e) => e.kind)).toContain('connected');
  });
});
