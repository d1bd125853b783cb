import { QUALITY_PRESETS } from '@soundclone/core/internal';
import type { PathRow, ResamplerRow, TargetResult } from '../results.js';
import { sig3, signed } from './markdown.js';

const RATES = [48000, 44100] as const;
const KHZ: Record<number, string> = { 48000: '48 kHz', 44100: '44.1 kHz' };

/** The quality each preset guarantees, from core's QUALITY_PRESETS (the targets' figures). */
const PRESET_SPEC = {
  best: spec('best'),
  fast: spec('fast'),
};

function spec(quality: 'best' | 'fast'): { passDb: number; stopDb: number; snrDb: number } {
  const p = QUALITY_PRESETS[quality];
  return { passDb: p.passToleranceDb, stopDb: -p.stopAttenuationDb, snrDb: p.snrDb };
}

/**
 * The encode path's targets, each checked against figures from this run. Speed targets are ratios of two
 * rows measured minutes apart in one process, which is what survives the ±30 % drift of a shared VM.
 * A target whose rows were not measured (a suite left out with --only) is reported as not measured.
 */
export function evaluateTargets(resamplers: readonly ResamplerRow[], paths: readonly PathRow[]): TargetResult[] {
  const row = (id: string, inputRate: number): ResamplerRow | undefined => resamplers.find((r) => r.id === id && r.inputRate === inputRate);
  const path = (id: string): PathRow | undefined => paths.find((p) => p.id === id);
  const out: TargetResult[] = [];

  // Speed against speex-wasm: 1× at the integer ratio 48k→16k, 3× at 44.1k→16k.
  for (const [ours, speex] of [['best', 7], ['fast', 5]] as const) {
    for (const inputRate of RATES) {
      const need = inputRate === 48000 ? 1 : 3;
      const a = row(`ours-${ours}`, inputRate)?.throughput, b = row(`speex-q${speex}`, inputRate)?.throughput;
      out.push(ratioTarget(`${ours} ≥ ${need}× speex-wasm q${speex} throughput, ${KHZ[inputRate]}`, a?.msps, b?.msps, need));
    }
  }
  // Equal or better measured quality than the speex level it is compared with.
  for (const [ours, speex] of [['best', 7], ['fast', 5]] as const) {
    for (const inputRate of RATES) {
      const a = row(`ours-${ours}`, inputRate)?.quality, b = row(`speex-q${speex}`, inputRate)?.quality;
      if (a === undefined || b === undefined) { out.push(missing(`${ours} quality ≥ speex q${speex}, ${KHZ[inputRate]}`)); continue; }
      const worse: string[] = [];
      if (a.snr1kDb < b.snr1kDb) worse.push('SNR');
      if (Math.abs(a.worstPassbandDb) > Math.max(Math.abs(b.worstPassbandDb), PRESET_SPEC[ours].passDb)) worse.push('passband');
      if (Math.max(a.level9kDb, a.level10kDb) > Math.max(b.level9kDb, b.level10kDb)) worse.push('stopband');
      out.push({
        target: `${ours} quality ≥ speex q${speex} (SNR, passband within spec, 9/10 kHz), ${KHZ[inputRate]}`,
        measured: `SNR ${a.snr1kDb.toFixed(1)} vs ${b.snr1kDb.toFixed(1)} dB; pass ${signed(a.worstPassbandDb, 3)} vs ${signed(b.worstPassbandDb, 3)}; ` +
          `9/10k ${signed(a.level9kDb, 0)}/${signed(a.level10kDb, 0)} vs ${signed(b.level9kDb, 0)}/${signed(b.level10kDb, 0)}` +
          (worse.length > 0 ? ` (worse: ${worse.join(', ')})` : ''),
        pass: worse.length === 0,
      });
    }
  }
  // The presets' own guarantees.
  for (const ours of ['best', 'fast'] as const) {
    const spec = PRESET_SPEC[ours];
    for (const inputRate of RATES) {
      const q = row(`ours-${ours}`, inputRate)?.quality;
      const name = `${ours} spec: ±${spec.passDb} dB to 6.8k, 9/10k ≤ ${signed(spec.stopDb, 0)} dB, SNR ≥ ${spec.snrDb} dB, ${KHZ[inputRate]}`;
      if (q === undefined) { out.push(missing(name)); continue; }
      out.push({
        target: name,
        measured: `${signed(q.worstPassbandDb, 3)} dB, ${signed(q.level9kDb, 1)}/${signed(q.level10kDb, 1)} dB, ${q.snr1kDb.toFixed(1)} dB`,
        pass: Math.abs(q.worstPassbandDb) <= spec.passDb && Math.max(q.level9kDb, q.level10kDb) <= spec.stopDb && q.snr1kDb >= spec.snrDb,
      });
    }
  }
  // 10× libsamplerate-js SINC_FASTEST.
  for (const ours of ['best', 'fast'] as const) {
    for (const inputRate of RATES) {
      const a = row(`ours-${ours}`, inputRate)?.throughput, b = row('libsamplerate-fastest', inputRate)?.throughput;
      out.push(ratioTarget(`${ours} ≥ 10× libsamplerate-js FASTEST, ${KHZ[inputRate]}`, a?.msps, b?.msps, 10));
    }
  }
  // Exact counts after flush where libsamplerate holds samples back.
  {
    const ours = resamplers.filter((r) => r.family === 'ours' && r.counts !== undefined);
    const lsr = resamplers.filter((r) => r.family === 'libsamplerate' && r.counts !== undefined);
    out.push(ours.length === 0 ? missing('exact counts after flush (ours)') : {
      target: 'exact counts after flush: out = floor(N·16000/fin) (ours, 10 min streamed)',
      measured: `ours ${ours.map((r) => signed(r.counts?.afterFlush ?? NaN, 0)).join(', ')}; libsamplerate-js holds back ${[...new Set(lsr.map((r) => signed(r.counts?.heldBack ?? NaN, 0)))].join(', ')} (no flush)`,
      pass: ours.every((r) => r.counts?.afterFlush === 0),
    });
  }
  // Encode path overhead: the median of paired CPU-time rounds when measured (steady on a loaded VM),
  // else the ratio of the two benchmark.js rows.
  for (const inputRate of RATES) {
    const row = path(`session-encode/best/${inputRate}`), p = row?.throughput, r = path(`session-encode/resampler-alone/${inputRate}`)?.throughput;
    const name = `session encode path (write to socket-ready frames) within 20 % of the resampler alone, ${KHZ[inputRate]}`;
    if (p === undefined || r === undefined) { out.push(missing(name)); continue; }
    const paired = row?.pairedRatio;
    if (paired !== undefined) {
      const overhead = paired.median - 1;
      out.push({
        target: name,
        measured: `${signed(overhead * 100, 1)} % (median of ${paired.rounds} paired CPU-time rounds, quartiles ${signed((paired.q1 - 1) * 100, 1)}…${signed((paired.q3 - 1) * 100, 1)} %; ` +
          `benchmark.js rows ${p.usPerStep.toFixed(2)} vs ${r.usPerStep.toFixed(2)} µs per block)`,
        pass: overhead <= 0.2,
      });
      continue;
    }
    const overhead = p.usPerStep / r.usPerStep - 1;
    out.push({ target: name, measured: `${signed(overhead * 100, 1)} % (${p.usPerStep.toFixed(2)} vs ${r.usPerStep.toFixed(2)} µs per block)`, pass: overhead <= 0.2 });
  }
  // PCM16 alone.
  {
    const p = path('pcm16/encode-128')?.throughput, ref = path('pcm16/reference-128')?.throughput;
    const context = ref === undefined ? '' : ` (the inline reference loop: ${sig3(ref.msps)} Ms/s in this run)`;
    out.push(p === undefined ? missing('PCM16 encoder ≥ 200 Ms/s') : { target: 'PCM16 encoder ≥ 200 Ms/s (128-sample blocks)', measured: `${sig3(p.msps)} Ms/s${context}`, pass: p.msps >= 200 });
  }
  // Zero garbage collections while streaming ten minutes.
  {
    const streams = [
      ...resamplers.filter((r) => r.family === 'ours').map((r) => ({ name: `${r.label} ${r.inputRate / 1000}k`, s: r.stream })),
      ...paths.filter((p) => p.id.startsWith('session-encode/best') || p.id.startsWith('session-encode/frame-encoder')).map((p) => ({ name: p.id, s: p.stream })),
    ].filter((x) => x.s !== undefined);
    if (streams.length === 0) out.push(missing('0 GCs in 10 min of 128-sample blocks'));
    else {
      const gcs = streams.reduce((n, x) => n + (x.s?.gcs ?? 0), 0);
      const bytes = streams.reduce((n, x) => Math.max(n, x.s?.bytesPerCall ?? 0), 0);
      out.push({
        target: '0 GCs in 10 min of 128-sample blocks (ours best/fast, session encode path Float32 and Int16, FrameEncoder alone; both rates)',
        measured: `${gcs} GCs over ${streams.length} streams; at most ${bytes.toFixed(0)} B per call`,
        pass: gcs === 0,
      });
    }
  }
  return out;
}

function ratioTarget(target: string, a: number | undefined, b: number | undefined, need: number): TargetResult {
  if (a === undefined || b === undefined) return missing(target);
  const ratio = a / b;
  return { target, measured: `${ratio.toFixed(2)}× (${sig3(a)} vs ${sig3(b)} Ms/s)`, pass: ratio >= need };
}

function missing(target: string): TargetResult {
  return { target, measured: 'not measured in this run', pass: null };
}

export function targetsTable(targets: readonly TargetResult[]): string {
  const lines = targets.map((t) => `${t.pass === null ? ' n/a' : t.pass ? 'PASS' : 'MISS'}  ${t.target}: ${t.measured}`);
  const passed = targets.filter((t) => t.pass === true).length;
  const measured = targets.filter((t) => t.pass !== null).length;
  return [...lines, `${passed} of ${measured} measured targets pass.`].join('\n');
}
