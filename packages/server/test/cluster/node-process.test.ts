import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { postgresForFile } from '../support/postgres.js';
import { KEY_A, KEY_B, PREFIX, start, type TestServer } from '../support/server.js';
import { open, speech, type Created } from '../realtime/support.js';

/**
 * Nodes as the processes an operator runs: the built server command (dist/cli.js, built here first)
 * beside an in-process node, on one PostgreSQL database. A process can be killed outright (SIGKILL:
 * nothing of it runs after) or asked to leave (SIGTERM: the drain).
 */
const serverDir = fileURLToPath(new URL('../..', import.meta.url));
const cli = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

interface NodeProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

async function spawnNode(databaseUrl: string, extra: readonly string[] = []): Promise<NodeProcess> {
  const child = spawn(process.execPath, [cli, '--port', '0', '--access-key', KEY_A, '--access-key', KEY_B, '--recognizer', 'deterministic', '--database-url', databaseUrl, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
      out += chunk;
      if (out.includes('\n')) resolve(out.split('\n')[0]!.trim());
    });
    void exited.then(({ code }) => reject(new Error(`the server exited (${String(code)}): ${stderr}`)));
  });
  return { child, url, exited, stderr: () => stderr };
}

async function call(base: string, method: string, path: string, json?: unknown): Promise<{ status: number; headers: Headers; body: any }> {
  const r = await fetch(base + PREFIX + path, {
    method,
    headers: { accessKey: KEY_A, ...(json !== undefined ? { 'Content-Type': 'application/json', 'Idempotency-Key': `np-${Math.random()}` } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
  return { status: r.status, headers: r.headers, body: await r.json() };
}

describe('node processes on one database', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-b', serverDir], { stdio: 'pipe' });
  }, 120_000);
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });
  const own = (node: NodeProcess): NodeProcess => {
    stops.push(async () => {
      if (node.child.exitCode !== null || node.child.signalCode !== null) return;
      node.child.kill('SIGKILL');
      await node.exited;
    });
    return node;
  };

  it('a node killed outright: its live session is failed by another node\'s sweeper, its reservation released; that node then answers for it from the store', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const owner = own(await spawnNode(databaseUrl));
    const other: TestServer = await start({ databaseUrl, nodeTiming: { staleAfterMs: 3000, sweepEveryMs: 200 } });
    stops.push(() => other.close());

    const created: Created = (await call(owner.url, 'POST', '/stt/realtime/sessions', {})).body.data;
    const peer = await open(`${owner.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?sessionId=${created.sessionId}`, { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    peer.stream(1, speech(2).subarray(0, 24_000));
    await peer.acked(24_000);
    const accountId = other.services.accounts.authenticate(KEY_A).id;
    const reserved = async () => (await pgsql.query<{ r: string }>(databaseUrl, 'SELECT reserved::text AS r FROM account WHERE id = $1', [accountId]))[0]?.r;
    expect(await reserved()).toBe('20');

    owner.child.kill('SIGKILL');
    expect((await owner.exited).signal).toBe('SIGKILL');
    // Until the sweeper fails it, the session is neither live nor ended: 503 with Retry-After.
    const meanwhile = await other.call('GET', `/stt/realtime/sessions/${created.sessionId}`);
    expect(meanwhile.status).toBe(503);
    expect(meanwhile.body.details).toEqual({ reason: 'SESSION_OWNER_UNAVAILABLE' });
    expect(Number(meanwhile.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    await expect(open(`${other.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${created.socket.token}`)).rejects.toMatchObject({
      status: 503,
      body: { errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'SESSION_OWNER_UNAVAILABLE' } },
    });

    // The bound: the node is taken for dead 3 s after its last beat, and the sweeper looks every 200 ms.
    const deadline = Date.now() + 15_000;
    let task = (await other.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    while (task.status !== 'FAILED' && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      task = (await other.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    }
    expect(task).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true, action: 'RETRY' }, billing: { state: 'RELEASED', settledCharacters: '0', releasedCharacters: '20' } });
    expect(await reserved()).toBe('0');
    expect((await pgsql.query(databaseUrl, "SELECT kind FROM ledger_entry WHERE task_id = $1 ORDER BY id", [created.transcriptionId])).map((r) => r['kind'])).toEqual(['accrue', 'accrue', 'release']);

    // Now ended: answered from the store, on REST and on the socket.
    const view = await other.call('GET', `/stt/realtime/sessions/${created.sessionId}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ sessionId: created.sessionId, transcriptionId: created.transcriptionId, status: 'FAILED', accepting: false, error: { retryable: true } });
    expect((await other.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '24000' } })).body.data.status).toBe('FAILED');
    expect((await other.call('POST', `/stt/realtime/sessions/${created.sessionId}/pause`, { json: { capturedSamples: '24000' } })).body.errorCode).toBe('SESSION_CLOSED');
    const late = await open(`${other.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?token=${created.socket.token}`);
    expect((await late.waitFor('session.finished')).session.status).toBe('FAILED');
    expect((await late.closed).code).toBe(4409);
  });

  it('SIGTERM drains: /health answers 503 first, the live socket gets 4503, the node leaves the registry, the process exits 0', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const node = own(await spawnNode(databaseUrl, ['--drain-grace-ms', '800', '--node-id', 'node_draining']));
    expect((await fetch(`${node.url}/health`)).status).toBe(200);
    expect(await pgsql.query(databaseUrl, 'SELECT id, draining FROM node')).toEqual([{ id: 'node_draining', draining: false }]);
    const created: Created = (await call(node.url, 'POST', '/stt/realtime/sessions', {})).body.data;
    const peer = await open(`${node.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?sessionId=${created.sessionId}`, { accessKey: KEY_A });
    await peer.waitFor('session.ready');

    node.child.kill('SIGTERM');
    const seen: number[] = [];
    let exited = false;
    void node.exited.then(() => void (exited = true));
    while (!exited) {
      const status = await fetch(`${node.url}/health`).then((r) => r.status, () => 0);
      if (status !== 0) seen.push(status);
      if (status === 503 && !seen.includes(-1)) {
        // While draining it still serves, but takes no new realtime session.
        const refused = await call(node.url, 'POST', '/stt/realtime/sessions', {});
        expect(refused.body.details).toEqual({ reason: 'NODE_DRAINING' });
        seen.push(-1);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await node.exited).toEqual({ code: 0, signal: null });
    // 503 from the signal on (the balancer takes the node out), never 200 again.
    expect(seen).toContain(503);
    expect(seen.slice(seen.indexOf(503)).filter((status) => status === 200)).toEqual([]);
    expect((await peer.closed).code).toBe(4503);
    expect(await pgsql.query(databaseUrl, 'SELECT id FROM node')).toEqual([]);
    // Its session's audio ended with it: failed on the way out, nothing charged.
    const [task] = await pgsql.query(databaseUrl, 'SELECT status, billing_state FROM task WHERE id = $1', [created.transcriptionId]);
    expect(task).toEqual({ status: 'FAILED', billing_state: 'RELEASED' });
    expect(node.stderr()).toBe('');
  });
});
