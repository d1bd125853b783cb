import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Redis } from 'ioredis';
import { sessionKeys } from '../live/scripts.js';
import { NODES } from '../protocol.js';
import type { ServerOptions } from '../server.js';
import { LocalClusterError } from './cluster-error.js';
import { InProcessNode, ProcessNode, probe, type ClusterNode } from './cluster-node.js';
import { freePort } from './free-port.js';
import { findHaproxy, Haproxy, haproxyConfig, type HealthCheck } from './haproxy.js';
import { LocalPostgres, type LocalPostgresOptions } from './local-postgres.js';
import { LocalRedis } from './local-redis.js';

/**
 * Several nodes of the service on this machine, one PostgreSQL, one balancer: what a deployment runs,
 * small enough for a laptop, a test or a benchmark. Never for data anyone keeps (the database lives in
 * a temporary directory and goes with stop()).
 *
 *   start()  haproxy installed? server built? -> temp dir, balancer port -> LocalPostgres (unless a
 *            databaseUrl is given) -> N nodes at once, each --public-url <balancer>, each answering HTTP
 *            -> health check chosen (GET /health if a node answers 200 there, else TCP) -> haproxy.cfg
 *            -> haproxy -db -f haproxy.cfg, listening
 *   stop()   haproxy, the nodes (SIGTERM), PostgreSQL, the temp dir: nothing left running or on disk
 *
 *        clients ──> haproxy 127.0.0.1:B ──round robin, per request──> n1 | n2 | n3 ──> PostgreSQL
 *                                                                                  └──> Redis (options.redis)
 *
 * Failures to stage: killNode(i) (kill -9), stopNode(i) (SIGTERM: a drain), restartNode(i) (same port), stopPostgres() / restartPostgres()
 * (fast shutdown, then the same data directory and port), stopBalancer() / restartBalancer(). A start that fails stops whatever it started
 * and rejects with LocalClusterError (HAPROXY_NOT_INSTALLED, SERVER_NOT_BUILT, NODE_START_FAILED with the
 * node's last output lines, HAPROXY_START_FAILED) or LocalPostgresError.
 */
export interface LocalClusterOptions {
  /** How many nodes (default 3). */
  readonly nodes?: number;
  /** The balancer's port on 127.0.0.1 (default 0: a free one). */
  readonly balancerPort?: number;
  readonly accessKeys: readonly string[];
  /** More server flags for every node process (`--recognizer auto`, `--max-decoders 2`, ...; not --port). */
  readonly nodeArgs?: readonly string[];
  /**
   * Run the nodes in this process with startServer(options) instead of as processes of the server's
   * command (cluster-node.ts InProcessNode): for tests that read every node's request log or set its
   * faults. port, host, accessKeys, databaseUrl and publicUrl are the cluster's.
   */
  readonly inProcess?: Omit<Partial<ServerOptions>, 'port' | 'host' | 'accessKeys' | 'databaseUrl' | 'publicUrl' | 'dataDir' | 'store' | 'redisUrl'>;
  /** Use this database instead of starting a PostgreSQL (stopPostgres and restartPostgres then refuse). */
  readonly databaseUrl?: string;
  /**
   * Keep the live state of realtime sessions in Redis, so a session outlives its node (every node gets
   * --redis-url): `true` starts a throwaway Redis (LocalRedis, stopped with the cluster), a string is the
   * URL of one to use. Default: none.
   */
  readonly redis?: boolean | string;
  /** The PostgreSQL started otherwise (fast: durability off, right for tests and benchmarks). */
  readonly postgres?: LocalPostgresOptions;
  /**
   * The balancer's health check: `GET <path>` expecting 200 when the nodes answer 200 there at start,
   * else a TCP connect (default '/health'; false: always TCP).
   */
  readonly healthCheckPath?: string | false;
  /** The haproxy binary (default /usr/sbin/haproxy or on PATH). */
  readonly haproxyBin?: string;
  /** The built server command (default the package's dist/cli.js). */
  readonly serverCli?: string;
  /** How long a node may take to answer (ms, default 60,000: PocketSphinx loads its model first). */
  readonly nodeReadyTimeoutMs?: number;
}

/** The package's built server command, also when this module runs from src/ (tests). */
export function builtServerCli(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  return join(here, '..', '..', 'dist', 'cli.js');
}

export class LocalCluster {
  private stopped = false;
  /**
   * If this process exits without stop() (an uncaught error), its children are killed on the way out:
   * the node processes and haproxy run in process groups of their own (so a terminal's Ctrl-C reaches
   * only this process, which then stops them in order). PostgreSQL's directory is swept by the next start.
   */
  private readonly onExit = (): void => {
    for (const pid of [this.balancer.pid, ...this.nodes.map((n) => n.pid), this.redis?.pid]) {
      if (pid === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  };

  private constructor(
    /** The temporary directory (haproxy.cfg); removed by stop(). */
    readonly root: string,
    /** The balancer's base URL: what clients use (and every node's --public-url). */
    readonly url: string,
    readonly accessKeys: readonly string[],
    readonly databaseUrl: string,
    readonly nodes: readonly ClusterNode[],
    readonly healthCheck: HealthCheck,
    /** The PostgreSQL this cluster started (undefined with options.databaseUrl). */
    readonly postgres: LocalPostgres | undefined,
    /** The Redis this cluster started (options.redis true), else undefined. */
    readonly redis: LocalRedis | undefined,
    /** The live state's Redis URL every node uses (options.redis), else undefined. */
    readonly redisUrl: string | undefined,
    private balancer: Haproxy,
    private readonly haproxyBin: string,
  ) {
    process.on('exit', this.onExit);
  }

  /** The balancer's process id. */
  get balancerPid(): number | undefined {
    return this.balancer.pid;
  }

  static async start(options: LocalClusterOptions): Promise<LocalCluster> {
    const count = options.nodes ?? 3;
    if (!Number.isSafeInteger(count) || count < 1) throw new RangeError(`nodes must be a whole number of at least 1 (got ${count})`);
    if (options.accessKeys.length === 0) throw new TypeError('a cluster needs at least one access key');
    const haproxyBin = options.haproxyBin ?? findHaproxy();
    if (haproxyBin === undefined || !existsSync(haproxyBin)) {
      throw new LocalClusterError('HAPROXY_NOT_INSTALLED', `haproxy is not installed (looked for ${options.haproxyBin ?? '/usr/sbin/haproxy, /usr/local/sbin/haproxy and on PATH'}; Debian: apt-get install haproxy, or npm run setup)`);
    }
    const cli = options.serverCli ?? builtServerCli();
    if (options.inProcess === undefined && !existsSync(cli)) {
      throw new LocalClusterError('SERVER_NOT_BUILT', `the server's command is not built (${cli} is missing): run pnpm build first`);
    }

    const root = mkdtempSync(join(tmpdir(), 'soundclone-cluster-'));
    let postgres: LocalPostgres | undefined;
    let redis: LocalRedis | undefined;
    const nodes: ClusterNode[] = [];
    let balancer: Haproxy | undefined;
    try {
      const balancerPort = options.balancerPort !== undefined && options.balancerPort !== 0 ? options.balancerPort : await freePort();
      const url = `http://127.0.0.1:${balancerPort}`;
      if (options.databaseUrl === undefined) postgres = await LocalPostgres.start(options.postgres ?? {});
      const databaseUrl = options.databaseUrl ?? (postgres as LocalPostgres).url();
      if (options.redis === true) redis = await LocalRedis.start();
      const redisUrl = typeof options.redis === 'string' ? options.redis : redis?.url;
      const readyTimeoutMs = options.nodeReadyTimeoutMs ?? 60_000;
      const startNode = (i: number): Promise<ClusterNode> => {
        const name = `n${i + 1}`;
        if (options.inProcess !== undefined) {
          return InProcessNode.start(name, { ...options.inProcess, port: 0, accessKeys: options.accessKeys, databaseUrl, publicUrl: url, ...(redisUrl !== undefined ? { redisUrl } : {}) });
        }
        const args = ['--host', '127.0.0.1', '--database-url', databaseUrl, ...(redisUrl !== undefined ? ['--redis-url', redisUrl] : []), '--public-url', url, ...options.accessKeys.flatMap((k) => ['--access-key', k]), ...(options.nodeArgs ?? [])];
        return ProcessNode.start({ name, cli, args, readyTimeoutMs });
      };
      // All at once: the first to reach an empty database migrates it under an advisory lock, the
      // others wait for it.
      const started = await Promise.allSettled(Array.from({ length: count }, (_, i) => startNode(i)));
      for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
      const failure = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
      if (failure !== undefined) throw failure.reason;

      const healthCheck = await chooseHealthCheck(nodes, options.healthCheckPath ?? '/health');
      const configFile = join(root, 'haproxy.cfg');
      writeFileSync(configFile, haproxyConfig({ port: balancerPort, servers: nodes.map((n) => ({ name: n.name, port: n.port })), healthCheck }));
      balancer = await Haproxy.start(haproxyBin, configFile, balancerPort);
      return new LocalCluster(root, url, options.accessKeys, databaseUrl, nodes, healthCheck, postgres, redis, redisUrl, balancer, haproxyBin);
    } catch (error) {
      await balancer?.stop();
      await Promise.all(nodes.map((n) => n.kill()));
      await redis?.stop();
      await postgres?.stop();
      rmSync(root, { recursive: true, force: true });
      throw error;
    }
  }

  private node(index: number): ClusterNode {
    const node = this.nodes[index];
    if (node === undefined) throw new RangeError(`no node ${index}: the cluster has nodes 0..${this.nodes.length - 1}`);
    return node;
  }

  /** kill -9 of node `index` (0-based); in-process nodes are closed. Resolves once it has exited. */
  killNode(index: number): Promise<void> {
    return this.node(index).kill();
  }

  /**
   * Stops node `index` as a supervisor does: SIGTERM, on which it drains (GET /health answers 503 so the
   * balancer takes it out, then it closes); kill -9 after `graceMs`. In-process nodes are closed.
   */
  stopNode(index: number, graceMs = 20_000): Promise<void> {
    return this.node(index).stop(graceMs);
  }

  /** Starts node `index` again on its port; resolves once it answers HTTP. */
  restartNode(index: number): Promise<void> {
    return this.node(index).restart();
  }

  /**
   * The node (index) that holds a live session's lease now, read from Redis; undefined when nobody
   * holds it (between an owner's loss and a takeover) or the cluster has no Redis. Each node is asked
   * for its id (GET /health), so a restarted node is found under its new id.
   */
  async sessionOwner(sessionId: string): Promise<number | undefined> {
    if (this.redisUrl === undefined) return undefined;
    const redis = new Redis(this.redisUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 2000 });
    redis.on('error', () => undefined);
    let holder: string | null;
    try {
      await redis.connect();
      holder = await redis.get(sessionKeys(sessionId).lease);
    } finally {
      redis.disconnect();
    }
    if (holder === null) return undefined;
    const nodeId = holder.slice(0, holder.lastIndexOf(':'));
    for (const [index, node] of this.nodes.entries()) {
      const health = await fetch(`${node.url}${NODES.healthPath}`, { signal: AbortSignal.timeout(2000) }).then((r) => r.json() as Promise<{ nodeId?: string }>).catch(() => undefined);
      if (health?.nodeId === nodeId) return index;
    }
    return undefined;
  }

  /** Stops haproxy (open connections and socket tunnels are cut); the nodes and PostgreSQL keep running. */
  async stopBalancer(): Promise<void> {
    await this.balancer.stop();
  }

  /** haproxy again, on the same port with the same config. */
  async restartBalancer(): Promise<void> {
    if (this.balancer.running) return;
    this.balancer = await Haproxy.start(this.haproxyBin, join(this.root, 'haproxy.cfg'), this.balancer.port);
  }

  /** PostgreSQL's fast shutdown: connections are cut; nodes answer 503 SERVICE_UNAVAILABLE meanwhile. */
  async stopPostgres(): Promise<void> {
    if (this.postgres === undefined) throw new TypeError('this cluster uses a database it did not start (options.databaseUrl): it cannot stop it');
    await this.postgres.halt();
  }

  /** PostgreSQL again, on the same data directory and port. */
  async restartPostgres(): Promise<void> {
    if (this.postgres === undefined) throw new TypeError('this cluster uses a database it did not start (options.databaseUrl): it cannot restart it');
    await this.postgres.resume();
  }

  /**
   * Stops the balancer, the nodes (SIGTERM: each drains, as its --drain-grace-ms and --drain-timeout-ms
   * say; kill -9 after `graceMs`), PostgreSQL, and removes the temp dirs.
   */
  async stop(graceMs = 20_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    process.off('exit', this.onExit);
    try {
      await this.balancer.stop();
      await Promise.all(this.nodes.map((n) => n.stop(graceMs)));
    } finally {
      await this.redis?.stop();
      await this.postgres?.stop();
      rmSync(this.root, { recursive: true, force: true });
    }
  }
}

/** GET <path> answered 200 by every node: that check; else TCP. */
async function chooseHealthCheck(nodes: readonly ClusterNode[], path: string | false): Promise<HealthCheck> {
  if (path === false) return { kind: 'tcp' };
  const statuses = await Promise.all(nodes.map((n) => probe(`${n.url}${path}`)));
  return statuses.every((s) => s === 200) ? { kind: 'http', path } : { kind: 'tcp' };
}
