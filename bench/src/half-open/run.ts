import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { BENCH_KEY, ServerProcess } from '../realtime/server-process.js';
import { percentile, sleep, speech } from '../realtime/speech.js';
import { ChaosProxy } from '@soundclone/server';

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
 * `--runs N` (default 30), `--write` puts the table in bench/results/half-open.md.
 */
const RESULTS = fileURLToPath(new URL('../../results/', import.meta.url));
const RATE = 16_000;

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

async function once(client: SoundClone, server: URL, fault: (proxy: ChaosProxy) => void, seed: number): Promise<Run> {
  const proxy = await new ChaosProxy(Number(server.port), server.hostname).listen();
  try {
    const session = await client.stt.realtime.connect({ socketUrl: `ws://127.0.0.1:${String(proxy.port)}/sound_clone/api/v1/stt/realtime/socket` });
    const pcm = speech(3, seed);
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
    await streamRealTime(session, pcm, 0, RATE);
    faultAt = Date.now();
    fault(proxy);
    await streamRealTime(session, pcm, RATE, pcm.length);
    const result = await session.finish();
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

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 30;
  if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs takes a positive integer');
  const server = await ServerProcess.start();
  try {
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const target = new URL(server.url);
    const halfOpen: Run[] = [];
    const shortStall: Run[] = [];
    for (let i = 0; i < runs; i++) {
      halfOpen.push(await once(client, target, (p) => p.halfOpen(), 10 + i));
      shortStall.push(await once(client, target, (p) => p.stall(800), 500 + i));
      process.stderr.write(`\r${String(i + 1)}/${String(runs)} runs`);
    }
    process.stderr.write('\n');
    const lines = [
      `# Half-open detection while streaming (loopback, ${String(runs)} runs, ${cpus()[0]?.model ?? 'unknown cpu'}, ${String(cpus().length)} cores, Node ${process.version})`,
      '',
      '| from the fault to | min | median | p99 | max | target |',
      '|---|---|---|---|---|---|',
      `| health degraded (half-open) | ${figures(halfOpen.map((r) => r.degradedMs))} | 1 s |`,
      `| replaced: session.ready on the new socket | ${figures(halfOpen.map((r) => r.replacedMs))} | p99 3 s |`,
      '',
      `Half-open runs with every sample received (COMPLETED): ${String(halfOpen.filter((r) => r.complete).length)}/${String(runs)}; reconnects per run: ${[...new Set(halfOpen.map((r) => r.reconnects))].join(', ')}.`,
      `800 ms stalls: reconnects ${String(shortStall.reduce((n, r) => n + r.reconnects, 0))} in ${String(runs)} runs (target 0); every sample received: ${String(shortStall.filter((r) => r.complete).length)}/${String(runs)}.`,
    ];
    const text = lines.join('\n');
    process.stdout.write(`${text}\n`);
    if (args.includes('--write')) {
      await mkdir(RESULTS, { recursive: true });
      await writeFile(`${RESULTS}half-open.md`, `${text}\n`);
    }
  } finally {
    await server.close();
  }
}

main().catch((caught: unknown) => {
  process.stderr.write(`${caught instanceof Error ? (caught.stack ?? caught.message) : String(caught)}\n`);
  process.exitCode = 1;
});
