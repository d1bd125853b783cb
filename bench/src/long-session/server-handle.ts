import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { ServerDigest, ServerLineBytes, ServerMemory, ServerReply, ServerRequest } from './protocol.js';

const MAIN = fileURLToPath(new URL('./server-main.js', import.meta.url));

/** The long-session bench's server process (server-main.ts) and its IPC read-outs. */
export class ServerHandle {
  private constructor(private readonly child: ChildProcess, readonly url: string) {}

  static async start(key: string, rotateEverySamples: number): Promise<ServerHandle> {
    const child = fork(MAIN, [key, String(rotateEverySamples)], { execArgv: ['--expose-gc'], stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (chunk: string) => void (stderr += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the long-session server did not start in 20 s: ${stderr}`)), 20_000);
      child.once('message', (m: ServerReply) => {
        clearTimeout(timer);
        if (m.type === 'ready') resolve(m.url);
        else reject(new Error(`unexpected first message ${m.type}`));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the long-session server exited (${String(code)}): ${stderr}`));
      });
    });
    return new ServerHandle(child, url);
  }

  #ask<T extends ServerReply>(request: ServerRequest, type: T['type']): Promise<T> {
    return new Promise((resolve, reject) => {
      const onMessage = (m: ServerReply): void => {
        if (m.type !== type) return;
        this.child.off('message', onMessage);
        clearTimeout(timer);
        resolve(m as T);
      };
      const timer = setTimeout(() => {
        this.child.off('message', onMessage);
        reject(new Error(`the server did not answer '${request.type}' in 10 s`));
      }, 10_000);
      this.child.on('message', onMessage);
      this.child.send(request);
    });
  }

  /** Heap after two full GCs in the server, its open sockets, and the session's lines and listeners. */
  memory(sessionId?: string): Promise<ServerMemory> {
    return this.#ask<ServerMemory>({ type: 'memory', sessionId }, 'memory');
  }

  lineBytes(sessionId: string): Promise<ServerLineBytes> {
    return this.#ask<ServerLineBytes>({ type: 'line-bytes', sessionId }, 'line-bytes');
  }

  digest(): Promise<ServerDigest> {
    return this.#ask<ServerDigest>({ type: 'digest' }, 'digest');
  }

  /** Resident set size from /proc/<pid>/status (VmRSS), bytes; NaN off Linux. */
  rssFromProc(): number {
    const path = `/proc/${String(this.child.pid)}/status`;
    if (!existsSync(path)) return Number.NaN;
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(path, 'utf8'));
    return match === null ? Number.NaN : Number(match[1]) * 1024;
  }

  async close(): Promise<void> {
    if (this.child.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.send({ type: 'stop' } satisfies ServerRequest);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}
