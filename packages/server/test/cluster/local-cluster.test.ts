import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { API_PREFIX } from '@soundclone/core/internal';
import { isLocalClusterError, LocalClusterError } from '../../src/cluster/cluster-error.js';
import { haproxyConfig } from '../../src/cluster/haproxy.js';
import { LocalCluster } from '../../src/cluster/local-cluster.js';
import { isLocalPostgresError } from '../../src/cluster/local-postgres.js';

/**
 * The local cluster: real node processes of the built server command, a real PostgreSQL and a real
 * haproxy on loopback ports; failures staged by killing and restarting them.
 */
const KEY = 'cluster-key';
const serverDir = fileURLToPath(new URL('../..', import.meta.url));

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** This process's children running `what` (from /proc): what a cluster must not leave behind. */
function childrenRunning(what: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const ppid = Number(readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]?.split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(what)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

async function userInfo(url: string): Promise<{ status: number; retryAfter: string | null; body: unknown }> {
  const res = await fetch(`${url}${API_PREFIX}/user/info`, { headers: { accessKey: KEY } });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.json() };
}

describe('LocalCluster with node processes', () => {
  let cluster: LocalCluster;

  beforeAll(async () => {
    // The nodes run the built command: build it first (quick when nothing changed).
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-b', serverDir], { stdio: 'pipe' });
    cluster = await LocalCluster.start({ nodes: 2, accessKeys: [KEY], nodeArgs: ['--recognizer', 'deterministic'], postgres: { fast: true } });
  });
  afterAll(() => cluster?.stop());

  it('answers through the balancer, every node a process of its own with the balancer as its public URL', async () => {
    expect(cluster.nodes).toHaveLength(2);
    const pids = cluster.nodes.map((n) => n.pid as number);
    expect(new Set(pids).size).toBe(2);
    expect(pids.every(alive)).toBe(true);
    expect(childrenRunning('cli.js').sort()).toEqual([...pids].sort());
    expect((await userInfo(cluster.url)).status).toBe(200);
    // The nodes have GET /health: the balancer checks it (a draining node answers 503 there).
    expect(cluster.healthCheck).toEqual({ kind: 'http', path: '/health' });
    // Each node answers on its own port too (the balancer's health check and a debugger use it).
    for (const node of cluster.nodes) expect((await userInfo(node.url)).status).toBe(200);
  });

  it('a node killed with kill -9 is gone, the balancer keeps answering, and the node restarts on its port', async () => {
    const [first] = cluster.nodes;
    const pid = first!.pid as number;
    const port = first!.port;
    await cluster.killNode(0);
    expect(alive(pid)).toBe(false);
    expect(first!.running).toBe(false);
    // A connection refused by the dead node is sent to the other one (redispatch), before and after
    // the health check marks it down.
    const statuses = [];
    for (let i = 0; i < 8; i++) statuses.push((await userInfo(cluster.url)).status);
    expect(statuses).toEqual(Array(8).fill(200));
    await cluster.restartNode(0);
    expect(first!.port).toBe(port);
    expect(first!.pid).not.toBe(pid);
    expect((await userInfo(first!.url)).status).toBe(200);
  });

  it('an SDK client under load does not notice a node killed with kill -9 (redispatch, then the health check; 502s retried)', async () => {
    const client = new SoundClone({ accessKey: KEY, baseUrl: cluster.url, retryDelay: { baseMs: 20, maxMs: 100 } });
    let ok = 0;
    const failures: unknown[] = [];
    const until = Date.now() + 2_000;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (Date.now() < until) {
          try {
            await client.user.info();
            ok += 1;
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    await cluster.killNode(1);
    await load;
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(20);
    await cluster.restartNode(1);
  });

  it('a node stopped with SIGTERM drains: the balancer takes it out first, and a client under load sees no failure', async () => {
    const client = new SoundClone({ accessKey: KEY, baseUrl: cluster.url, maxRetries: 0 });
    let ok = 0;
    const failures: unknown[] = [];
    let stopping = true;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (stopping) {
          try {
            await client.user.info();
            ok += 1;
          } catch (error) {
            failures.push(error);
          }
        }
      }),
    );
    await new Promise((r) => setTimeout(r, 300));
    const pid = cluster.nodes[0]!.pid as number;
    await cluster.stopNode(0);
    stopping = false;
    await load;
    expect(alive(pid)).toBe(false);
    // Without retries: every request the balancer sent during the drain was answered.
    expect(failures).toEqual([]);
    expect(ok).toBeGreaterThan(20);
    await cluster.restartNode(0);
  });

  it('with PostgreSQL stopped the nodes answer 503 SERVICE_UNAVAILABLE (STORE_UNAVAILABLE, Retry-After), and resume after it restarts', async () => {
    await cluster.stopPostgres();
    try {
      // Past the health checks' verdict (every node's /health says 503 within ~1 s): the requests still
      // reach the nodes (unchecked backups), whose answer is the typed one, not haproxy's own 503 page.
      await new Promise((r) => setTimeout(r, 1_500));
      const down = await userInfo(cluster.url);
      expect(down.status).toBe(503);
      expect(down.retryAfter).toBe('1');
      expect(down.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'STORE_UNAVAILABLE' } });
    } finally {
      await cluster.restartPostgres();
    }
    expect(cluster.nodes.every((n) => n.running)).toBe(true);
    // The pool reconnects on its next query; allow the first to meet a connection cut by the restart.
    let status = 0;
    for (let i = 0; i < 20 && status !== 200; i++) status = (await userInfo(cluster.url)).status;
    expect(status).toBe(200);
  });

  it('with the balancer stopped its address refuses connections while the nodes answer; it restarts on the same address', async () => {
    await cluster.stopBalancer();
    await expect(fetch(cluster.url)).rejects.toThrow();
    expect((await userInfo(cluster.nodes[1]!.url)).status).toBe(200);
    await cluster.restartBalancer();
    expect((await userInfo(cluster.url)).status).toBe(200);
  });

  it('stop() leaves nothing running and nothing on disk', async () => {
    const pids = [...cluster.nodes.map((n) => n.pid as number), cluster.balancerPid as number];
    const dirs = [cluster.root, cluster.postgres!.root];
    await cluster.stop();
    expect(pids.filter(alive)).toEqual([]);
    expect([...childrenRunning('cli.js'), ...childrenRunning('haproxy'), ...childrenRunning('postgres')]).toEqual([]);
    expect(dirs.filter((d) => existsSync(d))).toEqual([]);
    await expect(fetch(cluster.url)).rejects.toThrow();
  });
});

describe('LocalCluster with nodes in this process', () => {
  it('balances every request on its own, round robin, over one keep-alive connection', async () => {
    const cluster = await LocalCluster.start({ nodes: 3, accessKeys: [KEY], inProcess: { recognizer: 'deterministic' }, postgres: { fast: true } });
    try {
      const before = cluster.nodes.map((n) => n.server!.requests.length);
      // fetch keeps its connection to the balancer alive between calls.
      for (let i = 0; i < 6; i++) expect((await userInfo(cluster.url)).status).toBe(200);
      const served = cluster.nodes.map((n, i) => n.server!.requests.length - before[i]!);
      expect(served).toEqual([2, 2, 2]);
    } finally {
      await cluster.stop();
    }
  });
});

describe('LocalCluster refusals', () => {
  it('without haproxy: LocalClusterError HAPROXY_NOT_INSTALLED before anything starts', async () => {
    const error = await LocalCluster.start({ accessKeys: [KEY], haproxyBin: '/nonexistent/haproxy' }).catch((e: unknown) => e);
    expect(isLocalClusterError(error)).toBe(true);
    expect(error).toMatchObject({ code: 'HAPROXY_NOT_INSTALLED', message: expect.stringContaining('/nonexistent/haproxy') });
  });

  it('without PostgreSQL: LocalPostgresError POSTGRES_NOT_INSTALLED, and no node started', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'no-postgres-'));
    try {
      const error = await LocalCluster.start({ nodes: 2, accessKeys: [KEY], postgres: { binDir: empty } }).catch((e: unknown) => e);
      expect(isLocalPostgresError(error)).toBe(true);
      expect(error).toMatchObject({ code: 'POSTGRES_NOT_INSTALLED' });
      expect(childrenRunning('cli.js')).toEqual([]);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });

  it('a node that cannot start: NODE_START_FAILED with its last output lines, and the rest stopped', async () => {
    const error = await LocalCluster.start({ nodes: 2, accessKeys: [KEY], nodeArgs: ['--recognizer', 'whisper'], postgres: { fast: true } }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LocalClusterError);
    const failure = error as LocalClusterError;
    expect(failure.code).toBe('NODE_START_FAILED');
    expect(failure.logTail.join('\n')).toContain('--recognizer takes');
    expect(failure.message).toContain('--recognizer takes');
    expect(childrenRunning('cli.js')).toEqual([]);
    expect(childrenRunning('postgres')).toEqual([]);
  });

  it('the balancer config balances per request, tunnels sockets and checks health as told', () => {
    const http = haproxyConfig({ port: 9000, servers: [{ name: 'n1', port: 9001 }, { name: 'n2', port: 9002 }], healthCheck: { kind: 'http', path: '/health' } });
    expect(http).toContain('balance roundrobin');
    expect(http).toContain('option http-server-close');
    expect(http).toContain('timeout tunnel 1h');
    expect(http).toContain('option httpchk GET /health');
    expect(http).toMatch(/server n2 127\.0\.0\.1:9002\n/);
    expect(http).toContain('server n2-unchecked 127.0.0.1:9002 backup no-check');
    const tcp = haproxyConfig({ port: 9000, servers: [{ name: 'n1', port: 9001 }], healthCheck: { kind: 'tcp' } });
    expect(tcp).not.toContain('httpchk');
    expect(tcp).not.toContain('backup');
    expect(tcp).toContain('default-server check');
  });
});
