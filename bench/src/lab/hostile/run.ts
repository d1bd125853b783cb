import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { progress } from '../../collect/progress.js';
import { API_PREFIX, BENCH_KEY, hostServer, type ServerChild } from '../server/host.js';
import { IpcChild, type AckStats, type ServerLoad } from '../server/ipc.js';
import { ATTACKS, type Attack } from './attacks.js';
import { renderReport, type AttackRow } from './report.js';

/**
 * `pnpm bench:hostile`: the reference server in one process, a healthy realtime session streaming
 * real-time audio in another, and here, attack after attack, 20 hostile clients. Per attack: the
 * server's event-loop delay (measured inside it), the healthy session's ack latency, the server's
 * memory per hostile connection and whether it survived. One table; `--write` (default for a full
 * run) puts it in bench/results/hostile.md and .json.
 */
const USAGE = `usage: node bench/dist/lab/hostile/run.js [--only id1,id2] [--seconds N] [--clients N] [--write]
  attacks: ${ATTACKS.map((a) => a.id).join(', ')}
  --seconds N  how long each attack runs (default 12)
  --clients N  hostile clients per attack (default 20)
  --write      write bench/results/hostile.{md,json} even for a partial run`;

const RESULTS = fileURLToPath(new URL('../../../results/', import.meta.url));
const here = (file: string): string => fileURLToPath(new URL(file, import.meta.url));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

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
    const value = (): string => argv[++i] ?? usage(`${String(arg)} needs a value`);
    const count = (): number => {
      const n = Number(value());
      return Number.isInteger(n) && n > 0 ? n : usage(`${String(arg)} takes a positive integer`);
    };
    // pnpm passes a `--` before the script's own flags through.
    if (arg === '--') continue;
    if (arg === '--only') {
      const ids = value().split(',');
      for (const id of ids) if (!ATTACKS.some((a) => a.id === id)) usage(`unknown attack '${id}'`);
      attacks = ATTACKS.filter((a) => ids.includes(a.id));
    } else if (arg === '--seconds') seconds = count();
    else if (arg === '--clients') clients = count();
    else if (arg === '--write') write = true;
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else usage(`unknown argument '${String(arg)}'`);
  }
  return { attacks, seconds, clients, write: write ?? attacks.length === ATTACKS.length };
}

function usage(problem: string): never {
  process.stderr.write(`${problem}\n${USAGE}\n`);
  process.exit(2);
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

async function measure(attack: Attack | undefined, server: ServerChild, healthy: IpcChild, url: string, options: Options): Promise<AttackRow> {
  await server.ask({ type: 'reset' });
  await healthy.ask({ type: 'reset' });
  const stop = attack === undefined ? async () => undefined : await attack.start({ url, clients: options.clients });
  await sleep(options.seconds * 1000);
  let serverStats: ServerLoad | undefined;
  let healthyStats: AckStats | undefined;
  try {
    serverStats = await server.ask({ type: 'load' }, 20_000);
    healthyStats = await healthy.ask({ type: 'acks' }, 20_000);
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
  // Attackers and the healthy session share the one key: the per-account session limit would refuse most
  // attackers at creation (that defence has its own tests); raised here so every attack reaches the sockets.
  const server = await hostServer({ in: 'child', recognizer: 'deterministic', flags: ['--max-sessions-per-account', '1000'], probes: ['loop'], exposeGc: true, stderr: 'inherit' });
  const url = server.url;
  const { child: healthy } = await IpcChild.start(here('./healthy-main.js'), { args: [url], stdout: 'inherit', stderr: 'inherit' }).catch(async (error: unknown) => {
    await server.close();
    throw error;
  });
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
    await server.close().catch(() => undefined);
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
