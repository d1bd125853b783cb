import type { PathRow, ResamplerRow, StreamFigures } from '../results.js';
import { NONE, markdownTable, sig3, signed } from './markdown.js';

const RATE_LABEL: Record<number, string> = { 48000: '48k', 44100: '44.1k', 16000: '16k' };

function rate(r: number): string {
  return RATE_LABEL[r] ?? `${r / 1000}k`;
}

/** The main table: one row per resampler and input rate, in the order measured. */
export function resamplerTable(rows: readonly ResamplerRow[]): string {
  const header = [
    'resampler', 'in → 16k', 'Ms/s', '× realtime', 'µs / 128', 'GCs / 10 min', 'B / call',
    'held back', 'flush', 'SNR 1 kHz dB', 'worst pass dB', '9 kHz dB', '10 kHz dB', 'latency ms',
  ];
  const body = rows.map((r) => {
    const t = r.throughput, s = r.stream, c = r.counts, q = r.quality;
    return [
      r.label,
      rate(r.inputRate),
      t ? sig3(t.msps) : NONE,
      t ? Math.round(t.xRealtime).toLocaleString('en-US') : NONE,
      t ? t.usPerStep.toFixed(2) : NONE,
      s ? gcs(s) : NONE,
      s?.bytesPerCall != null ? String(Math.round(s.bytesPerCall)) : NONE,
      c ? heldBack(c.heldBack, c.afterFlush) : NONE,
      c ? (c.hasFlush ? 'yes' : 'no') : NONE,
      q ? q.snr1kDb.toFixed(1) : NONE,
      q ? signed(q.worstPassbandDb, 3) : NONE,
      q ? signed(q.level9kDb, 1) : NONE,
      q ? signed(q.level10kDb, 1) : NONE,
      r.latencyMs !== undefined ? r.latencyMs.toFixed(2) : NONE,
    ];
  });
  return markdownTable(header, body, header.map((_, i) => i >= 2));
}

/** "≈49" when the count was scaled from a window the time cap cut short. */
function gcs(s: StreamFigures): string {
  return s.measuredMinutes < s.minutes - 1e-9 ? `≈${s.gcs}` : String(s.gcs);
}

/** "−23 → 0" for a stream with a flush; the bare difference without one. */
function heldBack(before: number, after: number | null): string {
  const b = signed(before, 0);
  return after === null ? b : `${b} → ${signed(after, 0)}`;
}

/** The other stages of the path and the references. */
export function pathTable(rows: readonly PathRow[]): string {
  const header = ['stage', 'samples at', 'Ms/s', '× realtime', 'µs / call', 'GCs / 10 min', 'B / call'];
  const body = rows.map((r) => [
    r.label,
    rate(r.inputRate),
    sig3(r.throughput.msps),
    Math.round(r.throughput.xRealtime).toLocaleString('en-US'),
    r.throughput.usPerStep.toFixed(3),
    r.stream ? gcs(r.stream) : NONE,
    r.stream?.bytesPerCall != null ? String(Math.round(r.stream.bytesPerCall)) : NONE,
  ]);
  return markdownTable(header, body, header.map((_, i) => i >= 2));
}
