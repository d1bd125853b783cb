/** One row of the hostile-client table (one attack, or the baseline without one). */
export interface AttackRow {
  readonly id: string;
  readonly title: string;
  readonly clients: number;
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly ackMaxMs: number;
  readonly acks: number;
  readonly reconnects: number;
  /** Peak growth of the server's RSS during the attack over its baseline, per hostile client. */
  readonly rssPerClientMiB: number;
  /** The same for heapUsed + external (JS heap, Buffers). */
  readonly heldPerClientMiB: number;
  readonly survived: boolean;
}

/** The targets, stated once: the table shows pass/fail per target. */
export const TARGETS = {
  ackP99Ms: 100,
  /** docs/protocol.md: 16 MiB held per socket (SOCKET_DEFAULTS.maxBufferedBytes). */
  memoryPerClientMiB: 16,
} as const;

export interface ReportMeta {
  readonly date: string;
  readonly node: string;
  readonly cpu: string;
  readonly cores: number;
  readonly seconds: number;
  readonly clients: number;
  readonly durationS: number;
}

const mark = (ok: boolean): string => (ok ? 'pass' : 'FAIL');
const fixed = (n: number, digits: number): string => (Number.isFinite(n) ? n.toFixed(digits) : '—');

export function renderReport(meta: ReportMeta, rows: readonly AttackRow[]): string {
  const header = ['attack', 'clients', 'loop p99 ms', 'loop max ms', 'ack p50 ms', 'ack p99 ms', 'MiB / client (RSS)', 'MiB / client (heap+ext)', 'survived', `ack p99 < ${TARGETS.ackP99Ms} ms`, `mem ≤ ${TARGETS.memoryPerClientMiB} MiB`];
  const body = rows.map((r) => [
    r.id,
    String(r.clients),
    fixed(r.loopP99Ms, 1),
    fixed(r.loopMaxMs, 0),
    fixed(r.ackP50Ms, 1),
    fixed(r.ackP99Ms, 1),
    fixed(r.rssPerClientMiB, 2),
    fixed(r.heldPerClientMiB, 2),
    r.survived ? 'yes' : 'NO',
    mark(r.ackP99Ms < TARGETS.ackP99Ms),
    mark(Math.max(r.rssPerClientMiB, r.heldPerClientMiB) <= TARGETS.memoryPerClientMiB),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: readonly string[]): string => `| ${cells.map((c, i) => (i < 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (i < 1 ? '-'.repeat(w + 2) : `${'-'.repeat(w + 1)}:`)).join('|')}|`;
  const passed = rows.every((r) => r.survived && r.ackP99Ms < TARGETS.ackP99Ms && Math.max(r.rssPerClientMiB, r.heldPerClientMiB) <= TARGETS.memoryPerClientMiB);
  return [
    `Hostile clients · ${meta.date} · Node ${meta.node} · ${meta.cpu} × ${meta.cores} · ${meta.clients} clients per attack, ${meta.seconds} s each · ${meta.durationS.toFixed(0)} s`,
    'Server, healthy session and hostile clients are three processes on the same machine; on a shared 2-core VM the figures are noisy.',
    '',
    line(header),
    rule,
    ...body.map(line),
    '',
    ...rows.map((r) => `- ${r.id}: ${r.title}`),
    '',
    'loop: the server\'s event-loop delay during the attack (perf_hooks.monitorEventLoopDelay inside the server process).',
    'ack: a healthy SDK session in its own process streams 20 ms frames at 1× real time; write → the audio.ack covering the frame (the server acks at most every 50 ms).',
    'MiB / client: peak growth over the attack\'s baseline (after a GC) divided by the hostile clients; the memory target takes the larger of the two.',
    `Targets: no crash, ack p99 < ${TARGETS.ackP99Ms} ms, memory per client ≤ ${TARGETS.memoryPerClientMiB} MiB (docs/protocol.md). All met: ${passed ? 'yes' : 'NO'}.`,
  ].join('\n');
}
