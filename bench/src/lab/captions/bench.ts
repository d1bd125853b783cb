import { mkdir, writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CAPTION_DEFAULTS, type CaptionOptions } from '@soundclone/core';
import { recordTrace, type Trace } from './trace.js';
import { rawDisplay, replay, type ReplayRow } from './replay.js';

/**
 * The caption cue benchmark, shared by `pnpm bench` (its `captions` section) and `pnpm bench:captions`:
 * caption churn and added delay on real recorded speech. The LibriVox clips of pocketsphinx-testdata
 * stream at 1x through the reference server with PocketSphinx; the partials, lines and updates are
 * recorded once and the caption engine is replayed over them per setting.
 *
 *   churn     characters of displayed text later changed or removed, per minute of speech: the raw
 *             partial stream (lines + partial, as an app showing partials does) vs the cues
 *   delay     per word of the final transcript: first time it showed in the cues minus first time it
 *             showed in the raw stream (same position, same word)
 *   readable  share of final cues within lines, line length, duration, reading rate and no overlap
 */
const RESULTS = fileURLToPath(new URL('../../../results/', import.meta.url));
const NEVER_UPDATES = 100;
const NEVER_MS = 600_000;

const SETTINGS: ReadonlyArray<{ readonly label: string; readonly options: CaptionOptions }> = [
  { label: 'every word at once (K=0)', options: { stableUpdates: 0, stableMs: 0 } },
  { label: `defaults (K=${String(CAPTION_DEFAULTS.stableUpdates)}, T=${String(CAPTION_DEFAULTS.stableMs)} ms)`, options: {} },
  { label: 'K=1 only', options: { stableUpdates: 1, stableMs: NEVER_MS } },
  { label: 'K=2 only', options: { stableUpdates: 2, stableMs: NEVER_MS } },
  { label: 'K=3 only', options: { stableUpdates: 3, stableMs: NEVER_MS } },
  { label: 'T=250 ms only', options: { stableUpdates: NEVER_UPDATES, stableMs: 250 } },
  { label: 'T=500 ms only', options: { stableUpdates: NEVER_UPDATES, stableMs: 500 } },
  { label: 'T=1000 ms only', options: { stableUpdates: NEVER_UPDATES, stableMs: 1000 } },
  { label: 'K=1 or T=500 ms', options: { stableUpdates: 1, stableMs: 500 } },
  { label: 'K=2 or T=500 ms', options: { stableUpdates: 2, stableMs: 500 } },
  { label: 'K=2 or T=1000 ms', options: { stableUpdates: 2, stableMs: 1000 } },
  { label: 'committed lines only', options: { stableUpdates: NEVER_UPDATES, stableMs: NEVER_MS } },
];

/** One run: a row per setting over the same recorded session. */
export interface CaptionsBench {
  readonly rows: ReadonlyArray<{ readonly label: string; readonly row: ReplayRow }>;
  readonly audioS: number;
  readonly clips: number;
  readonly partials: number;
  readonly lines: number;
}

/** Records the session (or takes a recording kept earlier) and replays every setting over it. */
export async function runCaptionsBench(trace?: Trace): Promise<CaptionsBench> {
  const recorded = trace ?? (await recordTrace());
  const raw = rawDisplay(recorded);
  return {
    rows: SETTINGS.map(({ label, options }) => ({ label, row: replay(recorded, options, raw) })),
    audioS: recorded.audioS,
    clips: recorded.clips,
    partials: recorded.events.filter((e) => e.kind === 'partial').length,
    lines: recorded.events.filter((e) => e.kind === 'line').length,
  };
}

/** The churn/delay table with its heading and the targets line, as printed. */
export function captionsText(bench: CaptionsBench): string {
  const { rows } = bench;
  const head = [
    `Captions benchmark · Node ${process.version} · ${cpus()[0]?.model ?? 'unknown'} × ${String(cpus().length)}`,
    `speech: pocketsphinx-testdata LibriVox, ${String(bench.clips)} clips, ${bench.audioS.toFixed(1)} s at 1x through the reference server (PocketSphinx); ${String(bench.partials)} partials, ${String(bench.lines)} lines`,
    `raw partial stream churn: ${rows[0]?.row.rawChurnPerMin.toFixed(0) ?? '?'} characters per minute of speech`,
    `layout defaults: ${String(CAPTION_DEFAULTS.maxLines)} lines × ${String(CAPTION_DEFAULTS.maxLineChars)} characters, ≤ ${String(CAPTION_DEFAULTS.maxCharsPerSecond)} characters/s, ${String(CAPTION_DEFAULTS.minDurationMs)}–${String(CAPTION_DEFAULTS.maxDurationMs)} ms`,
    '',
    '| setting | churn (chars/min) | churn removed | added delay p50 | p95 | cues | readable | final words = lines |',
    '|---|---:|---:|---:|---:|---:|---:|---|',
  ];
  const body = rows.map(({ label, row }) => `| ${label} | ${row.churnPerMin.toFixed(0)} | ${(row.removed * 100).toFixed(1)} % | ${row.delayP50Ms.toFixed(0)} ms | ${row.delayP95Ms.toFixed(0)} ms | ${String(row.cues)} | ${(row.readable * 100).toFixed(1)} % | ${row.exact ? 'yes' : 'NO'} |`);
  const defaults = rows[1]?.row;
  const targets = defaults === undefined ? [] : [
    '',
    `targets with the defaults: churn removed ≥ 80 %: ${(defaults.removed * 100).toFixed(1)} % ${defaults.removed >= 0.8 ? 'met' : 'NOT met'}; ` +
      `added delay p50 ≤ 500 ms: ${defaults.delayP50Ms.toFixed(0)} ms ${defaults.delayP50Ms <= 500 ? 'met' : 'NOT met'}; ` +
      `readable 100 %: ${(defaults.readable * 100).toFixed(1)} % ${defaults.readable === 1 ? 'met' : 'NOT met'}`,
  ];
  return [...head, ...body, ...targets, ''].join('\n');
}

/** bench/results/captions.md: the table of the latest run, from either command. */
export async function writeCaptionsResult(text: string, command: string): Promise<string> {
  await mkdir(RESULTS, { recursive: true });
  const file = `${RESULTS}captions.md`;
  await writeFile(file, `# Caption cues: churn and delay\n\n\`${command}\` (bench/src/lab/captions/). Not a timed test: numbers from one run on this machine.\n\n\`\`\`\n${text}\`\`\`\n`);
  return file;
}
