import { markdownTable, sig3 } from '../../report/markdown.js';
import type { CapacityRow, PacedRow } from './capacity.js';
import type { LatencyRow } from './latency.js';

export function capacityTable(rows: readonly CapacityRow[]): string {
  const header = ['recognizer', 'sessions', 'audio s', 'wall s', 'server CPU ms / audio s', 'sessions / core', 'client CPU ms / audio s'];
  const body = rows.map((r) => [
    r.recognizer, String(r.sessions), String(r.audioSeconds), r.wallSeconds.toFixed(1), sig3(r.serverCpuMsPerAudioS),
    Math.round(r.sessionsPerCore).toLocaleString('en-US'), sig3(r.clientCpuMsPerAudioS),
  ]);
  return markdownTable(header, body, header.map((_, i) => i >= 1));
}

export function pacedTable(rows: readonly PacedRow[]): string {
  const header = ['recognizer', 'sessions at 1×', 'seconds', 'server cores busy', 'sessions / core at 1×', 'unacked p50 ms', 'unacked p99 ms', 'delivered on time %', 'server CPU ms / session (connect+finish)'];
  const body = rows.map((r) => [
    r.recognizer, String(r.sessions), String(r.seconds), r.serverCores.toFixed(2), Math.round(r.sessionsPerCore).toLocaleString('en-US'),
    r.ackLagP50Ms.toFixed(0), r.ackLagP99Ms.toFixed(0), r.deliveredPercent.toFixed(1), sig3(r.sessionOverheadMs),
  ]);
  return markdownTable(header, body, header.map((_, i) => i >= 1));
}

export function latencyTable(rows: readonly LatencyRow[]): string {
  const header = ['input', 'frames', 'write→send p50 µs', 'p99 µs', 'write→socket p50 µs', 'p99 µs', 'max µs', 'framing ms'];
  const body = rows.map((r) => [
    r.input, String(r.frames), r.sendP50Us.toFixed(0), r.sendP99Us.toFixed(0), r.socketP50Us.toFixed(0), r.socketP99Us.toFixed(0), r.socketMaxUs.toFixed(0), r.framingMs,
  ]);
  return markdownTable(header, body, header.map((_, i) => i >= 1 && i < 7));
}

/** The realtime section of the printed report. */
export function realtimeText(realtime: NonNullable<import('../../results.js').BenchReport['realtime']>): string {
  const parts: string[] = [];
  if (realtime.capacity.length > 0) {
    parts.push(
      'Realtime sessions per server core: the reference server in a child process, its CPU time read from /proc (a loaded',
      'machine changes wall time, not CPU time). First streaming faster than real time: sessions / core = 1000 / server CPU ms per audio s.',
      capacityTable(realtime.capacity),
    );
  }
  if (realtime.paced.length > 0) {
    parts.push('', 'Then a ramp at exactly 1× real time (every session writes 20 ms blocks as they fall due): server cores busy, sessions per core',
      '(sessions ÷ cores busy), and unacked = sent − acknowledged sampled every 100 ms (acks come every 50 ms). The bench process writes',
      'every session and shares the cores: a row delivered on time below ~95 % measured the clients, not the server.', pacedTable(realtime.paced));
  }
  if (realtime.latency.length > 0) {
    parts.push('', "Client's added latency, write() → frame on the socket, 1× real time, real sockets to the reference server:", latencyTable(realtime.latency));
  }
  return parts.join('\n');
}
