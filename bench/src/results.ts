import type { ContenderFamily } from './contenders/index.js';
import type { Throughput } from './hot-loop.js';
import type { PairedRatio } from './measure/paired-ratio.js';
import type { QualityFigures } from './quality/figures.js';
import type { CapacityRow, PacedRow } from './lab/realtime/capacity.js';
import type { LatencyRow } from './lab/realtime/latency.js';
import type { RecognizerBenchRow, RecognizerPacedRow } from './lab/recognizer.js';
import type { CaptionsBench } from './lab/captions/bench.js';
import type { LongSessionResult } from './lab/long-session/session.js';

/** Streaming figures over ten minutes of 128-sample blocks. */
export interface StreamFigures {
  /** Minutes of audio the figures are stated for. */
  readonly minutes: number;
  /** Minutes actually streamed: less than `minutes` when the window hit its wall-time cap. */
  readonly measuredMinutes: number;
  /** GCs over `minutes`: counted, or scaled from `gcsMeasured` when the window was cut short. */
  readonly gcs: number;
  readonly gcsMeasured: number;
  readonly gcPauseMs: number;
  /** Garbage per call (alloc-probe.ts); null without --expose-gc. */
  readonly bytesPerCall: number | null;
  /** Throughput over the whole window, a cross-check of benchmark.js's figure. */
  readonly msps: number;
}

/** Counts after streaming: out − floor(N·16000/fin), before and after flush(). */
export interface CountFigures {
  readonly heldBack: number;
  readonly hasFlush: boolean;
  /** The same difference after flush(): 0 is exact. Null without a flush. */
  readonly afterFlush: number | null;
}

/** One row of the main table: one resampler at one input rate. */
export interface ResamplerRow {
  readonly id: string;
  readonly label: string;
  readonly family: ContenderFamily;
  readonly inputRate: number;
  throughput?: Throughput;
  stream?: StreamFigures;
  counts?: CountFigures;
  quality?: QualityFigures;
  /** Stated (ours) or timeline delay + held-back outputs (the others), ms. */
  latencyMs?: number;
}

/** A row of the second table: the other stages of the path and the references. */
export interface PathRow {
  readonly id: string;
  readonly label: string;
  readonly inputRate: number;
  readonly throughput: Throughput;
  stream?: StreamFigures;
  /** Pipeline rows: its cost over the resampler's, median of paired CPU-time rounds (the 20 % target). */
  pairedRatio?: PairedRatio;
}

export interface TargetResult {
  readonly target: string;
  readonly measured: string;
  /** null: could not be measured in this run (a suite was left out). */
  readonly pass: boolean | null;
}

export interface BenchReport {
  readonly meta: {
    readonly date: string;
    readonly node: string;
    readonly v8: string;
    readonly cpu: string;
    readonly cores: number;
    readonly exposeGc: boolean;
    readonly suites: readonly string[];
    readonly durationS: number;
  };
  readonly resamplers: ResamplerRow[];
  readonly paths: PathRow[];
  readonly targets: TargetResult[];
  /** Realtime sessions per server core, and the client's write() → socket latency. */
  readonly realtime?: { capacity: CapacityRow[]; paced: PacedRow[]; latency: LatencyRow[] };
  /** The PocketSphinx recognizer's real-time factor, and paced sessions per core with it. */
  readonly recognizer?: { rows: RecognizerBenchRow[]; paced: RecognizerPacedRow[] };
  /** Caption cues on real speech: churn and added delay per stability setting. */
  readonly captions?: CaptionsBench;
  readonly longSession?: LongSessionResult;
}
