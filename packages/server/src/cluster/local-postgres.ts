import { spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { freePort } from './free-port.js';

/**
 * A throwaway PostgreSQL server on this machine: `initdb` into a temporary directory, `postgres` on a
 * free loopback port, gone (process and directory) at stop. For tests and for running several nodes of
 * the service against one database on a developer machine; never for data anyone keeps.
 *
 *   start()   find the binaries -> temp dir -> initdb -> postgres -c listen_addresses=127.0.0.1 -k <dir>
 *             -> ready once a connection succeeds
 *   halt()    SIGINT (fast shutdown: open connections are cut, not waited for); the directory stays
 *   resume()  the same data directory and port again
 *   stop()    halt, then the directory is removed
 *
 * PostgreSQL refuses to run as root, so when this process is root both programs run as the `postgres`
 * system user (looked up in /etc/passwd) and the directory is given to it; otherwise they run as the
 * current user. The binaries are looked up in /usr/lib/postgresql/<newest>/bin (Debian, Ubuntu), then
 * on PATH; none found is LocalPostgresError POSTGRES_NOT_INSTALLED.
 *
 * A test run killed before its teardown leaves a postmaster behind: start() stops those of earlier
 * processes that no longer run (each directory records the pid that started it) and removes their
 * directories.
 */
export type LocalPostgresErrorCode = 'POSTGRES_NOT_INSTALLED' | 'POSTGRES_INIT_FAILED' | 'POSTGRES_START_FAILED';

export class LocalPostgresError extends Error {
  override readonly name = 'LocalPostgresError';
  constructor(
    readonly code: LocalPostgresErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isLocalPostgresError(value: unknown): value is LocalPostgresError {
  return value instanceof LocalPostgresError || (value instanceof Error && value.name === 'LocalPostgresError');
}

export interface LocalPostgresOptions {
  /**
   * Trade durability for speed (fsync, synchronous_commit and full_page_writes off): right for tests,
   * where a crash of the machine loses nothing anyone keeps. Default false.
   */
  readonly fast?: boolean;
  /** Directory holding initdb and postgres (default: found as described above). */
  readonly binDir?: string;
  /** How long to wait for the first connection (ms, default 15,000). */
  readonly readyTimeoutMs?: number;
  /** Parent of the temporary directory (default os.tmpdir()). */
  readonly parentDir?: string;
}

const DIR_PREFIX = 'soundclone-pg-';
const OWNER_FILE = 'owner.pid';
/** The superuser initdb creates; connections are trusted (loopback and the socket directory only). */
const SUPERUSER = 'postgres';

/** The directory of initdb and postgres, or undefined when PostgreSQL is not installed. */
export function findPostgresBinDir(): string | undefined {
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((v) => /^\d+(\.\d+)?$/.test(v)).sort((a, b) => Number(b) - Number(a));
    for (const v of versions) {
      const bin = join(debian, v, 'bin');
      if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'postgres'))) return bin;
    }
  }
  for (const dir of (process.env['PATH'] ?? '').split(delimiter)) {
    if (dir !== '' && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'postgres'))) return dir;
  }
  return undefined;
}

/** uid/gid to run PostgreSQL as: the postgres system user when we are root, ourselves otherwise. */
function runAs(): { uid: number; gid: number } | undefined {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  let passwd = '';
  try {
    passwd = readFileSync('/etc/passwd', 'utf8');
  } catch {
    // Without /etc/passwd the user cannot be found; reported below.
  }
  for (const line of passwd.split('\n')) {
    const [name, , uid, gid] = line.split(':');
    if (name === 'postgres' && uid !== undefined && gid !== undefined) return { uid: Number(uid), gid: Number(gid) };
  }
  throw new LocalPostgresError('POSTGRES_NOT_INSTALLED', 'running as root, and PostgreSQL refuses root: there is no `postgres` system user to run it as (install the postgresql package)');
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Stops postmasters left by processes that died before their teardown (SIGQUIT: nobody needs their
 * data), and removes their directories. Directories of live processes are left alone.
 */
export function sweepLeftovers(parent: string = tmpdir()): void {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(DIR_PREFIX));
  } catch {
    return;
  }
  for (const name of names) {
    const root = join(parent, name);
    try {
      const owner = Number(readFileSync(join(root, OWNER_FILE), 'utf8').trim());
      if (!Number.isSafeInteger(owner) || owner <= 0 || alive(owner)) continue;
      const pidFile = join(root, 'data', 'postmaster.pid');
      if (existsSync(pidFile)) {
        const postmaster = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (Number.isSafeInteger(postmaster) && postmaster > 0 && alive(postmaster)) process.kill(postmaster, 'SIGQUIT');
      }
      rmSync(root, { recursive: true, force: true });
    } catch {
      // Not ours to judge (no owner file yet, or another sweeper got there first).
    }
  }
}

function run(file: string, args: readonly string[], cwd: string, user: { uid: number; gid: number } | undefined): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, ...(user ?? {}) });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}

export class LocalPostgres {
  private child: ChildProcess | undefined;
  private log = '';

  private constructor(
    /** The temporary directory (removed by stop()). */
    readonly root: string,
    readonly port: number,
    private readonly binDir: string,
    private readonly user: { uid: number; gid: number } | undefined,
    private readonly options: LocalPostgresOptions,
  ) {}

  /** Where the cluster's files are (root/data). */
  get dataDir(): string {
    return join(this.root, 'data');
  }

  /** A connection URL for a database of this server (default `postgres`). */
  url(database = 'postgres'): string {
    return `postgres://${SUPERUSER}@127.0.0.1:${this.port}/${encodeURIComponent(database)}`;
  }

  /** The server is running (between start/resume and halt/stop). */
  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  static async start(options: LocalPostgresOptions = {}): Promise<LocalPostgres> {
    const binDir = options.binDir ?? findPostgresBinDir();
    if (binDir === undefined || !existsSync(join(binDir, 'initdb')) || !existsSync(join(binDir, 'postgres'))) {
      throw new LocalPostgresError('POSTGRES_NOT_INSTALLED', `PostgreSQL is not installed: no initdb and postgres in ${binDir ?? '/usr/lib/postgresql/*/bin or on PATH'} (Debian: apt-get install postgresql)`);
    }
    const user = runAs();
    const parent = options.parentDir ?? tmpdir();
    sweepLeftovers(parent);
    const root = mkdtempSync(join(parent, DIR_PREFIX));
    writeFileSync(join(root, OWNER_FILE), `${process.pid}\n`);
    const server = new LocalPostgres(root, await freePort(), binDir, user, options);
    try {
      if (user !== undefined) chownSync(root, user.uid, user.gid);
      const init = await run(join(binDir, 'initdb'), ['-D', server.dataDir, '-U', SUPERUSER, '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync', '--no-instructions'], root, user);
      if (init.code !== 0) throw new LocalPostgresError('POSTGRES_INIT_FAILED', `initdb exited with ${init.code}: ${init.output.trim().split('\n').slice(-3).join(' / ')}`);
      await server.resume();
      return server;
    } catch (error) {
      await server.stop();
      throw error;
    }
  }

  /** Starts the server on the kept data directory and port; resolves once a connection succeeds. */
  async resume(): Promise<void> {
    if (this.running) return;
    const fast = this.options.fast === true ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : [];
    const args = ['-D', this.dataDir, '-p', String(this.port), '-k', this.dataDir, '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', ...fast];
    this.log = '';
    const child = spawn(join(this.binDir, 'postgres'), args, { cwd: this.root, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, LC_ALL: 'C' }, ...(this.user ?? {}) });
    this.child = child;
    child.stderr?.on('data', (d: Buffer) => {
      // The last few KB say why it stopped, if it does.
      this.log = (this.log + d.toString()).slice(-4096);
    });
    const spawned = new Promise<Error | undefined>((resolve) => {
      child.once('error', resolve);
      child.once('spawn', () => resolve(undefined));
    });
    const failed = await spawned;
    if (failed !== undefined) throw new LocalPostgresError('POSTGRES_START_FAILED', `postgres could not be started: ${failed.message}`, { cause: failed });
    // node-postgres is loaded only when a PostgreSQL is started (the package's entry exports this class).
    const { default: pg } = await import('pg');
    const deadline = Date.now() + (this.options.readyTimeoutMs ?? 15_000);
    for (;;) {
      if (!this.running) throw new LocalPostgresError('POSTGRES_START_FAILED', `postgres exited (${child.exitCode ?? child.signalCode}) before accepting connections: ${this.log.trim().split('\n').slice(-3).join(' / ')}`);
      const client = new pg.Client({ connectionString: this.url(), connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline) {
          await this.halt();
          throw new LocalPostgresError('POSTGRES_START_FAILED', `postgres did not accept connections within ${this.options.readyTimeoutMs ?? 15_000} ms`, { cause: error });
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  /** Fast shutdown (SIGINT): open connections are cut; resolves when the postmaster has exited. */
  async halt(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGINT');
    // A postmaster that ignores the fast shutdown for 10 s gets the immediate one.
    const late = setTimeout(() => child.kill('SIGQUIT'), 10_000);
    await exited;
    clearTimeout(late);
  }

  /** Halts the server and removes its directory. */
  async stop(): Promise<void> {
    await this.halt();
    rmSync(this.root, { recursive: true, force: true });
  }
}

/**
 * Creates an empty database on the server `serverUrl` names (a URL of any of its databases, e.g.
 * LocalPostgres.url()) and returns its URL: one server, a database per cluster or test. `name` takes
 * lower-case letters, digits and underscores.
 */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) throw new TypeError(`a database name takes a-z, 0-9 and _ (got ${name})`);
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: serverUrl });
  client.on('error', () => undefined);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
