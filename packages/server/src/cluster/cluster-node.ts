import { spawn, type ChildProcess } from 'node:child_process';
import { request } from 'node:http';
import type { RunningServer, ServerOptions } from '../server.js';
import { LocalClusterError } from './cluster-error.js';
import { LogTail } from './log-tail.js';

/**
 * One node of a local cluster, in one of two forms:
 *
 * - ProcessNode: a child process of the server's own command (`node dist/cli.js --port P
 *   --database-url URL --public-url BALANCER --access-key K ...`), as a deployment runs it. kill() is
 *   a real `kill -9`; stop() is SIGTERM (what a supervisor sends; the server drains on it where it can).
 * - InProcessNode: `startServer(options)` in this process, for tests that need every node's request log
 *   and fault switches at hand, or options that have no flag (account overrides, task timing). Nodes
 *   share nothing but the database and the process; kill() can only close the server (there is no
 *   process of its own to kill).
 *
 * Both keep their port across restart(), so the balancer's config stays valid.
 */
export interface ClusterNode {
  /** n1, n2, ...: also the server's name in the balancer's config. */
  readonly name: string;
  /** The node's own address (http://127.0.0.1:PORT); clients use the balancer's instead. */
  readonly url: string;
  readonly port: number;
  /** The node's process id (ProcessNode), or undefined (in this process). */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** In-process nodes: the running server (undefined while stopped); process nodes: undefined. */
  readonly server: RunningServer | undefined;
  /** Starts it again on the same port (after kill or stop); resolves once it answers HTTP. */
  restart(): Promise<void>;
  /** Ends it at once: SIGKILL for a process, close() in this process. */
  kill(): Promise<void>;
  /** Ends it the way a supervisor does (SIGTERM, SIGKILL after `graceMs`), or close(). */
  stop(graceMs?: number): Promise<void>;
}

/** Resolves with the HTTP status of a GET, or undefined when nothing answered. */
export function probe(url: string, timeoutMs = 2_000): Promise<number | undefined> {
  return new Promise((resolve) => {
    const req = request(url, { method: 'GET', timeout: timeoutMs, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.once('timeout', () => req.destroy());
    req.once('error', () => resolve(undefined));
    req.end();
  });
}

export interface ProcessNodeOptions {
  readonly name: string;
  /** The built server command (dist/cli.js). */
  readonly cli: string;
  /** Every flag but --port: the node's database, public URL, keys and the rest. */
  readonly args: readonly string[];
  readonly readyTimeoutMs: number;
  readonly env?: NodeJS.ProcessEnv;
}

export class ProcessNode implements ClusterNode {
  private child: ChildProcess | undefined;
  private log = new LogTail();
  private boundPort = 0;

  private constructor(private readonly options: ProcessNodeOptions) {}

  /** Starts the node on a port of its choosing (or `port`); rejects with NODE_START_FAILED and its last output lines. */
  static async start(options: ProcessNodeOptions, port = 0): Promise<ProcessNode> {
    const node = new ProcessNode(options);
    node.boundPort = port;
    await node.restart();
    return node;
  }

  get name(): string {
    return this.options.name;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  get pid(): number | undefined {
    return this.running ? this.child?.pid : undefined;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  get server(): undefined {
    return undefined;
  }

  /** The node's last output lines (stdout and stderr). */
  logTail(count?: number): string[] {
    return this.log.tail(count);
  }

  async restart(): Promise<void> {
    if (this.running) return;
    this.log = new LogTail();
    const args = [this.options.cli, '--port', String(this.boundPort), ...this.options.args];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: this.options.env ?? process.env, detached: true });
    this.child = child;
    this.log.follow(child.stdout);
    this.log.follow(child.stderr);
    const failed = (why: string, cause?: unknown): LocalClusterError =>
      new LocalClusterError('NODE_START_FAILED', `node ${this.name} did not start: ${why}`, this.log.tail(15), cause === undefined ? undefined : { cause });
    // The command's first stdout line is the address it listens on.
    const listening = await new Promise<string | LocalClusterError>((resolve) => {
      let out = '';
      const timer = setTimeout(() => done(failed(`no address within ${this.options.readyTimeoutMs} ms`)), this.options.readyTimeoutMs);
      const onData = (d: Buffer): void => {
        out += d.toString('utf8');
        const line = out.split('\n');
        if (line.length > 1) done((line[0] ?? '').trim());
      };
      const onExit = (code: number | null, signal: NodeJS.Signals | null): void => done(failed(`it exited (${code ?? signal}) before listening`));
      const onError = (error: Error): void => done(failed(error.message, error));
      const done = (value: string | LocalClusterError): void => {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.off('exit', onExit);
        child.off('error', onError);
        resolve(value);
      };
      child.stdout?.on('data', onData);
      child.once('exit', onExit);
      child.once('error', onError);
    });
    if (typeof listening !== 'string') {
      await this.kill();
      throw listening;
    }
    const port = Number(/:(\d+)\/?$/.exec(listening)?.[1]);
    if (!Number.isInteger(port) || port <= 0) {
      await this.kill();
      throw failed(`its first line is not an address: ${listening}`);
    }
    this.boundPort = port;
    // Listening is not yet answering: wait for any HTTP answer (404 included).
    const deadline = Date.now() + this.options.readyTimeoutMs;
    while ((await probe(`${this.url}/`)) === undefined) {
      if (!this.running || Date.now() > deadline) {
        await this.kill();
        throw failed(`no HTTP answer at ${this.url}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  kill(): Promise<void> {
    return this.end('SIGKILL', 0);
  }

  stop(graceMs = 10_000): Promise<void> {
    return this.end('SIGTERM', graceMs);
  }

  private async end(signal: NodeJS.Signals, graceMs: number): Promise<void> {
    const child = this.child;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(signal);
    const late = signal === 'SIGKILL' ? undefined : setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    if (late !== undefined) clearTimeout(late);
  }
}

export class InProcessNode implements ClusterNode {
  private current: RunningServer | undefined;
  private boundPort = 0;

  private constructor(
    readonly name: string,
    private readonly options: ServerOptions,
  ) {}

  static async start(name: string, options: ServerOptions): Promise<InProcessNode> {
    const node = new InProcessNode(name, options);
    node.boundPort = options.port ?? 0;
    await node.restart();
    return node;
  }

  get port(): number {
    return this.boundPort;
  }

  get url(): string {
    return `http://127.0.0.1:${this.boundPort}`;
  }

  get pid(): undefined {
    return undefined;
  }

  get running(): boolean {
    return this.current !== undefined;
  }

  get server(): RunningServer | undefined {
    return this.current;
  }

  async restart(): Promise<void> {
    if (this.current !== undefined) return;
    const { startServer } = await import('../server.js');
    try {
      this.current = await startServer({ ...this.options, host: '127.0.0.1', port: this.boundPort });
    } catch (error) {
      throw new LocalClusterError('NODE_START_FAILED', `node ${this.name} did not start: ${error instanceof Error ? error.message : String(error)}`, [], { cause: error });
    }
    this.boundPort = this.current.port;
  }

  async kill(): Promise<void> {
    await this.stop();
  }

  async stop(): Promise<void> {
    const server = this.current;
    this.current = undefined;
    await server?.close();
  }
}
