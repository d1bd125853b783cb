import { fork, type ChildProcess } from 'node:child_process';

/**
 * The one message vocabulary between a lab experiment and the processes it forks: the hosted reference
 * server (child-main.ts: what it measures about itself) and the hostile bench's healthy session
 * (hostile/healthy-main.ts). Read-outs travel over the IPC channel only, so no bench hook reaches the
 * server's HTTP surface. Bench-only: nothing here is part of the server's API.
 *
 * A request is answered by one reply of the same `type` (`stop` by the child's exit). A child's first
 * message is `ready`.
 */
export type Request =
  /** A GC, then measure from here: loop delay and memory peaks (server), ack latencies (healthy session). */
  | { readonly type: 'reset' }
  /** The server's event loop and memory since the last reset (probe `loop`). */
  | { readonly type: 'load' }
  /** The healthy session's acknowledgement latency since the last reset. */
  | { readonly type: 'acks' }
  /** The server's heap after two full GCs, its sockets, and a session's lines and listeners. */
  | { readonly type: 'memory'; readonly sessionId?: string | undefined }
  /** Heap one of a session's lines holds in the server. */
  | { readonly type: 'line-bytes'; readonly sessionId: string }
  /** The digest of every sample the server stored (probe `digest`). */
  | { readonly type: 'digest' }
  /** Close and exit. */
  | { readonly type: 'stop' };

export interface Ready {
  readonly type: 'ready';
  /** The server's base URL (a server child; the healthy session sends none). */
  readonly url?: string;
}

export interface ResetDone {
  readonly type: 'reset';
}

export interface ServerLoad {
  readonly type: 'load';
  /** Event-loop delay since the last reset, ms (perf_hooks.monitorEventLoopDelay). */
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  /** Baseline (after a GC, at reset) and peak since, sampled every 100 ms, MiB. */
  readonly baseRssMiB: number;
  readonly peakRssMiB: number;
  readonly baseHeldMiB: number;
  /** heapUsed + external (Buffers, ArrayBuffers): what the process holds in JS terms. */
  readonly peakHeldMiB: number;
  readonly sockets: number;
}

export interface AckStats {
  readonly type: 'acks';
  readonly acks: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly ackMaxMs: number;
  /** Socket losses the session saw since the last reset, and whether it failed for good. */
  readonly reconnects: number;
  readonly failed: string | null;
}

export interface ServerMemory {
  readonly type: 'memory';
  /** After two full collections in the server process. */
  readonly heapUsed: number;
  /** V8's heap reserved (used or not), and memory held outside it (Buffers, ArrayBuffers). */
  readonly heapTotal: number;
  readonly external: number;
  readonly rss: number;
  /** Realtime sockets open on the server now. */
  readonly sockets: number;
  /** The session's committed lines, and who listens to its events (one socket: 1). */
  readonly lines: number;
  readonly sessionListeners: number;
}

export interface ServerLineBytes {
  readonly type: 'line-bytes';
  /** Heap one of the session's lines holds: a deep copy of them all, measured after a full GC, per line. */
  readonly bytesPerLine: number;
  readonly lines: number;
}

export interface ServerDigest {
  readonly type: 'digest';
  /** Every sample the server stored, in order (what it handed the recogniser), as a PcmDigest. */
  readonly samples: number;
  readonly hash: string;
  /** Recogniser streams opened: one per session (a reconnect or rotation keeps the session's stream). */
  readonly streams: number;
}

/** The reply to each request, by its type. */
export interface Replies {
  readonly reset: ResetDone;
  readonly load: ServerLoad;
  readonly acks: AckStats;
  readonly memory: ServerMemory;
  readonly 'line-bytes': ServerLineBytes;
  readonly digest: ServerDigest;
}

export type Asked = Exclude<Request, { type: 'stop' }>;
export type Reply = Ready | Replies[keyof Replies];

/** A forked child speaking this vocabulary, seen from the parent. */
export class IpcChild {
  readonly #waiting = new Map<Reply['type'], Array<(reply: Reply) => void>>();
  #stderr = '';

  private constructor(readonly process: ChildProcess) {
    process.on('message', (message: Reply) => {
      const queue = this.#waiting.get(message.type);
      queue?.shift()?.(message);
    });
    process.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (this.#stderr = (this.#stderr + chunk).slice(-8192)));
  }

  /**
   * Forks `script` and waits for its `ready`. `execArgv` is given explicitly (fork would otherwise pass
   * on this process's own, e.g. --expose-gc). `stderr: 'keep'` keeps its last lines for the errors here.
   */
  static async start(script: string, options: { args?: readonly string[]; execArgv?: readonly string[]; stdout?: 'inherit' | 'ignore'; stderr?: 'inherit' | 'keep'; timeoutMs?: number } = {}): Promise<{ child: IpcChild; ready: Ready }> {
    const child = new IpcChild(fork(script, [...(options.args ?? [])], {
      execArgv: [...(options.execArgv ?? [])],
      stdio: ['ignore', options.stdout ?? 'ignore', options.stderr === 'inherit' ? 'inherit' : 'pipe', 'ipc'],
    }));
    try {
      return { child, ready: await child.#wait('ready', options.timeoutMs ?? 30_000) };
    } catch (error) {
      child.process.kill('SIGKILL');
      throw error;
    }
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  get pid(): number | undefined {
    return this.process.pid;
  }

  /** Sends `request` and resolves with its reply. */
  ask<R extends Asked>(request: R, timeoutMs = 10_000): Promise<Replies[R['type']]> {
    const reply = this.#wait(request.type, timeoutMs) as Promise<Replies[R['type']]>;
    this.process.send(request);
    return reply;
  }

  #wait<T extends Reply['type']>(type: T, timeoutMs: number): Promise<Extract<Reply, { type: T }>> {
    const name = this.process.spawnargs[this.process.spawnargs.length - 1] ?? this.process.spawnfile;
    return new Promise((resolve, reject) => {
      const queue = this.#waiting.get(type) ?? [];
      this.#waiting.set(type, queue);
      const settle = (): void => {
        clearTimeout(timer);
        this.process.off('exit', exited);
        const at = queue.indexOf(answer);
        if (at >= 0) queue.splice(at, 1);
      };
      const answer = (reply: Reply): void => {
        settle();
        resolve(reply as Extract<Reply, { type: T }>);
      };
      const exited = (code: number | null, signal: string | null): void => {
        settle();
        reject(new Error(`${name} exited (${String(code ?? signal)}) before answering '${type}'${this.#stderr === '' ? '' : `: ${this.#stderr}`}`));
      };
      const timer = setTimeout(() => {
        settle();
        reject(new Error(`no '${type}' from ${name} in ${String(timeoutMs)} ms${this.#stderr === '' ? '' : `: ${this.#stderr}`}`));
      }, timeoutMs);
      queue.push(answer);
      this.process.once('exit', exited);
    });
  }

  /** Asks the child to stop and waits for its exit (SIGKILL after 5 s). */
  async stop(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.send({ type: 'stop' } satisfies Request);
    const kill = setTimeout(() => this.process.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(kill);
  }
}

/**
 * The child's side: answers each request with `handlers[type]` (a request without a handler is
 * ignored, and its asker times out), `stop` included. When the parent goes away, `stop` runs too.
 */
export function answerRequests(handlers: { readonly [T in keyof Replies]?: (request: Extract<Request, { type: T }>) => Replies[T] | Promise<Replies[T]> } & { readonly stop: () => void }): void {
  let stopped = false;
  const stop = (): void => {
    if (stopped) return;
    stopped = true;
    handlers.stop();
  };
  process.on('message', (request: Request) => {
    if (request.type === 'stop') {
      stop();
      return;
    }
    const handler = handlers[request.type] as ((r: Request) => Reply | Promise<Reply>) | undefined;
    if (handler === undefined) return;
    Promise.resolve(handler(request)).then(send, (error: unknown) => {
      process.stderr.write(`'${request.type}' failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    });
  });
  process.once('disconnect', stop);
}

/** Sends the child's `ready` (its first message). */
export function sendReady(url?: string): void {
  send(url === undefined ? { type: 'ready' } : { type: 'ready', url });
}

function send(message: Reply): void {
  process.send?.(message);
}
