import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { ChaosProxy } from '@soundclone/server';
import { BENCH_KEY, hostServer, SOCKET_PATH, type ServerHere } from '../server/host.js';
import { percentile, sleep, speech } from '../speech.js';

/**
 * `pnpm bench:half-open`: how fast a half-open socket is caught while audio flows, on loopback. Each
 * run streams 16 kHz PCM in real time through a proxy, makes the proxy swallow everything (a dead NAT
 * mapping: the socket stays open and carries nothing), and times, from that moment:
 *
 *   degraded  the session's `health` event says `degraded` (target: within 1 s of the acks stopping)
 *   replaced  `session.ready` on the new socket, the rest resent (target: p99 within 3 s)
 *
 * then checks that nothing was lost (the server received every captured sample). A second series
 * stalls the path for 800 ms instead and counts reconnects (target: none for a stall under 1 s).
 *
 * Two series on a slow link (the proxy's uplink throttled to 190 kbit/s, below the audio's 256 kbit/s,
 * so the in-flight window queues on it), against a server in this process so its acks can be withheld:
 * after 4 s the acks stop for 3 s while the link keeps carrying audio (alive: the probe's pong comes back
 * behind the backlog; target: no reconnect), and after 3 s the link goes half-open (still replaced: the
 * time shows what waiting for the backlog costs). `--backlog-wait MS` sets the session's
 * `ackWatch.maxBacklogWaitMs` (0: the deadline ignores the backlog, as before the wait existed).
 * `--runs N` (default 30; the slow series a third of it), `--write` puts the table in
 * bench/results/half-open.md.
 */
const RESULTS = fileURLToPath(new URL('../../../results/', import.meta.url));
const RATE = 16_000;
/** Bytes per second of the slow uplink: ~190 kbit/s, a mobile uplink. */
const SLOW_UPLINK = 24_000;

interface Run {
  readonly degradedMs: number;
  readonly replacedMs: number;
  readonly reconnects: number;
  readonly complete: boolean;
}

async function streamRealTime(session: RealtimeSocketSession, pcm: Int16Array, from: number, to: number): Promise<void> {
  const started = Date.now();
  for (let at = from, i = 0; at < to; at += 320, i++) {
    session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
    const due = started + (i + 1) * 20 - Date.now();
    if (due > 0) await sleep(due);
  }
}

interface Fault {
  readonly atSecond: number;
  /** Seconds of speech streamed. */
  readonly seconds: number;
  readonly throttle?: number;
  readonly apply: (proxy: ChaosProxy, sessionId: string) => void;
}

async function once(client: SoundClone, server: URL, fault: Fault, seed: number, backlogWaitMs: number | undefined): Promise<Run> {
  const proxy = await new ChaosProxy(Number(server.port), server.hostname).listen();
  try {
    if (fault.throttle !== undefined) proxy.throttle(fault.throttle, 'up');
    const session = await client.stt.realtime.connect({
      socketUrl: `ws://127.0.0.1:${String(proxy.port)}${SOCKET_PATH}`,
      ...(backlogWaitMs === undefined ? {} : { ackWatch: { maxBacklogWaitMs: backlogWaitMs } }),
    });
    const pcm = speech(fault.seconds, seed);
    let faultAt = 0;
    let degradedMs = Number.NaN;
    let replacedMs = Number.NaN;
    let reconnects = 0;
    session.on('health', (h) => {
      if (h.state === 'degraded' && Number.isNaN(degradedMs)) degradedMs = Date.now() - faultAt;
    });
    session.on('reconnecting', () => void (reconnects += 1));
    session.on('reconnected', () => {
      if (Number.isNaN(replacedMs)) replacedMs = Date.now() - faultAt;
    });
    await streamRealTime(session, pcm, 0, RATE * fault.atSecond);
    faultAt = Date.now();
    fault.apply(proxy, session.sessionId);
    await streamRealTime(session, pcm, RATE * fault.atSecond, pcm.length);
    const result = await session.finish({ timeoutMs: 60_000 });
    const complete = result.session.status === 'COMPLETED' && result.session.usage.receivedSamples === BigInt(pcm.length);
    return { degradedMs, replacedMs, reconnects, complete };
  } finally {
    await proxy.close();
  }
}

function figures(values: readonly number[]): string {
  const sorted = values.filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
  if (sorted.length === 0) return 'n/a | n/a | n/a | n/a';
  return [sorted[0], percentile(sorted, 50), percentile(sorted, 99), sorted[sorted.length - 1]].map((v) => `${Math.round(v ?? Number.NaN)} ms`).join(' | ');
}

const USAGE = `usage: node bench/dist/lab/half-open/run.js [--runs N] [--backlog-wait MS] [--write]
  --runs N           runs of each loopback series (default 30); the slow-link series a third as many
  --backlog-wait MS  the session's ackWatch.maxBacklogWaitMs (0: the probe's deadline ignores the backlog)
  --write            put the table in bench/results/half-open.md`;

interface Options {
  readonly runs: number;
  readonly backlogWaitMs: number | undefined;
  readonly write: boolean;
}

function parse(argv: readonly string[]): Options {
  let runs = 30;
  let backlogWaitMs: number | undefined;
  let write = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = (): string => argv[++i] ?? usage(`${String(arg)} needs a value`);
    // pnpm passes a `--` before the script's own flags through.
    if (arg === '--') continue;
    if (arg === '--runs') {
      runs = Number(value());
      if (!Number.isInteger(runs) || runs < 1) usage('--runs takes a positive integer');
    } else if (arg === '--backlog-wait') {
      backlogWaitMs = Number(value());
      if (!(Number.isFinite(backlogWaitMs) && backlogWaitMs >= 0)) usage('--backlog-wait takes ms, 0 or more');
    } else if (arg === '--write') write = true;
    else if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
    } else usage(`unknown argument '${String(arg)}'`);
  }
  return { runs, backlogWaitMs, write };
}

function usage(problem: string): never {
  process.stderr.write(`${problem}\n${USAGE}\n`);
  process.exit(2);
}

async function main(): Promise<void> {
  const { runs, backlogWaitMs, write } = parse(process.argv.slice(2));
  const slowRuns = Math.max(1, Math.ceil(runs / 3));
  // The CLI's default recognizer, auto: PocketSphinx when installed.
  const server = await hostServer({ in: 'child', recognizer: 'auto' });
  // The slow series need the server's fault switches (withheld acks): a server in this process.
  let local: ServerHere | undefined;
  try {
    local = await hostServer({ in: 'this-process', recognizer: 'deterministic' });
    const localServer = local.server;
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const localClient = new SoundClone({ accessKey: BENCH_KEY, baseUrl: localServer.url });
    const target = new URL(server.url);
    const localTarget = new URL(localServer.url);
    const halfOpen: Run[] = [];
    const shortStall: Run[] = [];
    const slowAlive: Run[] = [];
    const slowHalfOpen: Run[] = [];
    const total = 2 * runs + 2 * slowRuns;
    const progress = (): void => void process.stderr.write(`\r${String(halfOpen.length + shortStall.length + slowAlive.length + slowHalfOpen.length)}/${String(total)} runs`);
    for (let i = 0; i < runs; i++) {
      halfOpen.push(await once(client, target, { atSecond: 1, seconds: 3, apply: (p) => p.halfOpen() }, 10 + i, backlogWaitMs));
      shortStall.push(await once(client, target, { atSecond: 1, seconds: 3, apply: (p) => p.stall(800) }, 500 + i, backlogWaitMs));
      progress();
    }
    const withholdAcks = (_proxy: ChaosProxy, sessionId: string): void => {
      const rule = localServer.faults.socket.inject({ kind: 'withholdAcks', sessionId });
      setTimeout(() => rule.remove(), 3000);
    };
    for (let i = 0; i < slowRuns; i++) {
      slowAlive.push(await once(localClient, localTarget, { atSecond: 4, seconds: 7, throttle: SLOW_UPLINK, apply: withholdAcks }, 900 + i, backlogWaitMs));
      slowHalfOpen.push(await once(localClient, localTarget, { atSecond: 3, seconds: 6, throttle: SLOW_UPLINK, apply: (p) => p.halfOpen() }, 950 + i, backlogWaitMs));
      progress();
    }
    process.stderr.write('\n');
    const count = (series: readonly Run[]): string => `${String(series.reduce((n, r) => n + r.reconnects, 0))} in ${String(series.length)} runs`;
    const complete = (series: readonly Run[]): string => `${String(series.filter((r) => r.complete).length)}/${String(series.length)}`;
    const lines = [
      `# Half-open detection while streaming (loopback, ${String(runs)} runs, ${cpus()[0]?.model ?? 'unknown cpu'}, ${String(cpus().length)} cores, Node ${process.version}${backlogWaitMs === undefined ? '' : `, ackWatch.maxBacklogWaitMs ${String(backlogWaitMs)}`})`,
      '',
      '| from the fault to | min | median | p99 | max | target |',
      '|---|---|---|---|---|---|',
      `| health degraded (half-open) | ${figures(halfOpen.map((r) => r.degradedMs))} | 1 s |`,
      `| replaced: session.ready on the new socket | ${figures(halfOpen.map((r) => r.replacedMs))} | p99 3 s |`,
      `| slow link (190 kbit/s up), half-open: replaced | ${figures(slowHalfOpen.map((r) => r.replacedMs))} | (the backlog's wait) |`,
      '',
      `Half-open runs with every sample received (COMPLETED): ${complete(halfOpen)}; reconnects per run: ${[...new Set(halfOpen.map((r) => r.reconnects))].join(', ')}.`,
      `800 ms stalls: reconnects ${count(shortStall)} (target 0); every sample received: ${complete(shortStall)}.`,
      `Slow link, acks withheld 3 s with the window queued (alive): reconnects ${count(slowAlive)} (target 0); every sample received: ${complete(slowAlive)}.`,
      `Slow link, half-open: reconnects ${count(slowHalfOpen)} (target 1 per run); every sample received: ${complete(slowHalfOpen)}.`,
    ];
    const text = lines.join('\n');
    process.stdout.write(`${text}\n`);
    if (write) {
      await mkdir(RESULTS, { recursive: true });
      await writeFile(`${RESULTS}half-open.md`, `${text}\n`);
    }
  } finally {
    await local?.close();
    await server.close();
  }
}

main().catch((caught: unknown) => {
  process.stderr.write(`${caught instanceof Error ? (caught.stack ?? caught.message) : String(caught)}\n`);
  process.exitCode = 1;
});
