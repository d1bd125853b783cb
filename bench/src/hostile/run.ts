import { fork, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { ATTACKS, type Attack } from './attacks.js';
import type { HealthyStats, ServerStats } from './protocol.js';
import { API_PREFIX, BENCH_KEY } from './protocol.js';
import { renderReport, type AttackRow } from './report.js';

/**
 * `pnpm bench:hostile`: the reference server in one process, a healthy realtime session streaming
 * real-time audio in another, and here, attack after attack, 20 hostile clients. Per attack: the
 * server's event-loop delay (measured inside it), the healthy session's ack latency, the server's
 * memory per hostile connection and whether it survived. One table; `--write` (default for a full
 * run) puts it in bench/results/hostile.md and .json.
 */
const USAGE = `usage: node bench/dist/hostile/run.js [--only id1,id2] [--seconds N] [--clients N] [--write]
  attacks: ${ATTACKS.map((a) => a.id).join(', ')}
  --seconds N  how long each attack runs (default 12)
  --clients N  hostile clients per attack (default 20)
  --write      write bench/results/hostile.{md,json} even for a partial run`;

const RESULTS = fileURLToPath(new URL('../../results/', import.meta.url));
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const progress = (line: string): void => void process.stderr.write(`${line}\n`);

interface Options {
  readonly attacks: readonly Attack[];
  readonly seconds: number;
  readonly clients: number;
  readonly write: boolean;
}

function parse(argv: readonly string[]): Options {
  let attacks: readonly Attack[] = ATTACKS;
  let seconds = 12;
  let clients = 20;
  let write: boolean | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => argv[++i] ?? (() => { throw new Error(`${arg} needs a value\n${USAGE}`); })();
    if (arg === '--only') {
      const ids = value().split(',');
      for (const id of ids) if (!ATTACKS.some((a) => a.id === id)) throw new Error(`unknown attack '${id}'\n${USAGE}`);
      attacks = ATTACKS.filter((a) => ids.includes(a.id));
    } else if (arg === '--seconds') seconds = Number(value());
    else if (arg === '--clients') clients = Number(value());
    else if (arg === '--write') write = true;
    else throw new Error(USAGE);
  }
  return { attacks, seconds, clients, write: write ?? attacks.length === ATTACKS.length };
}

/** A forked child and its IPC: `ask` sends a request and resolves with the reply of that type. */
class Child {
  private constructor(readonly process: ChildProcess, private readonly replies: Map<string, (message: any) => void>) {}

  static async start(script: string, args: readonly string[], execArgv: readonly string[] = []): Promise<{ child: Child; ready: any }> {
    const child = fork(script, [...args], { execArgv: [...execArgv], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    const replies = new Map<string, (message: any) => void>();
    child.on('message', (message: any) => {
      const reply = replies.get(message?.type);
      replies.delete(message?.type);
      reply?.(message);
    });
    const wrapped = new Child(child, replies);
    const ready = await wrapped.wait('ready', 30_000);
    return { child: wrapped, ready };
  }

  get alive(): boolean {
    return this.process.exitCode === null && this.process.signalCode === null;
  }

  wait(type: string, timeoutMs = 10_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.replies.delete(type);
        reject(new Error(`no ${type} from ${this.process.spawnfile} in ${timeoutMs} ms`));
      }, timeoutMs);
      const exited = (): void => {
        clearTimeout(timer);
        reject(new Error(`${this.process.spawnfile} exited`));
      };
      this.replies.set(type, (message) => {
        clearTimeout(timer);
        this.process.off('exit', exited);
        resolve(message);
      });
      this.process.once('exit', exited);
    });
  }

  ask<T>(request: { type: string }, replyType: string, timeoutMs = 10_000): Promise<T> {
    const reply = this.wait(replyType, timeoutMs) as Promise<T>;
    this.process.send(request);
    return reply;
  }

  async stop(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    this.process.send({ type: 'stop' });
    const kill = setTimeout(() => this.process.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(kill);
  }
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(`${url}${API_PREFIX}/voices`, { headers: { accessKey: BENCH_KEY }, signal: AbortSignal.timeout(5000) });
    await response.arrayBuffer();
    return response.status === 200;
  } catch {
    return false;
  }
}

async function measure(attack: Attack | undefined, server: Child, healthy: Child, url: string, options: Options): Promise<AttackRow> {
  await server.ask({ type: 'reset' }, 'reset-done');
  await healthy.ask({ type: 'reset' }, 'reset-done');
  const stop = attack === undefined ? async () => undefined : await attack.start({ url, clients: options.clients });
  await sleep(options.seconds * 1000);
  let serverStats: ServerStats | undefined;
  let healthyStats: HealthyStats | undefined;
  try {
    serverStats = await server.ask<ServerStats>({ type: 'stats' }, 'server-stats', 20_000);
    healthyStats = await healthy.ask<HealthyStats>({ type: 'stats' }, 'healthy-stats', 20_000);
  } finally {
    await stop();
  }
  const survived = server.alive && (await answers(url)) && healthy.alive && healthyStats.failed === null;
  const clients = attack === undefined ? 1 : options.clients;
  const row: AttackRow = {
    id: attack?.id ?? 'baseline',
    title: attack?.title ?? 'no attack: the healthy session alone',
    clients: attack === undefined ? 0 : options.clients,
    loopP99Ms: serverStats.loopP99Ms,
    loopMaxMs: serverStats.loopMaxMs,
    ackP50Ms: healthyStats.ackP50Ms,
    ackP99Ms: healthyStats.ackP99Ms,
    ackMaxMs: healthyStats.ackMaxMs,
    acks: healthyStats.acks,
    reconnects: healthyStats.reconnects,
    rssPerClientMiB: Math.max(0, serverStats.peakRssMiB - serverStats.baseRssMiB) / clients,
    heldPerClientMiB: Math.max(0, serverStats.peakHeldMiB - serverStats.baseHeldMiB) / clients,
    survived,
  };
  progress(`${row.id}: loop p99 ${row.loopP99Ms.toFixed(1)} ms (max ${row.loopMaxMs.toFixed(0)}), ack p99 ${row.ackP99Ms.toFixed(1)} ms, ` +
    `${row.rssPerClientMiB.toFixed(2)} MiB RSS / client, survived ${survived}`);
  return row;
}

async function main(): Promise<void> {
  const options = parse(process.argv.slice(2));
  const started = Date.now();
  const { child: server, ready } = await Child.start(here('./server-main.js'), [], ['--expose-gc']);
  const url = (ready as { url: string }).url;
  const { child: healthy } = await Child.start(here('./healthy-main.js'), [url]);
  // The attackers run here, at a lower CPU priority than the server and the healthy session (set after
  // the forks, which would inherit it): on a real deployment they are on other machines, and what is
  // measured is the server's behaviour, not who wins the CPU on a small shared VM.
  try {
    setPriority(10);
  } catch {
    progress('note: could not lower the attackers\' CPU priority');
  }
  const rows: AttackRow[] = [];
  try {
    await sleep(2000); // the healthy session settles
    rows.push(await measure(undefined, server, healthy, url, options));
    for (const attack of options.attacks) {
      if (!server.alive) break;
      rows.push(await measure(attack, server, healthy, url, options));
      await sleep(2000); // dropped connections are released before the next baseline
    }
  } finally {
    await healthy.stop().catch(() => undefined);
    await server.stop().catch(() => undefined);
  }
  const meta = { date: new Date().toISOString(), node: process.version, cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, seconds: options.seconds, clients: options.clients, durationS: (Date.now() - started) / 1000 };
  const text = renderReport(meta, rows);
  process.stdout.write(`\n${text}\n`);
  if (options.write) {
    await mkdir(RESULTS, { recursive: true });
    await writeFile(`${RESULTS}hostile.md`, `# Hostile-client benchmark\n\nGenerated by \`pnpm bench:hostile\`; see ../README.md ("Hostile clients").\n\n${text}\n`);
    await writeFile(`${RESULTS}hostile.json`, `${JSON.stringify({ meta, rows }, null, 1)}\n`);
    progress(`wrote ${RESULTS}hostile.md, hostile.json`);
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
