import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { API_PREFIX, REALTIME_PATHS } from '@soundclone/core/internal';
import { parseServerFlags, RECOGNIZER_CHOICES, startServer, type RecognizerChoice, type RunningServer } from '@soundclone/server';
import { IpcChild, type Asked, type Replies } from './ipc.js';

/**
 * The reference server for every lab experiment, hosted one way: in this process, or in a child process
 * when the experiment must read the server's own CPU time or memory (or kill it). Either way the server
 * starts from the same flags as its CLI (`parseServerFlags`, packages/server/src/cli-flags.ts), on a free
 * port of 127.0.0.1, with the one bench key.
 *
 *   hostServer({ in: 'child', recognizer, ... })         child-main.ts, forked; cpuMs() and rssFromProc()
 *                                                         from /proc, and read-outs over IPC (ipc.ts)
 *   hostServer({ in: 'this-process', recognizer, ... })  startServer here; its fault switches at hand
 */
export const BENCH_KEY = 'bench-key';
export { API_PREFIX };
/** The realtime socket's path on the server (a proxy in front of it needs it spelled out). */
export const SOCKET_PATH = `${API_PREFIX}${REALTIME_PATHS.socket}`;

const CHILD_MAIN = fileURLToPath(new URL('./child-main.js', import.meta.url));

/**
 * What a server child measures about itself, answered over IPC:
 *   loop    event-loop delay (perf_hooks, 2 ms resolution) and RSS / heap + external peaks sampled every
 *           100 ms; `reset`, `load` (the hostile bench)
 *   digest  every sample the server stores folded into a PcmDigest on its way to the recogniser (the
 *           recogniser wrapped); `digest` (the long session)
 * Without probes the child measures nothing: `memory` and `line-bytes` are computed when asked.
 */
export type Probe = 'loop' | 'digest';

export interface ServerSetup {
  /** Stated by each experiment: the CLI's default is `auto` (PocketSphinx when installed), startServer's `deterministic`. */
  readonly recognizer: RecognizerChoice;
  /** PocketSphinx decoders at once, all of them open to the bench's one key (--max-decoders, --max-decoders-per-account). */
  readonly decoders?: number;
  /** More of the CLI's flags, e.g. ['--rotate-every-samples', '4800000']. */
  readonly flags?: readonly string[];
}

export interface ChildSetup extends ServerSetup {
  readonly in: 'child';
  readonly probes?: readonly Probe[];
  /** Start the child with --expose-gc (memory read after a full collection). */
  readonly exposeGc?: boolean;
  /** The server's stderr: passed through, or kept for the error when it fails (default). */
  readonly stderr?: 'inherit' | 'keep';
}

export interface InProcessSetup extends ServerSetup {
  readonly in: 'this-process';
}

/** What the child is started with (argv[2] of child-main.js, JSON). */
export interface ChildConfig {
  readonly flags: readonly string[];
  readonly probes: readonly Probe[];
}

/** `name` as a recognizer choice, or a clear error (names come from the bench's command line). */
export function recognizerChoice(name: string): RecognizerChoice {
  if (!(RECOGNIZER_CHOICES as readonly string[]).includes(name)) throw new Error(`unknown recognizer '${name}': ${RECOGNIZER_CHOICES.join(', ')}`);
  return name as RecognizerChoice;
}

/**
 * The server's flags. One key stands for every client of a bench: the per-account share of sessions and
 * decoders would cap the measured load at one account's share, so it is the whole server here (an
 * experiment that wants a cap of its own passes --max-sessions-per-account).
 */
export function serverFlags(setup: ServerSetup): string[] {
  const more = setup.flags ?? [];
  return [
    '--port', '0', '--host', '127.0.0.1', '--access-key', BENCH_KEY,
    '--recognizer', recognizerChoice(setup.recognizer),
    ...(setup.decoders === undefined ? [] : ['--max-decoders', String(setup.decoders), '--max-decoders-per-account', String(setup.decoders)]),
    ...(more.includes('--max-sessions-per-account') ? [] : ['--max-sessions-per-account', '100000']),
    ...more,
  ];
}

export function hostServer(setup: ChildSetup): Promise<ServerChild>;
export function hostServer(setup: InProcessSetup): Promise<ServerHere>;
export async function hostServer(setup: ChildSetup | InProcessSetup): Promise<ServerChild | ServerHere> {
  return setup.in === 'child' ? ServerChild.start(setup) : ServerHere.start(setup);
}

/** The server in this process. */
export class ServerHere {
  private constructor(readonly server: RunningServer) {}

  static async start(setup: ServerSetup): Promise<ServerHere> {
    const { options, socketFaults } = parseServerFlags(serverFlags(setup));
    const server = await startServer(options);
    for (const rule of socketFaults) server.faults.socket.inject(rule);
    return new ServerHere(server);
  }

  get url(): string {
    return this.server.url;
  }

  close(): Promise<void> {
    return this.server.close();
  }
}

/**
 * The server in its own process, so that its CPU time and memory can be read apart from the client's
 * (the clients run in the bench process). CPU time, not wall time: on a shared VM the server may wait
 * for a core, which wall time would count and CPU time does not.
 */
export class ServerChild {
  private constructor(private readonly child: IpcChild, readonly url: string) {}

  static async start(setup: ChildSetup): Promise<ServerChild> {
    const config: ChildConfig = { flags: serverFlags(setup), probes: [...(setup.probes ?? [])] };
    const { child, ready } = await IpcChild.start(CHILD_MAIN, {
      args: [JSON.stringify(config)],
      execArgv: setup.exposeGc === true ? ['--expose-gc'] : [],
      stderr: setup.stderr ?? 'keep',
    });
    if (ready.url === undefined) {
      await child.stop();
      throw new Error('the reference server child sent no url');
    }
    return new ServerChild(child, ready.url);
  }

  get alive(): boolean {
    return this.child.alive;
  }

  /** A read-out over IPC (ipc.ts): `memory`, `line-bytes`, and with their probe `reset`, `load`, `digest`. */
  ask<R extends Asked>(request: R, timeoutMs?: number): Promise<Replies[R['type']]> {
    return this.child.ask(request, timeoutMs);
  }

  /** The server's user + system CPU time so far, ms (Linux /proc; NaN elsewhere). */
  cpuMs(): number {
    const pid = this.child.pid;
    if (pid === undefined || !existsSync(`/proc/${String(pid)}/stat`)) return Number.NaN;
    // Fields after the command name, which is parenthesised and may contain spaces.
    const stat = readFileSync(`/proc/${String(pid)}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const utime = Number(fields[11]);
    const stime = Number(fields[12]);
    return ((utime + stime) * 1000) / clockTicks();
  }

  /** Resident set size from /proc/<pid>/status (VmRSS), bytes; NaN off Linux. */
  rssFromProc(): number {
    const path = `/proc/${String(this.child.pid)}/status`;
    if (!existsSync(path)) return Number.NaN;
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(path, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]) * 1024;
  }

  /** Closes the server and waits for the process to exit (killed after 5 s). */
  close(): Promise<void> {
    return this.child.stop();
  }
}

let ticks: number | undefined;

export function clockTicks(): number {
  if (ticks === undefined) {
    try {
      ticks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticks = 100;
    }
  }
  return ticks;
}
