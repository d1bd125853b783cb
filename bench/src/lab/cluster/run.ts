import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SoundClone } from '@soundclone/core';
import { LocalCluster, LocalPostgres } from '@soundclone/server';
import { API_PREFIX, BENCH_KEY, hostServer, serverFlags } from '../server/host.js';
import { percentile, sleep, speech } from '../speech.js';

/**
 * `pnpm bench:cluster`: what running the service on PostgreSQL and as several nodes costs, one run,
 * side by side (about a minute):
 *
 *   1 node, memory       the server's command, state in memory
 *   1 node, PostgreSQL   the same command with --database-url (a local PostgreSQL, durable: fsync on)
 *   3 nodes, PostgreSQL  LocalCluster: three node processes on one such PostgreSQL behind haproxy
 *
 * Per target, after a short warm-up:
 *   batch tasks/s   CONCURRENCY clients each creating transcriptions of one uploaded 2 s WAV with
 *                   waitForCompletion, back to back, for SECONDS; completed tasks per second (the
 *                   service's simulated task timing, 70 ms of waits per task, is in every row alike)
 *   REST p50/p99    CONCURRENCY clients each sending GET /user/info (authentication + the account's
 *                   ledger from the store) back to back for SECONDS, over keep-alive; per-request latency
 *                   and requests per second
 * Every process (nodes, PostgreSQL, haproxy, this load generator) shares the machine's cores: the rows
 * compare configurations on one machine, not capacities of a deployment. Deterministic recognizer.
 * `--seconds N` (default 6), `--concurrency N` (default 16), `--no-write` leaves bench/results/cluster.md alone.
 */
const RESULTS = fileURLToPath(new URL('../../../results/', import.meta.url));

interface Target {
  readonly label: string;
  readonly url: string;
  stop(): Promise<void>;
}

interface Row {
  readonly label: string;
  readonly tasksPerSecond: number;
  readonly failedTasks: number;
  readonly restPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly failedRequests: number;
}

function wavOf(pcm: Int16Array): Uint8Array {
  const out = new Uint8Array(44 + pcm.length * 2);
  const view = new DataView(out.buffer);
  const text = (at: number, s: string): void => [...s].forEach((c, i) => (out[at + i] = c.charCodeAt(0)));
  text(0, 'RIFF');
  view.setUint32(4, 36 + pcm.length * 2, true);
  text(8, 'WAVE');
  text(12, 'fmt ');
  view.setUint32(16, 16, true);
  view.setUint16(20, 1, true);
  view.setUint16(22, 1, true);
  view.setUint32(24, 16_000, true);
  view.setUint32(28, 32_000, true);
  view.setUint16(32, 2, true);
  view.setUint16(34, 16, true);
  text(36, 'data');
  view.setUint32(40, pcm.length * 2, true);
  new Int16Array(out.buffer, 44).set(pcm);
  return out;
}

async function batch(url: string, seconds: number, concurrency: number): Promise<{ perSecond: number; failed: number }> {
  const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: url, maxRetries: 0 });
  const { uploadId } = await client.uploads.create(wavOf(speech(2, 7)), { filename: 'bench.wav', contentType: 'audio/wav' });
  const run = async (until: number): Promise<{ done: number; failed: number }> => {
    let done = 0;
    let failed = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < until) {
          try {
            const task = await client.stt.transcriptions.create({ uploadId, waitForCompletion: true });
            if (task.status === 'COMPLETED') done += 1;
            else failed += 1;
          } catch {
            failed += 1;
          }
        }
      }),
    );
    return { done, failed };
  };
  await run(Date.now() + 1_000); // warm-up
  const started = Date.now();
  const { done, failed } = await run(started + seconds * 1000);
  return { perSecond: done / ((Date.now() - started) / 1000), failed };
}

async function rest(url: string, seconds: number, concurrency: number): Promise<{ perSecond: number; p50: number; p99: number; failed: number }> {
  const target = `${url}${API_PREFIX}/user/info`;
  const run = async (until: number): Promise<{ latencies: number[]; failed: number }> => {
    const latencies: number[] = [];
    let failed = 0;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (Date.now() < until) {
          const t0 = performance.now();
          try {
            const res = await fetch(target, { headers: { accessKey: BENCH_KEY } });
            await res.arrayBuffer();
            if (res.status === 200) latencies.push(performance.now() - t0);
            else failed += 1;
          } catch {
            failed += 1;
          }
        }
      }),
    );
    return { latencies, failed };
  };
  await run(Date.now() + 1_000);
  const started = Date.now();
  const { latencies, failed } = await run(started + seconds * 1000);
  latencies.sort((a, b) => a - b);
  return { perSecond: latencies.length / ((Date.now() - started) / 1000), p50: percentile(latencies, 50), p99: percentile(latencies, 99), failed };
}

async function oneNodeMemory(): Promise<Target> {
  const server = await hostServer({ in: 'child', recognizer: 'deterministic' });
  return { label: '1 node, memory', url: server.url, stop: () => server.close() };
}

async function oneNodePostgres(): Promise<Target> {
  const postgres = await LocalPostgres.start();
  try {
    const server = await hostServer({ in: 'child', recognizer: 'deterministic', flags: ['--database-url', postgres.url()] });
    return { label: '1 node, PostgreSQL', url: server.url, stop: async () => (await server.close(), await postgres.stop()) };
  } catch (error) {
    await postgres.stop();
    throw error;
  }
}

async function threeNodes(): Promise<Target> {
  // Each node with the flags the single node gets, but the port, host and key the cluster sets.
  const flags = serverFlags({ recognizer: 'deterministic' });
  const nodeArgs = flags.slice(flags.indexOf('--recognizer'));
  const cluster = await LocalCluster.start({ nodes: 3, accessKeys: [BENCH_KEY], nodeArgs });
  return { label: '3 nodes, PostgreSQL, haproxy', url: cluster.url, stop: () => cluster.stop() };
}

function table(rows: readonly Row[], seconds: number, concurrency: number, load: number): string {
  const f = (n: number, digits = 1): string => n.toFixed(digits);
  return [
    `Cluster bench: ${concurrency} concurrent clients, ${seconds} s per measurement, ${cpus().length} cores shared by every process, load average ${load.toFixed(1)} before the run (other programs' work shows in the rows) (${new Date().toISOString().slice(0, 10)}).`,
    '',
    '| target | batch tasks/s | failed tasks | REST req/s | REST p50 ms | REST p99 ms | failed requests |',
    '|---|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.label} | ${f(r.tasksPerSecond)} | ${r.failedTasks} | ${f(r.restPerSecond, 0)} | ${f(r.p50Ms)} | ${f(r.p99Ms)} | ${r.failedRequests} |`),
    '',
  ].join('\n');
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '6' }, concurrency: { type: 'string', default: '16' }, 'no-write': { type: 'boolean', default: false }, help: { type: 'boolean', default: false } }, strict: true });
  if (values.help) {
    process.stdout.write('usage: node bench/dist/lab/cluster/run.js [--seconds 6] [--concurrency 16] [--no-write]\n');
    return;
  }
  const seconds = Number(values.seconds);
  const concurrency = Number(values.concurrency);
  if (!(seconds > 0) || !Number.isInteger(concurrency) || concurrency < 1) throw new Error('--seconds takes a positive number, --concurrency a whole number of at least 1');
  const load = loadavg()[0] ?? 0;
  const rows: Row[] = [];
  for (const start of [oneNodeMemory, oneNodePostgres, threeNodes]) {
    const target = await start();
    try {
      process.stderr.write(`${target.label}: batch…`);
      const b = await batch(target.url, seconds, concurrency);
      process.stderr.write(' REST…');
      const r = await rest(target.url, seconds, concurrency);
      process.stderr.write(' done\n');
      rows.push({ label: target.label, tasksPerSecond: b.perSecond, failedTasks: b.failed, restPerSecond: r.perSecond, p50Ms: r.p50, p99Ms: r.p99, failedRequests: r.failed });
    } finally {
      await target.stop();
    }
    await sleep(500);
  }
  const text = table(rows, seconds, concurrency, load);
  process.stdout.write(text);
  if (!values['no-write']) {
    await mkdir(RESULTS, { recursive: true });
    await writeFile(`${RESULTS}cluster.md`, `# Cluster bench\n\n\`pnpm bench:cluster\` (bench/src/lab/cluster/run.ts).\n\n${text}`);
  }
}

await main();
