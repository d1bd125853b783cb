import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** bench/dist/realtime/ → packages/server/dist/cli.js (built by `pnpm build`, which `pnpm bench` runs). */
const SERVER_CLI = fileURLToPath(new URL('../../../packages/server/dist/cli.js', import.meta.url));

export const BENCH_KEY = 'bench-key';

/**
 * The reference server in its own process, so that its CPU time can be read apart from the
 * client's (the clients run in the bench process). CPU time, not wall time: on a shared VM the
 * server may wait for a core, which wall time would count and CPU time does not.
 */
export class ServerProcess {
  private constructor(private readonly child: ChildProcess, readonly url: string, readonly recognizer: string) {}

  static async start(args: readonly string[] = []): Promise<ServerProcess> {
    if (!existsSync(SERVER_CLI)) throw new Error(`the reference server is not built (${SERVER_CLI}): run pnpm build`);
    // One key stands for every client of a bench: the per-account share of sessions and decoders would
    // cap the measured load at one account's share, so it is the whole server here.
    const fairness = ['--max-sessions-per-account', '100000', ...(args.includes('--max-decoders') ? ['--max-decoders-per-account', args[args.indexOf('--max-decoders') + 1] ?? '4'] : [])];
    const child = spawn(process.execPath, [SERVER_CLI, '--port', '0', '--host', '127.0.0.1', '--access-key', BENCH_KEY, ...fairness, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`the reference server did not start in 20 s: ${stderr}`)), 20_000);
      child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        const line = out.split('\n')[0];
        if (out.includes('\n') && line !== undefined) {
          clearTimeout(timer);
          resolve(line.trim());
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the reference server exited (${String(code)}): ${stderr}`));
      });
    });
    const recognizer = args.includes('--recognizer') ? (args[args.indexOf('--recognizer') + 1] ?? 'auto') : 'auto';
    return new ServerProcess(child, url, recognizer);
  }

  /** The server's user + system CPU time so far, ms (Linux /proc; NaN elsewhere). */
  cpuMs(): number {
    const pid = this.child.pid;
    if (pid === undefined || !existsSync(`/proc/${pid}/stat`)) return Number.NaN;
    // Fields after the command name, which is parenthesised and may contain spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clockTicks();
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

let ticks: number | undefined;

function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}
