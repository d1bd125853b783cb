import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, ROOT, buildCli, cli } from './support/cli.js';

/**
 * `soundclone cluster`: a throwaway PostgreSQL, node processes of the server's command and haproxy,
 * all on 127.0.0.1, until SIGINT (Ctrl-C). The product's promise: after `npm run setup`, the command
 * starts and `soundclone captions --sample` captions through its balancer.
 */
interface Started {
  readonly url: string;
  readonly accessKey: string;
  readonly nodes: readonly { readonly url: string; readonly pid: number }[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('soundclone cluster', () => {
  let child: ChildProcess;
  let started: Started;
  let stderr = '';

  beforeAll(async () => {
    buildCli();
    child = spawn(process.execPath, [BIN, 'cluster', '--nodes', '2', '--recognizer', 'deterministic', '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const lines = createInterface({ input: child.stdout! });
    started = await new Promise<Started>((resolve, reject) => {
      lines.once('line', (line) => resolve(JSON.parse(line) as Started));
      child.once('exit', (code) => reject(new Error(`soundclone cluster exited (${code}): ${stderr}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGINT');
      await exited;
    }
  });

  it('prints the balancer URL and a made-up key, and answers REST calls through it', async () => {
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(started.accessKey).toMatch(/^dev-[0-9a-f]{16}$/);
    expect(started.nodes).toHaveLength(2);
    const run = await cli(['user', '--base-url', started.url, '--access-key', started.accessKey, '--json'], {});
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toHaveProperty('plan');
  });

  // The sample's session is created on one node and its socket, token and finish may land on another:
  // each reaches the node holding the session by forwarding.
  it(
    'captions the sample through the balancer',
    async () => {
      const run = await cli(['captions', '--sample', '--base-url', started.url, '--access-key', started.accessKey], {}, 120_000);
      expect(run.stderr).not.toContain('error');
      expect(run.code).toBe(0);
      expect(run.stdout.trim().length).toBeGreaterThan(0);
    },
    150_000,
  );

  it('Ctrl-C (SIGINT) stops the nodes, the balancer and PostgreSQL, and exits 0', async () => {
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(started.nodes.map((n) => n.pid).filter(alive)).toEqual([]);
    await expect(fetch(started.url)).rejects.toThrow();
    expect(stderr).toContain('cluster stopped');
  });
});
