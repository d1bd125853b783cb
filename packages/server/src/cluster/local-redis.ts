import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * A throwaway Redis server on this machine (Debian's `redis-server`), for tests and for running several
 * nodes of the service on a developer machine; never for data anyone keeps: nothing is saved to disk
 * (`--save '' --appendonly no`), and the temporary directory it runs in goes at stop().
 *
 *   start()   find redis-server -> temp dir -> redis-server --port P --bind 127.0.0.1 -> ready on PONG
 *   halt()    SIGKILL: connections cut, every key gone (Redis keeps nothing on disk here)
 *   resume()  the same port again, empty
 *   stop()    halt, then the directory is removed
 *
 * Not installed: LocalRedisError REDIS_NOT_INSTALLED (npm run setup installs it).
 */
export type LocalRedisErrorCode = 'REDIS_NOT_INSTALLED' | 'REDIS_START_FAILED';

export class LocalRedisError extends Error {
  override readonly name = 'LocalRedisError';
  constructor(
    readonly code: LocalRedisErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isLocalRedisError(value: unknown): value is LocalRedisError {
  return value instanceof LocalRedisError || (value instanceof Error && value.name === 'LocalRedisError');
}

/** The redis-server binary: /usr/bin (Debian), then PATH; undefined when Redis is not installed. */
export function findRedisServer(): string | undefined {
  for (const dir of ['/usr/bin', '/usr/local/bin', ...(process.env['PATH'] ?? '').split(delimiter)]) {
    if (dir !== '' && existsSync(join(dir, 'redis-server'))) return join(dir, 'redis-server');
  }
  return undefined;
}

export class LocalRedis {
  private child: ChildProcess | undefined;
  private output = '';

  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async start(options: { readonly bin?: string; readonly readyTimeoutMs?: number } = {}): Promise<LocalRedis> {
    const bin = options.bin ?? findRedisServer();
    if (bin === undefined || !existsSync(bin)) throw new LocalRedisError('REDIS_NOT_INSTALLED', 'redis-server is not installed (Debian: apt-get install redis-server, or npm run setup)');
    const dir = mkdtempSync(join(tmpdir(), 'soundclone-redis-'));
    const redis = new LocalRedis(bin, dir, await freePort());
    try {
      await redis.resume(options.readyTimeoutMs ?? 10_000);
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return redis;
  }

  /** redis://127.0.0.1:PORT */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** The server's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** Starts it again on its port (empty); resolves once it answers PING. */
  async resume(readyTimeoutMs = 10_000): Promise<void> {
    if (this.child !== undefined) return;
    this.output = '';
    const child = spawn(this.bin, ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', this.dir, '--protected-mode', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const keep = (chunk: Buffer): void => {
      this.output = (this.output + chunk.toString('utf8')).slice(-4000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    child.once('exit', () => {
      if (this.child === child) this.child = undefined;
    });
    const deadline = Date.now() + readyTimeoutMs;
    while (Date.now() < deadline) {
      if (this.child !== child) break;
      if (await pong(this.port)) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await this.halt();
    throw new LocalRedisError('REDIS_START_FAILED', `redis-server did not answer on port ${this.port}: ${this.output.trim().split('\n').slice(-5).join(' | ')}`);
  }

  /** Kills it (SIGKILL); resolves once it exited. */
  async halt(): Promise<void> {
    const child = this.child;
    if (child === undefined) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
    this.child = undefined;
  }

  /** Kills it and removes its directory. */
  async stop(): Promise<void> {
    await this.halt();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Whether something on 127.0.0.1:port answers PING with +PONG. */
function pong(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}
