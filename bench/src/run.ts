import { cpus } from 'node:os';
import { allContenders } from './contenders/index.js';
import { ENCODE_SECTIONS, SECTIONS, USAGE, UsageError, parseArgs } from './cli.js';
import { collectPaths } from './collect/paths.js';
import { GC_WINDOW_CAP_MS } from './collect/stream-figures.js';
import { progress } from './collect/progress.js';
import { collectResamplers } from './collect/resamplers.js';
import { collectGarbage, stopWatchingGc, watchGc } from './measure/gc-window.js';
import type { BenchReport } from './results.js';
import { pathTable, resamplerTable } from './report/tables.js';
import { evaluateTargets, targetsTable } from './report/targets.js';
import { writeResults } from './report/write.js';
import { collectRealtime } from './lab/realtime/collect.js';
import { realtimeText } from './lab/realtime/tables.js';
import { recognizerText, runRecognizerBench } from './lab/recognizer.js';
import { captionsText, runCaptionsBench, writeCaptionsResult } from './lab/captions/bench.js';
import { runLongSessionSection, writeLongSessionResult } from './lab/long-session/section.js';
import { longSessionText } from './lab/long-session/table.js';
import { nodeDeathText, runNodeDeath, writeNodeDeathResult } from './lab/node-death/series.js';

/**
 * `pnpm bench`: every suite in one process, so the ratios the targets are stated in compare runs
 * made minutes apart on the same machine state. See bench/README.md for what each column means.
 */
async function main(): Promise<void> {
  const options = parseArgs(process.argv.slice(2));
  const exposeGc = collectGarbage();
  if (!exposeGc) progress('warning: run with node --expose-gc; GC counts may include earlier garbage and bytes per call are not measured');
  watchGc();
  const started = Date.now();

  const wantsResamplers = ['resample', 'stream', 'quality'].some((s) => options.sections.has(s as never));
  const contenders = allContenders().filter((c) => options.contenders.length === 0 || options.contenders.some((p) => c.id.startsWith(p)));
  const resamplers = wantsResamplers ? await collectResamplers(contenders, options) : [];
  const paths = await collectPaths(options);
  const targets = evaluateTargets(resamplers, paths);
  stopWatchingGc();
  const realtime = await collectRealtime(options);
  const recognizer = options.sections.has('recognizer') ? await runRecognizerBench({ quick: options.quick }) : undefined;
  if (options.sections.has('captions')) progress('captions: streaming the LibriVox clips at 1x through PocketSphinx…');
  const captions = options.sections.has('captions') ? await runCaptionsBench() : undefined;
  const longSession = options.sections.has('long-session') ? await runLongSessionSection(options) : undefined;
  if (options.sections.has('node-death')) progress('node death: 3 nodes with Redis behind haproxy, kill -9 series, rolling restart, sessions per core…');
  const nodeDeath = options.sections.has('node-death') ? nodeDeathText(await runNodeDeath({ kills: options.quick ? 3 : 20, rollingSessions: options.quick ? 5 : 20, quick: options.quick })) : undefined;

  const report: BenchReport = {
    meta: {
      date: new Date().toISOString(),
      node: process.version,
      v8: process.versions.v8,
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      exposeGc,
      suites: SECTIONS.filter((s) => options.sections.has(s)),
      durationS: (Date.now() - started) / 1000,
    },
    resamplers,
    paths,
    targets,
    ...(realtime !== undefined ? { realtime } : {}),
    ...(recognizer !== undefined ? { recognizer } : {}),
    ...(captions !== undefined ? { captions } : {}),
    ...(longSession !== undefined ? { longSession } : {}),
  };
  const text = render(report, options.minutes) + (nodeDeath !== undefined ? `\n${nodeDeath}` : '');
  process.stdout.write(`\n${text}\n`);
  if (options.write) {
    const written = await writeResults(report, text);
    if (captions !== undefined) written.push(await writeCaptionsResult(captionsText(captions), 'pnpm bench'));
    if (nodeDeath !== undefined) written.push(await writeNodeDeathResult(nodeDeath, 'pnpm bench'));
    progress(`wrote ${written.join(', ')}`);
  }
  // The long session's own record: written at its default length even from a partial run (it touches
  // only its own files), never from a shortened one unless asked.
  if (longSession !== undefined && (options.write || options.longMinutes === 60)) progress(`wrote ${(await writeLongSessionResult(longSession, longSessionText(longSession))).join(', ')}`);
}

function render(report: BenchReport, minutes: number): string {
  const { meta } = report;
  const encode = meta.suites.some((s) => (ENCODE_SECTIONS as readonly string[]).includes(s));
  const parts = [
    `${encode ? 'Encode path' : meta.suites.join(', ')} benchmark · ${meta.date} · Node ${meta.node} (V8 ${meta.v8}) · ${meta.cpu} × ${meta.cores} · ${meta.durationS.toFixed(0)} s`,
    ...(encode ? [`Streaming 128-sample mono blocks to 16 kHz; GCs over ${minutes} min of audio; quality on the float output. Shared VM: compare ratios within one run.`] : []),
  ];
  if (report.resamplers.length > 0) {
    parts.push('', resamplerTable(report.resamplers), '',
      `held back: out − floor(N·16000/fin) after the GC window's stream, "→" after flush(). ≈: GC count scaled to ${minutes} min from a window cut at ${GC_WINDOW_CAP_MS / 1000} s.`,
      'SNR: ours at zero delay; others aligned at their measured delay. latency: ours stated (half the filter); others measured delay + held back.');
  }
  if (report.paths.length > 0) parts.push('', pathTable(report.paths));
  // The targets are about the encode path: left out when only the realtime suites ran.
  if (encode) parts.push('', 'Targets (encode path):', targetsTable(report.targets));
  if (report.realtime !== undefined) parts.push('', realtimeText(report.realtime));
  if (report.recognizer !== undefined) parts.push('', recognizerText(report.recognizer));
  if (report.captions !== undefined) parts.push('', captionsText(report.captions).trimEnd());
  if (report.longSession !== undefined) parts.push('', longSessionText(report.longSession));
  return parts.join('\n');
}

main().catch((error: unknown) => {
  if (error instanceof UsageError) {
    if (error.message !== '') process.stderr.write(`${error.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exitCode = 1;
});
