import { FLAT_TOLERANCE, flatness, type Flatness } from './flatness.js';
import type { Figures, LongSessionResult, MemoryReading } from './session.js';

const MiB = 1024 * 1024;

/** The audio minutes the table shows memory at: 0, and each quarter of the run. */
function marks(result: LongSessionResult): MemoryReading[] {
  const total = result.options.minutes;
  const wanted = [0, total / 4, total / 2, (3 * total) / 4, total];
  return wanted.map((m) => result.readings.reduce((best, r) => (Math.abs(r.audioMinutes - m) < Math.abs(best.audioMinutes - m) ? r : best)));
}

const mib = (n: number): string => (n / MiB).toFixed(2);
const ms = (n: number): string => (Number.isFinite(n) ? `${Math.round(n)}` : 'n/a');
const pct = (n: number): string => `${n >= 0 ? '+' : ''}${(n * 100).toFixed(1)} %`;
const p = (f: Figures): string => `${ms(f.p50)} / ${ms(f.p99)} ms (n=${String(f.count)})`;

export function clientHeapLessLines(result: LongSessionResult): (r: MemoryReading) => number {
  return (r) => r.clientHeap - r.lines * result.bytesPerLine;
}

export function serverHeapLessLines(result: LongSessionResult): (r: MemoryReading) => number {
  return (r) => r.serverHeap - r.serverLines * result.serverBytesPerLine;
}

export interface LongSessionVerdict {
  readonly client: Flatness;
  readonly server: Flatness;
  readonly clientRaw: Flatness;
  readonly serverRaw: Flatness;
  readonly exact: boolean;
}

export function verdict(result: LongSessionResult): LongSessionVerdict {
  return {
    client: flatness(result.readings, clientHeapLessLines(result)),
    server: flatness(result.readings, serverHeapLessLines(result)),
    clientRaw: flatness(result.readings, (r) => r.clientHeap),
    serverRaw: flatness(result.readings, (r) => r.serverHeap),
    exact: result.exact && result.endState === 'finished',
  };
}

/** The long-session table: one row per figure, memory at 0/¼/½/¾/end of the audio. */
export function longSessionText(result: LongSessionResult): string {
  const o = result.options;
  const at = marks(result);
  const v = verdict(result);
  const series = (f: (r: MemoryReading) => string): string => at.map(f).join(' / ');
  const flat = (x: Flatness): string => `min ${x.firstSpan[0].toFixed(0)}–${x.firstSpan[1].toFixed(0)} mean ${mib(x.first)} MiB → min ${x.lastSpan[0].toFixed(0)}–${x.lastSpan[1].toFixed(0)} mean ${mib(x.last)} MiB: ${pct(x.growth)}`;
  const causes = Object.entries(result.causes).map(([cause, n]) => `${cause} ×${String(n)}`).join(', ') || 'none';
  const wallCutMs = (o.cutEverySeconds * 1000) / o.speed;
  const rows: Array<[string, string, string]> = [
    [`audio minute of each reading below`, series((r) => r.audioMinutes.toFixed(0)), ''],
    ['client heap after gc(), MiB', series((r) => mib(r.clientHeap)), ''],
    [`client heap − its lines (${result.bytesPerLine.toFixed(0)} B/line), MiB`, series((r) => mib(r.clientHeap - r.lines * result.bytesPerLine)), ''],
    ['client RSS, MiB', series((r) => mib(r.clientRss)), ''],
    ['server heap after GC, MiB', series((r) => mib(r.serverHeap)), ''],
    [`server heap − its lines (${result.serverBytesPerLine.toFixed(0)} B/line), MiB`, series((r) => mib(r.serverHeap - r.serverLines * result.serverBytesPerLine)), ''],
    ['server RSS (/proc VmRSS), MiB', series((r) => mib(r.serverRss)), ''],
    ['heap reserved (heapTotal): client / server, MiB', series((r) => `${mib(r.clientHeapTotal)}/${mib(r.serverHeapTotal)}`), ''],
    ['outside the heap (external: Buffers, ArrayBuffers): client / server, MiB', series((r) => `${mib(r.clientExternal)}/${mib(r.serverExternal)}`), ''],
    ['lines held: client / server', series((r) => `${String(r.lines)}/${String(r.serverLines)}`), ''],
    ['reconnects so far', series((r) => String(r.reconnects)), ''],
    ['session listeners client / server; client handles; server sockets', series((r) => `${String(r.clientListeners)}/${String(r.serverListeners)};${String(r.clientHandles)};${String(r.serverSockets)}`), 'no growth'],
    ['retained buffer high-water (session.stats after each batch of writes)', `${(result.bufferedHighWaterMs / 1000).toFixed(2)} s of audio, ${(result.bufferFillHighWater * 100).toFixed(1)} % of the ring`, 'bounded'],
    ['reconnects (cuts made) and causes', `${String(result.reconnects)} (${String(result.cuts)}): ${causes}; flapping reports ${String(result.flappingReports)}`, '= cuts, 0 flapping'],
    ['reconnect duration p50 / max (health `reconnected`)', `${ms(result.reconnectMs.p50)} / ${ms(result.reconnectMs.max)} ms`, ''],
    ['server rotations (session `rotated`)', String(result.rotations), ''],
    ['ack lag p50 / p99, audio ms', p(result.ackLagMs), ''],
    ['capture → partial p50 / p99', p(result.partialLatencyMs), ''],
    ['capture → final p50 / p99', p(result.finalLatencyMs), ''],
    ['health stream at the end (last 128): ack lag, final p50 / p95', `${String(result.healthAtEnd.ackLagP50)} / ${String(result.healthAtEnd.ackLagP95)} ms; ${String(result.healthAtEnd.finalP50)} / ${String(result.healthAtEnd.finalP95)} ms`, ''],
    ['lines received', String(result.lines), ''],
    [
      'delivery: samples written = received = stored (digest), gaps, status',
      `${result.sentSamples.toLocaleString('en')} = ${result.receivedSamples.toLocaleString('en')}, digest ${result.clientDigest} / ${result.serverDigest}, ${String(result.gaps)} gaps, ${result.status} (${result.endState})`,
      v.exact ? 'PASS' : 'FAIL',
    ],
    [`memory flat, client (heap − lines): last quarter within ${String(FLAT_TOLERANCE * 100)} % of the first`, flat(v.client), v.client.pass ? 'PASS' : 'FAIL'],
    [`memory flat, server (heap − lines): last quarter within ${String(FLAT_TOLERANCE * 100)} % of the first`, flat(v.server), v.server.pass ? 'PASS' : 'FAIL'],
    ['heap with the lines (for the record): client / server', `${pct(v.clientRaw.growth)} / ${pct(v.serverRaw.growth)}`, 'lines grow'],
  ];
  const head = [
    `Long session · ${String(o.minutes)} min of audio through ONE realtime session at ${String(o.speed)}× real time (${result.wallSeconds.toFixed(0)} s wall) · proxy cut every ${String(o.cutEverySeconds)} s of audio · server rotation every ${String(o.rotateEveryMinutes)} min of audio · deterministic recogniser, server in its own process`,
    `Scaled by ${String(o.speed)}× (wall-clock constants of the session ÷ speed, so a cut every ${String(o.cutEverySeconds)} s of audio, ${wallCutMs.toFixed(0)} ms of wall time, is routine as at 1×): stableWindowMs ${String(result.scaled.stableWindowMs)} (half the wall time between cuts), reconnect backoff ${String(result.scaled.reconnectBaseMs)}–${String(result.scaled.reconnectMaxMs)} ms (the default 250 ms–5 s ÷ ${String(o.speed)}). Ack lag and the buffer are in audio ms: at ${String(o.speed)}× an ack every 50 ms of wall time trails ${((50 * o.speed) / 1000).toFixed(1)} s of audio (the 2 s in-flight window caps it).`,
    '',
    '| figure | value | target |',
    '|---|---|---|',
    ...rows.map(([a, b, c]) => `| ${a} | ${b} | ${c} |`),
    '',
    `Flat: readings every ${String(o.readEveryMinutes)} audio min after a gc() (client: two gc() calls, heapUsed; server: the same inside its process over IPC); the first twelfth of the run is warm-up (JIT, pools, the first rotation); the rest is cut into quarters and the last quarter's mean may exceed the first's by at most ${String(FLAT_TOLERANCE * 100)} % (falling memory passes). The lines are subtracted at their measured size (a structuredClone of all lines, measured after a GC, per line, in each process); the growth with them is printed too.`,
  ];
  return head.join('\n');
}
