import { cpus } from 'node:os';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { progress } from '../collect/progress.js';
import { BENCH_KEY, hostServer, type ServerChild } from './server/host.js';
import { percentile, sleep } from './speech.js';
import { joined, librivoxIds, testRecording } from './testdata.js';

/**
 * The `recognizer` section, `node --expose-gc bench/dist/run.js --only recognizer` alone: the reference server's PocketSphinx
 * recognizer on real recorded speech (pocketsphinx-testdata: the LibriVox clips and the card
 * commands, ~35 s), through the real socket, the server in its own process so its CPU time is its own.
 *
 *   real-time factor   server CPU per second of audio, one session streamed as fast as it is taken;
 *                      minus the same with the deterministic recognizer = the recognizer's own share
 *   sessions per core  N sessions each streaming speech at 1x real time: the server's cores in use,
 *                      and the acknowledgement lag (audio sent but not yet decoded); a level is
 *                      sustained when the lag's p99 stays under 1 s
 */
const RATE = 16_000;
const SUSTAINED_LAG_MS = 1000;
const MAX_PACED = 16;

export interface RecognizerBenchRow {
  readonly recognizer: string;
  readonly audioS: number;
  readonly serverCpuS: number;
  readonly rtf: number;
  readonly wallRtf: number;
}

export interface RecognizerPacedRow {
  readonly sessions: number;
  readonly seconds: number;
  readonly serverCores: number;
  readonly lagP50Ms: number;
  readonly lagP99Ms: number;
  readonly sustained: boolean;
}

/** The reference server in its own process (its CPU time is its own), and a client of it. */
interface Server {
  readonly proc: ServerChild;
  readonly client: SoundClone;
}

async function hostFor(recognizer: 'deterministic' | 'pocketsphinx'): Promise<Server> {
  // The paced levels step up to MAX_PACED sessions: past the default cap of 4 decoders they would get 503.
  const proc = await hostServer({ in: 'child', recognizer, decoders: MAX_PACED });
  return { proc, client: new SoundClone({ accessKey: BENCH_KEY, baseUrl: proc.url }) };
}

export async function runRecognizerBench(options: { quick: boolean }): Promise<{ rows: RecognizerBenchRow[]; paced: RecognizerPacedRow[] }> {
  const speech = corpus();
  const rows: RecognizerBenchRow[] = [];
  for (const recognizer of ['deterministic', 'pocketsphinx'] as const) {
    const server = await hostFor(recognizer);
    try {
      rows.push(await realTimeFactor(server, recognizer, speech));
      progress(`recognizer ${recognizer}: RTF ${rows[rows.length - 1]!.rtf.toFixed(3)}`);
    } finally {
      await server.proc.close();
    }
  }
  const paced: RecognizerPacedRow[] = [];
  const server = await hostFor('pocketsphinx');
  try {
    const seconds = options.quick ? 8 : 20;
    const decoding = rows[1]!.rtf;
    // Start near the estimate and step up until the lag says the server fell behind.
    for (let sessions = Math.max(1, Math.floor(0.6 / decoding)); sessions <= MAX_PACED; sessions++) {
      const row = await pacedLevel(server, speech, sessions, seconds);
      paced.push(row);
      progress(`recognizer pocketsphinx: ${sessions} paced sessions: ${row.serverCores.toFixed(2)} cores, lag p99 ${row.lagP99Ms.toFixed(0)} ms`);
      if (!row.sustained || row.serverCores > 1.05) break;
    }
  } finally {
    await server.proc.close();
  }
  return { rows, paced };
}

/** The test recordings joined: the LibriVox clips, then five card commands. */
function corpus(): Int16Array {
  const names = [...librivoxIds().map((id) => `librivox/${id}`), ...['001', '002', '003', '004', '005'].map((id) => `cards/${id}`)];
  return joined(names.map(testRecording));
}

async function realTimeFactor(server: Server, recognizer: string, speech: Int16Array): Promise<RecognizerBenchRow> {
  const session = await server.client.stt.realtime.connect({ maxInFlightSamples: RATE * 4 });
  const cpuBefore = server.proc.cpuMs();
  const started = performance.now();
  for (let at = 0; at < speech.length; at += 320) {
    session.writePcm16(speech.subarray(at, at + 320));
    if (at % (RATE / 2) === 0) await sleep(0);
  }
  await session.finish({ timeoutMs: 300_000 });
  const wallS = (performance.now() - started) / 1000;
  const serverCpuS = (server.proc.cpuMs() - cpuBefore) / 1000;
  const audioS = speech.length / RATE;
  return { recognizer, audioS, serverCpuS, rtf: serverCpuS / audioS, wallRtf: wallS / audioS };
}

async function pacedLevel(server: Server, speech: Int16Array, sessions: number, seconds: number): Promise<RecognizerPacedRow> {
  const length = Math.min(speech.length, seconds * RATE);
  const open: RealtimeSocketSession[] = [];
  for (let i = 0; i < sessions; i++) open.push(await server.client.stt.realtime.connect({}));
  const lags: number[] = [];
  const cpuBefore = server.proc.cpuMs();
  const started = performance.now();
  const sampler = setInterval(() => {
    for (const s of open) lags.push((s.stats.unackedSamples * 1000) / RATE);
  }, 100);
  let next = 0;
  try {
    // Each session starts at a different place in the recordings so decoders are not in lockstep.
    while (next < length) {
      const due = Math.min(length, Math.floor((((performance.now() - started) / 1000) * RATE) / 320) * 320);
      if (due > next) {
        open.forEach((s, i) => {
          const offset = (i * 7919 * 320) % (speech.length - length + 1);
          s.writePcm16(speech.subarray(offset + next, offset + due));
        });
        next = due;
      }
      await sleep(5);
    }
  } finally {
    clearInterval(sampler);
  }
  const wallMs = performance.now() - started;
  const serverCores = (server.proc.cpuMs() - cpuBefore) / wallMs;
  await Promise.all(open.map((s) => s.finish({ timeoutMs: 120_000 })));
  lags.sort((a, b) => a - b);
  const lagP99Ms = percentile(lags, 99);
  return { sessions, seconds, serverCores, lagP50Ms: percentile(lags, 50), lagP99Ms, sustained: lagP99Ms < SUSTAINED_LAG_MS };
}

export function recognizerText({ rows, paced }: { rows: readonly RecognizerBenchRow[]; paced: readonly RecognizerPacedRow[] }): string {
  const deterministic = rows.find((r) => r.recognizer === 'deterministic');
  const ps = rows.find((r) => r.recognizer === 'pocketsphinx');
  const lines = [
    `Recognizer benchmark · Node ${process.version} · ${cpus()[0]?.model ?? 'unknown'} × ${cpus().length} · speech: pocketsphinx-testdata, ${rows[0]?.audioS.toFixed(1)} s`,
    '',
    '| recognizer | audio s | server CPU s | RTF (CPU) | RTF (wall) |',
    '|---|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.recognizer} | ${r.audioS.toFixed(1)} | ${r.serverCpuS.toFixed(2)} | ${r.rtf.toFixed(3)} | ${r.wallRtf.toFixed(3)} |`),
  ];
  if (deterministic !== undefined && ps !== undefined) {
    const own = ps.rtf - deterministic.rtf;
    lines.push('', `PocketSphinx's own real-time factor: ${own.toFixed(3)} (server CPU minus the deterministic run's); estimate ${(1 / ps.rtf).toFixed(1)} sessions per core.`);
  }
  lines.push('', '| paced sessions at 1x | seconds | server cores | sessions per core | ack lag p50 ms | p99 ms | sustained |', '|---:|---:|---:|---:|---:|---:|---|');
  for (const p of paced) lines.push(`| ${p.sessions} | ${p.seconds} | ${p.serverCores.toFixed(2)} | ${(p.sessions / p.serverCores).toFixed(1)} | ${p.lagP50Ms.toFixed(0)} | ${p.lagP99Ms.toFixed(0)} | ${p.sustained ? 'yes' : 'no'} |`);
  const best = [...paced].reverse().find((p) => p.sustained && p.serverCores <= 1.05);
  lines.push('', best !== undefined
    ? `One core sustains ${best.sessions} concurrent realtime sessions of continuous speech with PocketSphinx (lag p99 under ${SUSTAINED_LAG_MS} ms).`
    : 'No paced level was sustained (the machine may be loaded).');
  return lines.join('\n');
}
