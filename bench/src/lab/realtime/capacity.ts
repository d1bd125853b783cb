import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { progress } from '../../collect/progress.js';
import { BENCH_KEY, hostServer, recognizerChoice, type ServerChild } from '../server/host.js';
import { percentile, sleep, speech } from '../speech.js';

/** One concurrency level of the capacity bench. */
export interface CapacityRow {
  readonly recognizer: string;
  /** Sessions streaming at once. */
  readonly sessions: number;
  readonly audioSeconds: number;
  readonly wallSeconds: number;
  /** Server CPU (user + system) per second of audio received, ms. */
  readonly serverCpuMsPerAudioS: number;
  /** 1000 / serverCpuMsPerAudioS: sessions at 1× real time one fully used server core carries. */
  readonly sessionsPerCore: number;
  /** The bench process's CPU per second of audio (the SDK's encode, framing and socket work), ms. */
  readonly clientCpuMsPerAudioS: number;
}

/** At 1× real time: does the server keep up with N paced sessions? */
export interface PacedRow {
  readonly recognizer: string;
  readonly sessions: number;
  readonly seconds: number;
  /** Server CPU / wall time while the sessions stream: 1.0 is one core busy. */
  readonly serverCores: number;
  /** sessions / serverCores: sessions at 1× one core carries, measured at this load. */
  readonly sessionsPerCore: number;
  /** Server CPU per session for connect + finish alone (no audio), ms. */
  readonly sessionOverheadMs: number;
  /** Sent but not yet acknowledged, sampled every 100 ms over all sessions, ms of audio (ack interval 50 ms included). */
  readonly ackLagP50Ms: number;
  readonly ackLagP99Ms: number;
  /** Audio acknowledged when the wall clock said it was all due, % of it: below ~95 the clients, not the server, fell behind. */
  readonly deliveredPercent: number;
}

const RATE = 16_000;

/**
 * How many concurrent realtime sessions at 1× real time one server core sustains. The
 * reference server runs in a child process; sessions stream faster than real time (bounded by their
 * own backpressure) and the server's CPU time per second of audio gives sessions per core. CPU time
 * is what a busy core would spend; a loaded shared VM changes wall time, not this. A paced run then
 * streams a number of sessions at exactly 1× and shows whether acknowledgements keep up.
 */
export async function collectCapacity(options: { quick: boolean; recognizers: readonly string[] }): Promise<{ rows: CapacityRow[]; paced: PacedRow[] }> {
  const rows: CapacityRow[] = [];
  const paced: PacedRow[] = [];
  for (const recognizer of options.recognizers) {
    // PocketSphinx caps its decoders (default 4, ~90 MB each); the 40-session level needs 40.
    const server = await hostServer({ in: 'child', recognizer: recognizerChoice(recognizer), ...(recognizer === 'deterministic' ? {} : { decoders: 48 }) });
    try {
      const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
      const overhead = await sessionOverhead(client, server, options.quick ? 10 : 40);
      const levels = options.quick ? [[1, 10], [8, 5]] : [[1, 30], [10, 15], [40, 8]];
      for (const [sessions, seconds] of levels as Array<[number, number]>) {
        const row = await streamLevel(client, server, recognizer, sessions, seconds);
        progress(`realtime capacity (${recognizer}): ${sessions} × ${seconds} s: ${row.serverCpuMsPerAudioS.toFixed(2)} server CPU ms per audio s → ${Math.round(row.sessionsPerCore)} sessions per core`);
        rows.push(row);
      }
      // Ramp at exactly 1×, up to what the estimate says fits in about half a core (the bench's own
      // clients share the machine), at most 240 sockets: server cores busy and how far acks trail.
      const estimate = rows.at(-1)?.sessionsPerCore ?? 1;
      const top = Math.max(1, Math.min(240, Math.floor(estimate / 2)));
      for (const count of options.quick ? [top] : [Math.ceil(top / 6), Math.ceil(top / 2), top]) {
        const p = await pacedLevel(client, server, recognizer, count, options.quick ? 3 : 6, overhead);
        progress(`realtime capacity (${recognizer}): ${count} paced sessions: server ${p.serverCores.toFixed(2)} cores, unacked p99 ${p.ackLagP99Ms.toFixed(0)} ms`);
        paced.push(p);
      }
    } finally {
      await server.close();
    }
  }
  return { rows, paced };
}

async function sessionOverhead(client: SoundClone, server: ServerChild, count: number): Promise<number> {
  const before = server.cpuMs();
  for (let i = 0; i < count; i++) {
    const session = await client.stt.realtime.connect({});
    await session.finish();
  }
  return (server.cpuMs() - before) / count;
}

export async function streamLevel(client: SoundClone, server: ServerChild, recognizer: string, sessions: number, seconds: number): Promise<CapacityRow> {
  const pcm = Array.from({ length: sessions }, (_, i) => speech(seconds, i + 1));
  const open = await Promise.all(pcm.map(() => client.stt.realtime.connect({})));
  const serverBefore = server.cpuMs();
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  await Promise.all(open.map((session, i) => streamAll(session, pcm[i]!)));
  const wallSeconds = (performance.now() - started) / 1000;
  const clientCpu = process.cpuUsage(clientBefore);
  // Finish and connect cost is per session, not per audio second: measured apart (sessionOverhead).
  const serverCpu = server.cpuMs() - serverBefore;
  const results = await Promise.all(open.map((s) => s.finish()));
  for (const r of results) if (r.session.usage.receivedSamples !== BigInt(seconds * RATE)) throw new Error(`capacity: a session stored ${r.session.usage.receivedSamples} samples, expected ${seconds * RATE}`);
  const audioSeconds = sessions * seconds;
  const perAudioS = serverCpu / audioSeconds;
  return {
    recognizer,
    sessions,
    audioSeconds,
    wallSeconds,
    serverCpuMsPerAudioS: perAudioS,
    sessionsPerCore: 1000 / perAudioS,
    clientCpuMsPerAudioS: (clientCpu.user + clientCpu.system) / 1000 / audioSeconds,
  };
}

/** Writes 20 ms blocks as fast as the session's backpressure allows, then waits for every ack. */
async function streamAll(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  for (let at = 0, n = 0; at < pcm.length; at += 320, n++) {
    while (session.stats.bufferedSamples > RATE * 2) await sleep(1);
    session.writePcm16(pcm.subarray(at, at + 320));
    if (n % 25 === 24) await new Promise((resolve) => setImmediate(resolve));
  }
  while (session.stats.ackedSamples < pcm.length) await sleep(5);
}

async function pacedLevel(client: SoundClone, server: ServerChild, recognizer: string, sessions: number, seconds: number, overheadMs: number): Promise<PacedRow> {
  const pcm = speech(seconds, 99);
  const open: RealtimeSocketSession[] = [];
  for (let i = 0; i < sessions; i++) open.push(await client.stt.realtime.connect({}));
  const lags: number[] = [];
  const serverBefore = server.cpuMs();
  const started = performance.now();
  let next = 0;
  const sampler = setInterval(() => {
    for (const s of open) lags.push((s.stats.unackedSamples * 1000) / RATE);
  }, 100);
  try {
    // One timer drives every session: each 20 ms of wall time, each session writes the audio due by then.
    while (next < pcm.length) {
      const due = Math.min(pcm.length, Math.floor(((performance.now() - started) / 1000) * RATE / 320) * 320);
      if (due > next) {
        for (const s of open) s.writePcm16(pcm.subarray(next, due));
        next = due;
      }
      await sleep(5);
    }
  } finally {
    clearInterval(sampler);
  }
  const wallMs = performance.now() - started;
  const serverCpu = server.cpuMs() - serverBefore;
  const acked = open.reduce((n, s) => n + s.stats.ackedSamples, 0);
  await Promise.all(open.map((s) => s.finish()));
  lags.sort((a, b) => a - b);
  const serverCores = serverCpu / wallMs;
  return { recognizer, sessions, seconds, serverCores, sessionsPerCore: sessions / serverCores, sessionOverheadMs: overheadMs, ackLagP50Ms: percentile(lags, 50), ackLagP99Ms: percentile(lags, 99), deliveredPercent: (100 * acked) / (sessions * pcm.length) };
}
