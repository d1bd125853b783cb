import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { delimiter, join } from 'node:path';
import { LocalClusterError } from './cluster-error.js';
import { LogTail } from './log-tail.js';

/**
 * The balancer in front of a local cluster: HAProxy (Debian's 2.6; scripts/setup.sh installs it), run
 * in the foreground (`haproxy -db -f cfg`) on a loopback port, with a config made here.
 *
 * What the config decides, and why:
 * - `balance roundrobin` with `option http-server-close`: every request is balanced on its own, also
 *   over a client's keep-alive connection, so consecutive calls of one client land on different nodes
 *   (what a multi-node service must survive, and what the cluster tests want to exercise).
 * - WebSocket upgrades are balanced like any request; after the 101 HAProxy tunnels the connection and
 *   `timeout tunnel` (1 h) governs it instead of the client/server timeouts.
 * - Health checks every 500 ms, down after 2 failures, up after 1 success: a killed node is out within
 *   about a second. The check is `GET <path>` expecting 200 when the nodes have a health endpoint
 *   (a draining node answers 503 there and is taken out before it stops), else a TCP connect.
 * - With the HTTP check, every node is also an unchecked backup server: when every node fails its check
 *   (the database is down: /health answers 503 on all of them) requests still reach the nodes, which
 *   answer 503 STORE_UNAVAILABLE with Retry-After themselves, rather than haproxy's own bare 503 page.
 * - `retries 3` + `option redispatch 1`: a request whose connection to a node was refused (the node is
 *   dead but not yet marked down) is sent to another node. HAProxy retries only connection failures by
 *   default, so a request that reached a node is never sent twice.
 */
export type HealthCheck = { readonly kind: 'http'; readonly path: string } | { readonly kind: 'tcp' };

export interface BalancerConfig {
  readonly port: number;
  readonly servers: readonly { readonly name: string; readonly port: number }[];
  readonly healthCheck: HealthCheck;
}

export function haproxyConfig(config: BalancerConfig): string {
  const check = config.healthCheck.kind === 'http' ? [`  option httpchk GET ${config.healthCheck.path}`, '  http-check expect status 200'] : [];
  return [
    'global',
    '  maxconn 4096',
    '',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    // Long enough for the service's long polls and slow uploads; idle keep-alive ends sooner.
    '  timeout client 5m',
    '  timeout server 5m',
    '  timeout http-keep-alive 10s',
    '  timeout tunnel 1h',
    '  timeout client-fin 5s',
    '  option http-server-close',
    '  retries 3',
    '  option redispatch 1',
    '',
    'frontend soundclone',
    `  bind 127.0.0.1:${config.port}`,
    '  default_backend nodes',
    '',
    'backend nodes',
    '  balance roundrobin',
    ...check,
    '  default-server check inter 500ms fall 2 rise 1',
    ...config.servers.map((s) => `  server ${s.name} 127.0.0.1:${s.port}`),
    // Every node again as an unchecked backup, all of them in turn, used only when no node passes its
    // check: when the database is down every node's /health says 503, and the nodes' own answer (a
    // typed 503 STORE_UNAVAILABLE with Retry-After) is better than the balancer's bare 503 page.
    ...(config.healthCheck.kind === 'http'
      ? ['  option allbackups', ...config.servers.map((s) => `  server ${s.name}-unchecked 127.0.0.1:${s.port} backup no-check`)]
      : []),
    '',
  ].join('\n');
}

/** The haproxy binary: /usr/sbin/haproxy (Debian), else on PATH; undefined when not installed. */
export function findHaproxy(): string | undefined {
  const dirs = ['/usr/sbin', '/usr/local/sbin', ...(process.env['PATH'] ?? '').split(delimiter)];
  for (const dir of dirs) {
    if (dir !== '' && existsSync(join(dir, 'haproxy'))) return join(dir, 'haproxy');
  }
  return undefined;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/** One running haproxy. start() resolves once its port accepts connections. */
export class Haproxy {
  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    private readonly log: LogTail,
  ) {}

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(bin: string, configFile: string, port: number, readyTimeoutMs = 10_000): Promise<Haproxy> {
    const log = new LogTail();
    const child = spawn(bin, ['-db', '-f', configFile], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    log.follow(child.stdout);
    log.follow(child.stderr);
    const spawned = await new Promise<Error | undefined>((resolve) => {
      child.once('error', resolve);
      child.once('spawn', () => resolve(undefined));
    });
    if (spawned !== undefined) throw new LocalClusterError('HAPROXY_START_FAILED', `haproxy could not be started: ${spawned.message}`, [], { cause: spawned });
    const proxy = new Haproxy(child, port, log);
    const deadline = Date.now() + readyTimeoutMs;
    for (;;) {
      if (!proxy.running) throw new LocalClusterError('HAPROXY_START_FAILED', `haproxy exited (${child.exitCode ?? child.signalCode}) before listening on 127.0.0.1:${port}`, log.tail(10));
      if (await accepts(port)) return proxy;
      if (Date.now() > deadline) {
        await proxy.stop();
        throw new LocalClusterError('HAPROXY_START_FAILED', `haproxy did not listen on 127.0.0.1:${port} within ${readyTimeoutMs} ms`, log.tail(10));
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Hard stop (SIGTERM: open connections are cut, tunnels included); resolves when it has exited. */
  async stop(): Promise<void> {
    if (!this.running) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const late = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(late);
  }
}
