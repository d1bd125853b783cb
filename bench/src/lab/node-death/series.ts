import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { LocalCluster, LocalPostgres, LocalRedis } from '@soundclone/server';
import { progress } from '../../collect/progress.js';
import { API_PREFIX, BENCH_KEY, hostServer } from '../server/host.js';
import { streamLevel } from '../realtime/capacity.js';
import { percentile, sleep, speech } from '../speech.js';

const RATE = 16_000;

/** One kill of a session's owner. */
export interface KillRow {
  readonly seed: number;
  /** Where in the audio the owner was killed (fraction of it). */
  readonly at: number;
  /** From the kill to the first audio acknowledged by the new owner (ms). */
  readonly stallMs: number;
  readonly lost: number;
  readonly duplicated: number;
  /** Samples stored but different from the input (over the shorter of the two). */
  readonly wrong: number;
  readonly linesEqual: boolean;
  /** Settlements of the task (1: charged once; a second finish charged nothing). */
  readonly charges: number;
}

export interface RollingResult {
  readonly sessions: number;
  readonly nodes: number;
  readonly seconds: number;
  readonly errors: number;
  readonly gaps: number;
  readonly lost: number;
  readonly duplicated: number;
  readonly finishedOnce: number;
  readonly chargedOnce: number;
  /** Reconnects the applications saw, by cause. */
  readonly causes: Readonly<Record<string, number>>;
}

export interface CapacityResult {
  /** The recognizer the node ran: PocketSphinx is what a node runs by default (`--recognizer auto`). */
  readonly recognizer: 'pocketsphinx' | 'deterministic';
  readonly sessions: number;
  readonly audioSeconds: number;
  /** Runs per setting, alternated off, on, off, on, ...; the figures are each setting's median. */
  readonly runs: number;
  readonly offMsPerAudioS: number;
  readonly onMsPerAudioS: number;
  readonly offPerCore: number;
  readonly onPerCore: number;
}

export interface NodeDeathReport {
  readonly kills: readonly KillRow[];
  readonly rolling: RollingResult | undefined;
  /** Per recognizer; PocketSphinx is left out (with a note) where it is not installed. */
  readonly capacity: readonly CapacityResult[];
  readonly capacityNote?: string;
}

/** A small seeded generator (the kill points). */
function seeded(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s ^ (s >>> 15), 2246822519) + 0x9e3779b9) >>> 0;
    return (s >>> 8) / 0x1000000;
  };
}

/** Writes 20 ms blocks, never more than 10 s buffered. */
async function write(session: RealtimeSocketSession, pcm: Int16Array, from: number, to: number): Promise<void> {
  for (let at = from, n = 0; at < to; at += 320, n++) {
    while (session.stats.bufferedSamples > RATE * 10) await sleep(5);
    session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
    if (n % 25 === 24) await sleep(1);
  }
}

async function storedAudio(url: string, sessionId: string): Promise<Int16Array> {
  const r = await fetch(`${url}${API_PREFIX}/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: BENCH_KEY } });
  if (r.status !== 200) throw new Error(`stored audio: HTTP ${r.status}`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
}

function compare(stored: Int16Array, pcm: Int16Array): { lost: number; duplicated: number; wrong: number } {
  let wrong = 0;
  for (let i = 0; i < Math.min(stored.length, pcm.length); i++) if (stored[i] !== pcm[i]) wrong += 1;
  return { lost: Math.max(0, pcm.length - stored.length), duplicated: Math.max(0, stored.length - pcm.length), wrong };
}

async function settles(client: SoundClone, transcriptionId: string, expected: string, sessionId: string, samples: number): Promise<number> {
  const first = String((await client.stt.transcriptions.get(transcriptionId)).billing.settledCharacters);
  await client.stt.realtime.finish(sessionId, String(samples));
  const second = String((await client.stt.transcriptions.get(transcriptionId)).billing.settledCharacters);
  return first === expected && second === expected ? 1 : first === '0' ? 0 : 2;
}

/**
 * `kills` seeds: per seed, an uninterrupted session on the seed's audio (its lines), then the same
 * audio with the owner killed (kill -9) at a seeded point between 20 % and 80 % of it; the writer goes on
 * at once, and the stall is from the kill to the first audio.ack after the SDK reconnected. The killed
 * node is started again before the next seed.
 */
export async function killSeries(cluster: LocalCluster, kills: number): Promise<KillRow[]> {
  const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: cluster.url });
  const rows: KillRow[] = [];
  for (let seed = 1; seed <= kills; seed++) {
    const pcm = speech(8, seed);
    const plain = await client.stt.realtime.connect({});
    await write(plain, pcm, 0, pcm.length);
    const whole = (await plain.finish({ timeoutMs: 60_000 })).session.lines;

    const random = seeded(seed * 7919);
    const at = Math.floor((pcm.length * (0.2 + 0.6 * random())) / 320) * 320;
    const session = await client.stt.realtime.connect({});
    let reconnected = false;
    let movedAckAt: number | undefined;
    session.on('reconnected', () => {
      reconnected = true;
    });
    session.on('message', (m: { type: string }) => {
      if (m.type === 'audio.ack' && reconnected && movedAckAt === undefined) movedAckAt = performance.now();
    });
    await write(session, pcm, 0, at);
    while (session.stats.ackedSamples < at - 3200) await sleep(2);
    const owner = await cluster.sessionOwner(session.sessionId);
    if (owner === undefined) throw new Error(`node death: no owner for ${session.sessionId}`);
    const killedAt = performance.now();
    await cluster.killNode(owner);
    await write(session, pcm, at, pcm.length);
    while (movedAckAt === undefined) await sleep(2);
    const stallMs = movedAckAt - killedAt;
    const result = await session.finish({ timeoutMs: 60_000 });
    await cluster.restartNode(owner);
    const { lost, duplicated, wrong } = compare(await storedAudio(cluster.url, session.sessionId), pcm);
    const expected = String(Math.ceil(pcm.length / RATE) * 10);
    const charges = await settles(client, result.session.transcriptionId, expected, session.sessionId, pcm.length);
    const linesEqual = JSON.stringify(result.session.lines) === JSON.stringify(whole);
    rows.push({ seed, at: at / pcm.length, stallMs, lost, duplicated, wrong, linesEqual, charges });
    progress(`node death seed ${seed}: killed at ${Math.round((100 * at) / pcm.length)} %, stall ${Math.round(stallMs)} ms, lost ${lost}, duplicated ${duplicated}, wrong ${wrong}, lines ${linesEqual ? 'equal' : 'DIFFERENT'}, charges ${charges}`);
  }
  return rows;
}

/**
 * `sessions` sessions stream through the balancer (20 ms blocks at twice real time) while every node in
 * turn gets SIGTERM (a drain) and is started again before the next; each writes on for a second after the
 * last restart, then finishes.
 */
export async function rollingRestart(cluster: LocalCluster, sessions: number): Promise<RollingResult> {
  const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: cluster.url });
  const started = performance.now();
  let restarting = true;
  const causes: Record<string, number> = {};
  let errors = 0;
  let gaps = 0;
  const runs = await Promise.all(
    Array.from({ length: sessions }, async (_, i) => {
      const session = await client.stt.realtime.connect({});
      session.on('reconnecting', (info) => info.error !== undefined && (errors += 1));
      session.on('recovery.expired', () => (errors += 1));
      session.on('state', (change) => change.to === 'failed' && (errors += 1));
      session.on('gap', () => (gaps += 1));
      session.on('health', (h) => {
        if (h.kind === 'reconnected') {
          const cause = h.lastReconnect?.cause ?? 'unknown';
          causes[cause] = (causes[cause] ?? 0) + 1;
        }
      });
      return { session, pcm: speech(60, 100 + i), written: 0 };
    }),
  );
  const writers = runs.map(async (run) => {
    let until = Number.POSITIVE_INFINITY;
    for (let at = 0; at < run.pcm.length && at < until; at += 320) {
      if (!restarting && until === Number.POSITIVE_INFINITY) until = at + RATE;
      if (run.session.writePcm16(run.pcm.subarray(at, at + 320)) === 0) errors += 1;
      run.written = at + 320;
      await sleep(10);
    }
  });
  await sleep(1000);
  for (let index = 0; index < cluster.nodes.length; index++) {
    await cluster.stopNode(index);
    await cluster.restartNode(index);
    await sleep(1000);
  }
  restarting = false;
  await Promise.all(writers);
  let lost = 0;
  let duplicated = 0;
  let finishedOnce = 0;
  let chargedOnce = 0;
  for (const run of runs) {
    const input = run.pcm.subarray(0, run.written);
    let result;
    try {
      result = await run.session.finish({ timeoutMs: 60_000 });
    } catch {
      errors += 1;
      continue;
    }
    if (result.session.status === 'COMPLETED') finishedOnce += 1;
    const c = compare(await storedAudio(cluster.url, run.session.sessionId), input);
    lost += c.lost + c.wrong;
    duplicated += c.duplicated;
    if ((await settles(client, result.session.transcriptionId, String(Math.ceil(input.length / RATE) * 10), run.session.sessionId, input.length)) === 1) chargedOnce += 1;
  }
  const result = { sessions, nodes: cluster.nodes.length, seconds: (performance.now() - started) / 1000, errors, gaps, lost, duplicated, finishedOnce, chargedOnce, causes };
  progress(`rolling restart: ${JSON.stringify(result)}`);
  return result;
}

/**
 * Realtime sessions per node core with the live state in Redis and without (both on PostgreSQL): the
 * node runs in a child process and its CPU per second of audio is read from /proc (store-capacity.ts's
 * method); Redis's own CPU is not counted (it runs beside the node as PostgreSQL does). The two settings
 * alternate, `runs` times each, and each setting's median counts: the machine's other load falls on both.
 */
export async function capacity(options: { readonly recognizer: 'pocketsphinx' | 'deterministic'; readonly sessions: number; readonly seconds: number; readonly runs: number }): Promise<CapacityResult> {
  const pg = await LocalPostgres.start({ fast: false });
  const redis = await LocalRedis.start();
  try {
    const perAudioS: [number[], number[]] = [[], []];
    for (let run = 0; run < options.runs; run++) {
      for (const [setting, flags] of [['--database-url', pg.url()], ['--database-url', pg.url(), '--redis-url', redis.url]].entries()) {
        const server = await hostServer({
          in: 'child',
          recognizer: options.recognizer,
          ...(options.recognizer === 'pocketsphinx' ? { decoders: options.sessions } : {}),
          flags: [...flags, '--max-sessions-per-account', '100'],
        });
        try {
          const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
          await streamLevel(client, server, options.recognizer, 1, 2);
          perAudioS[setting]?.push((await streamLevel(client, server, options.recognizer, options.sessions, options.seconds)).serverCpuMsPerAudioS);
        } finally {
          await server.close();
        }
      }
    }
    const off = median(perAudioS[0]);
    const on = median(perAudioS[1]);
    const result = { recognizer: options.recognizer, sessions: options.sessions, audioSeconds: options.sessions * options.seconds, runs: options.runs, offMsPerAudioS: off, onMsPerAudioS: on, offPerCore: 1000 / off, onPerCore: 1000 / on };
    progress(`sessions per core (${options.recognizer}): Redis off ${result.offPerCore.toFixed(1)}, on ${result.onPerCore.toFixed(1)}`);
    return result;
  } finally {
    await redis.stop();
    await pg.stop();
  }
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Both recognizers' capacity; PocketSphinx is skipped, with the reason, where it cannot run. */
async function capacities(quick: boolean): Promise<{ readonly rows: readonly CapacityResult[]; readonly note?: string }> {
  const rows: CapacityResult[] = [];
  let note: string | undefined;
  try {
    rows.push(await capacity(quick ? { recognizer: 'pocketsphinx', sessions: 2, seconds: 5, runs: 1 } : { recognizer: 'pocketsphinx', sessions: 4, seconds: 15, runs: 2 }));
  } catch (error) {
    note = `PocketSphinx not measured: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`;
    progress(note);
  }
  rows.push(await capacity(quick ? { recognizer: 'deterministic', sessions: 2, seconds: 5, runs: 1 } : { recognizer: 'deterministic', sessions: 10, seconds: 15, runs: 3 }));
  return { rows, ...(note !== undefined ? { note } : {}) };
}

export async function runNodeDeath(options: { readonly kills: number; readonly rollingSessions: number; readonly quick: boolean }): Promise<NodeDeathReport> {
  const cluster = await LocalCluster.start({
    nodes: 3,
    accessKeys: [BENCH_KEY],
    redis: true,
    nodeArgs: ['--recognizer', 'deterministic', '--retain-audio', '120', '--max-sessions-per-account', '100'],
  });
  let kills: KillRow[];
  let rolling: RollingResult | undefined;
  try {
    kills = await killSeries(cluster, options.kills);
    rolling = await rollingRestart(cluster, options.rollingSessions);
  } finally {
    await cluster.stop();
  }
  const cap = await capacities(options.quick);
  return { kills, rolling, capacity: cap.rows, ...(cap.note !== undefined ? { capacityNote: cap.note } : {}) };
}

export function nodeDeathText(report: NodeDeathReport): string {
  const k = report.kills;
  const stalls = k.map((r) => r.stallMs).sort((a, b) => a - b);
  const sum = (f: (r: KillRow) => number): number => k.reduce((n, r) => n + f(r), 0);
  const lines = [
    '## Node death: kill -9 of a session\'s owner (3 nodes, PostgreSQL, Redis, haproxy; deterministic recognizer; SDK default reconnect policy)',
    '',
    '| kills | stall p50 ms | stall p99 ms | stall max ms | samples lost | samples duplicated | samples wrong | lines equal to the uninterrupted run | charged once |',
    '|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    `| ${k.length} | ${Math.round(percentile(stalls, 50))} | ${Math.round(percentile(stalls, 99))} | ${Math.round(stalls.at(-1) ?? Number.NaN)} | ${sum((r) => r.lost)} | ${sum((r) => r.duplicated)} | ${sum((r) => r.wrong)} | ${k.filter((r) => r.linesEqual).length} / ${k.length} | ${k.filter((r) => r.charges === 1).length} / ${k.length} |`,
    '',
    'Stall: from the kill to the first `audio.ack` the new owner sent after the SDK reconnected (the balancer\'s',
    'check, the reconnect delay, the takeover). Per seed (kill point as a fraction of the 8 s of audio; stall ms):',
    k.map((r) => `${r.seed}: ${r.at.toFixed(2)} ${Math.round(r.stallMs)}`).join(' · '),
    '',
  ];
  const r = report.rolling;
  if (r !== undefined) {
    lines.push(
      '## Rolling SIGTERM restart under load',
      '',
      '| sessions | nodes restarted in turn | wall s | application errors | gaps | samples lost | samples duplicated | finished COMPLETED | charged once | reconnects by cause |',
      '|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
      `| ${r.sessions} | ${r.nodes} | ${r.seconds.toFixed(1)} | ${r.errors} | ${r.gaps} | ${r.lost} | ${r.duplicated} | ${r.finishedOnce} / ${r.sessions} | ${r.chargedOnce} / ${r.sessions} | ${Object.entries(r.causes).map(([c, n]) => `${c}: ${n}`).join(', ')} |`,
      '',
      '`recycled`: the drain handed the session over and recycled its socket, or the owner recycled a socket that',
      'came through the draining node (no delay, outside the reconnect budget). `socket closed 1006`: such a',
      'socket the owner did not recycle in time, cut by the drain; reconnected under the policy, nothing lost.',
      '',
    );
  }
  if (report.capacity.length > 0 || report.capacityNote !== undefined) {
    lines.push(
      '## Sessions per node core: live state in Redis on vs off (PostgreSQL both; one node process)',
      '',
      '| recognizer | live state | sessions × audio s | runs (median) | node CPU ms / audio s | sessions per node core | on / off |',
      '|---|---|---|---:|---:|---:|---:|',
    );
    for (const c of report.capacity) {
      const ratio = (100 * c.onPerCore) / c.offPerCore;
      const name = c.recognizer === 'pocketsphinx' ? 'PocketSphinx (the default)' : 'deterministic';
      lines.push(
        `| ${name} | off | ${c.sessions} × ${c.audioSeconds / c.sessions} | ${c.runs} | ${c.offMsPerAudioS.toFixed(2)} | ${c.offPerCore.toFixed(1)} | |`,
        `| ${name} | Redis | ${c.sessions} × ${c.audioSeconds / c.sessions} | ${c.runs} | ${c.onMsPerAudioS.toFixed(2)} | ${c.onPerCore.toFixed(1)} | ${ratio.toFixed(1)} % (target ≥ 90 %: ${ratio >= 90 ? 'PASS' : 'MISS'}) |`,
      );
    }
    lines.push(
      '',
      ...(report.capacityNote !== undefined ? [report.capacityNote, ''] : []),
      'A node runs PocketSphinx unless told otherwise (`--recognizer auto`), so its row is the capacity a deployment',
      'keeps with Redis. The deterministic recognizer does almost nothing per sample: its row shows what the live',
      'state costs on its own (node CPU ms per audio second, on minus off), against a node doing nothing else.',
      "Redis's own CPU is not counted.",
      '',
    );
  }
  return `${lines.join('\n')}\n`;
}

/** bench/results/node-death.md, headed by the command that made it; returns its path. */
export async function writeNodeDeathResult(text: string, command: string): Promise<string> {
  const path = fileURLToPath(new URL('../../../results/node-death.md', import.meta.url));
  await writeFile(path, `# ${command} (${new Date().toISOString().slice(0, 10)})\n\n${text}`);
  return path;
}
