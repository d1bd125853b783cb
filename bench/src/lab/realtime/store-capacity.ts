import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SoundClone } from '@soundclone/core';
import { LocalPostgres } from '@soundclone/server';
import { progress } from '../../collect/progress.js';
import { BENCH_KEY, clockTicks, hostServer, type ServerChild } from '../server/host.js';
import { streamLevel } from './capacity.js';

/** One store and recognizer at one concurrency level. */
export interface StoreCapacityRow {
  readonly store: 'memory' | 'postgres';
  readonly recognizer: 'deterministic' | 'pocketsphinx';
  readonly sessions: number;
  readonly audioSeconds: number;
  /** The node's CPU per second of audio received, ms. */
  readonly nodeCpuMsPerAudioS: number;
  /** PostgreSQL's CPU (postmaster and its backends) per second of audio, ms; 0 in memory. */
  readonly dbCpuMsPerAudioS: number;
  /** Sessions at 1× one fully used node core carries. */
  readonly sessionsPerCore: number;
  /** The same, counting the database's CPU as the node's (one machine running both). */
  readonly sessionsPerCoreWithDb: number;
}

const LEVELS = { deterministic: { sessions: 10, seconds: 15 }, pocketsphinx: { sessions: 4, seconds: 15 } } as const;

/**
 * Realtime sessions per core with the state in memory and in PostgreSQL, one run side by side. The
 * node runs in a child process (its CPU read from /proc); on PostgreSQL a session's spending check asks
 * the database once per started second of audio, and that CPU is read from the postmaster and its
 * backends. The target: with PostgreSQL, a node carries at least 90 % of the sessions it carries in memory.
 */
export async function collectStoreCapacity(options: { quick: boolean }): Promise<StoreCapacityRow[]> {
  const rows: StoreCapacityRow[] = [];
  const pg = await LocalPostgres.start({ fast: false });
  try {
    for (const recognizer of ['deterministic', 'pocketsphinx'] as const) {
      const level = options.quick ? { sessions: 2, seconds: 5 } : LEVELS[recognizer];
      for (const store of ['memory', 'postgres'] as const) {
        // One database for both recognizers: the bench key's ledger has room for every run.
        const flags = store === 'postgres' ? ['--database-url', pg.url()] : [];
        const server = await hostServer({ in: 'child', recognizer, flags, ...(recognizer === 'pocketsphinx' ? { decoders: level.sessions + 2 } : {}) });
        try {
          rows.push(await measure(server, store, recognizer, level.sessions, level.seconds, store === 'postgres' ? pg : undefined));
          const row = rows.at(-1) as StoreCapacityRow;
          progress(`realtime store (${recognizer}, ${store}): ${row.sessionsPerCore.toFixed(1)} sessions per node core (${row.sessionsPerCoreWithDb.toFixed(1)} with the database's CPU)`);
        } finally {
          await server.close();
        }
      }
    }
  } finally {
    await pg.stop();
  }
  return rows;
}

async function measure(server: ServerChild, store: StoreCapacityRow['store'], recognizer: StoreCapacityRow['recognizer'], sessions: number, seconds: number, pg: LocalPostgres | undefined): Promise<StoreCapacityRow> {
  const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
  // One warm-up session (code paths, the pool's connections), then the measured level.
  await streamLevel(client, server, recognizer, 1, 2);
  const dbBefore = pg === undefined ? 0 : postgresCpuMs(pg);
  const row = await streamLevel(client, server, recognizer, sessions, seconds);
  const dbMs = pg === undefined ? 0 : postgresCpuMs(pg) - dbBefore;
  const dbPerAudioS = dbMs / row.audioSeconds;
  return {
    store,
    recognizer,
    sessions,
    audioSeconds: row.audioSeconds,
    nodeCpuMsPerAudioS: row.serverCpuMsPerAudioS,
    dbCpuMsPerAudioS: dbPerAudioS,
    sessionsPerCore: row.sessionsPerCore,
    sessionsPerCoreWithDb: 1000 / (row.serverCpuMsPerAudioS + dbPerAudioS),
  };
}

/** CPU the postmaster and its processes used so far (ms): its own, its live children's, and its reaped children's. */
function postgresCpuMs(pg: LocalPostgres): number {
  const postmaster = Number(readFileSync(join(pg.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
  let ticks = 0;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const pid = Number(entry);
    const ppid = Number(fields[1]);
    if (pid === postmaster) ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
    else if (ppid === postmaster) ticks += Number(fields[11]) + Number(fields[12]);
  }
  return (ticks * 1000) / clockTicks();
}

export function storeCapacityText(rows: readonly StoreCapacityRow[]): string {
  const lines = [
    '## Realtime sessions per core: memory vs PostgreSQL',
    '',
    '| recognizer | store | sessions × audio s | node CPU ms / audio s | database CPU ms / audio s | sessions per node core | with the database\'s CPU |',
    '|---|---|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.recognizer} | ${r.store} | ${r.sessions} × ${r.audioSeconds / r.sessions} | ${r.nodeCpuMsPerAudioS.toFixed(2)} | ${r.dbCpuMsPerAudioS.toFixed(2)} | ${r.sessionsPerCore.toFixed(1)} | ${r.sessionsPerCoreWithDb.toFixed(1)} |`),
    '',
  ];
  for (const recognizer of ['deterministic', 'pocketsphinx'] as const) {
    const memory = rows.find((r) => r.recognizer === recognizer && r.store === 'memory');
    const pg = rows.find((r) => r.recognizer === recognizer && r.store === 'postgres');
    if (memory === undefined || pg === undefined) continue;
    const ratio = (100 * pg.sessionsPerCore) / memory.sessionsPerCore;
    const withDb = (100 * pg.sessionsPerCoreWithDb) / memory.sessionsPerCore;
    lines.push(`${recognizer}: PostgreSQL / memory = ${ratio.toFixed(1)} % per node core (target ≥ 90 %: ${ratio >= 90 ? 'PASS' : 'MISS'}); ${withDb.toFixed(1)} % counting the database's CPU too.`);
  }
  return `${lines.join('\n')}\n`;
}
