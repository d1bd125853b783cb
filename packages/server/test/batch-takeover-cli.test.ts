import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { PREFIX } from './support/server.js';
import { postgresForFile } from './support/postgres.js';
import { startWebhookReceiver } from './support/webhook-receiver.js';
import { speechWav } from './support/wav.js';

const CLI = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
const KEY = 'cli-takeover-key';

/** A server process (the built CLI, `pnpm build`) on the database; resolves with its base URL once it listens. */
function serverProcess(databaseUrl: string, allowHost: string, env: Record<string, string> = {}): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [CLI, '--port', '0', '--database-url', databaseUrl, '--access-key', KEY, '--recognizer', 'deterministic', '--allow-media-host', allowHost],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stderr?.on('data', (d: Buffer) => {
      err = (err + d.toString()).slice(-4000);
    });
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ child, url: out.slice(0, nl) });
    });
    child.once('exit', (code, signal) => reject(new Error(`server exited (${code ?? signal}) before listening: ${err}`)));
  });
}

/**
 * The real thing: two server processes on one PostgreSQL database, and the one running a batch task is
 * killed with SIGKILL mid-task (no handler runs, its connections just drop). The other takes the task
 * over once the lease has passed, with the default lease settings (protocol.ts BATCH_LEASES), completes
 * it from the upload kept in the database, charges it once and sends its webhook once.
 */
describe('kill -9 of the server process running a batch task', () => {
  const pgsql = postgresForFile();
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });

  it('the other server completes it: charged once, one webhook, nothing left PROCESSING', { timeout: 60_000 }, async () => {
    const hooks = await startWebhookReceiver();
    try {
      const url = await pgsql.freshDatabase();
      const allow = `127.0.0.1:${hooks.port}`;
      // A holds every task PROCESSING for ten minutes: it is surely mid-task when it is killed.
      const a = await serverProcess(url, allow, { SOUNDCLONE_TEST_TASK_PROCESSING_MS: '600000' });
      children.push(a.child);
      const b = await serverProcess(url, allow);
      children.push(b.child);
      const call = async (base: string, method: string, path: string, init: { json?: unknown; body?: BodyInit; headers?: Record<string, string> } = {}) => {
        const headers: Record<string, string> = { accessKey: KEY, ...init.headers };
        if (init.json !== undefined) headers['Content-Type'] = 'application/json';
        const response = await fetch(base + PREFIX + path, { method, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
        return (await response.json()) as { code: number; data: any };
      };
      const uploaded = await call(a.url, 'POST', '/uploads', { body: new Uint8Array(speechWav()), headers: { 'Content-Type': 'audio/wav' } });
      const created = await call(a.url, 'POST', '/stt/transcriptions', {
        json: { uploadId: uploaded.data.uploadId, options: { notifyUrl: `${hooks.url}/done` } },
        headers: { 'Idempotency-Key': `cli-takeover-${Date.now()}` },
      });
      const id = created.data.transcriptionId as string;
      const status = async (): Promise<string> => (await call(b.url, 'GET', `/stt/transcriptions/${id}`)).data.status;
      for (let i = 0; i < 200 && (await status()) !== 'PROCESSING'; i++) await new Promise((r) => setTimeout(r, 20));
      expect(await status()).toBe('PROCESSING');
      const [reserve] = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind = 'reserve'", [id]);
      expect(await pgsql.query(url, 'SELECT lease_node FROM task WHERE id = $1', [id])).toEqual([{ lease_node: reserve?.node_id }]);

      const killed = Date.now();
      a.child.kill('SIGKILL');
      let ended: any;
      while (Date.now() - killed < 30_000) {
        ended = (await call(b.url, 'GET', `/stt/transcriptions/${id}`)).data;
        if (['COMPLETED', 'PARTIAL', 'FAILED'].includes(ended.status)) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      // What an operator waits: from the kill to the task's end on the other server (not asserted).
      console.info(`batch takeover after kill -9: the task ended on the other server ${Date.now() - killed} ms after the kill`);
      expect(ended).toMatchObject({ status: 'COMPLETED', audioDurationMs: '2600', billing: { state: 'SETTLED', settledCharacters: '30' } });
      const settles = await pgsql.query<{ node_id: string }>(url, "SELECT node_id FROM ledger_entry WHERE task_id = $1 AND kind IN ('settle', 'release')", [id]);
      expect(settles).toHaveLength(1);
      expect(settles[0]?.node_id).not.toBe(reserve?.node_id);
      for (let i = 0; i < 100 && hooks.received.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      // Room for a second delivery, were there one (senders poll the outbox every second).
      await new Promise((r) => setTimeout(r, 2_500));
      expect(hooks.received.map((r) => [r.path, r.body.data.transcriptionId, r.body.data.status])).toEqual([['/done', id, 'COMPLETED']]);
      expect(await pgsql.query(url, 'SELECT outcome FROM webhook_delivery WHERE task_id = $1', [id])).toEqual([{ outcome: 'delivered' }]);
      expect(await pgsql.query(url, "SELECT id FROM task WHERE status IN ('QUEUED', 'PROCESSING', 'RECONCILING')")).toEqual([]);
      b.child.kill('SIGTERM');
    } finally {
      await hooks.close();
    }
  });
});
