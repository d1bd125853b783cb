import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { VOICE_GATE_DEFAULTS, VoiceGate, type VoiceDetector } from '@soundclone/core/internal';
import { bytesPerCall } from '../../measure/alloc-probe.js';
import { gcWindow } from '../../measure/gc-window.js';
import { CONDITIONS, CORPUS_RATE, loadCorpus, makeStream, type Stream, type StreamKind } from './corpus.js';
import { ENGINES, type Engine } from './engines.js';
import { blocksOf, BLOCK, scoreStream, type StreamScore } from './evaluate.js';
import { bundleSizes } from './bundle.js';
import { gatedWer } from './wer.js';

/**
 * `pnpm bench:vad`: the voice gate's figures per engine and condition (corpus.ts says what the streams
 * hold, evaluate.ts how each figure is counted). Run under --expose-gc for the GC and bytes-per-call
 * columns. `--write` (default) puts the tables in bench/results/vad.md; `--no-write` leaves it alone.
 * `--engines energy,webrtc` picks engines by id prefix.
 */
const PRE_ROLLS: readonly number[] = [100, 200, 300, 400, 500];
/** The gate's default pre-roll, where the single-valued columns are read. */
const DEFAULT_PRE_ROLL = VOICE_GATE_DEFAULTS.preRollMs;
const AT = PRE_ROLLS.indexOf(DEFAULT_PRE_ROLL);
const PRE_ROLL_LABEL = 'a/b/c/d/e';
/** Hangovers compared at the default pre-roll in the last table. */
const HANGOVERS = [200, 300, 400] as const;
const HANGOVER_MS = VOICE_GATE_DEFAULTS.hangoverMs;
const COMMIT_AFTER_MS = VOICE_GATE_DEFAULTS.commitAfterMs;
const KINDS: readonly StreamKind[] = ['espeak', 'espeak quiet', 'librivox'];
/** Ten minutes of 16 kHz audio in 128-sample blocks. */
const GC_BLOCKS = (10 * 60 * CORPUS_RATE) / BLOCK;

const USAGE = `usage: node --expose-gc bench/dist/lab/vad/run.js [--engines id,…] [--write | --no-write]`;

function parse(argv: readonly string[]): { write: boolean; engines: readonly Engine[] } {
  let write = true;
  let engines = ENGINES;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--') continue;
    if (arg === '--no-write') write = false;
    else if (arg === '--write') write = true;
    else if (arg === '--engines' && argv[i + 1] !== undefined) {
      const prefixes = (argv[++i] as string).split(',');
      engines = ENGINES.filter((e) => prefixes.some((p) => e.id.startsWith(p)));
    } else {
      process.stdout.write(`${USAGE}\n`);
      process.exit(arg === '--help' || arg === '-h' ? 0 : 2);
    }
  }
  return { write, engines };
}

const pct = (x: number): string => (100 * x).toFixed(x >= 0.9995 || x === 0 ? 0 : 1);

interface Row { readonly stream: Stream; readonly scores: readonly StreamScore[] }

/**
 * The ground truth as an engine: a frame is speech when it overlaps an utterance. Its row is the floor
 * the gate's settings alone impose (pre-roll, hangover, 10 ms frames) on samples sent, whatever the engine.
 */
class OracleDetector implements VoiceDetector {
  readonly frameLength = CORPUS_RATE / 100;
  readonly #truth: Uint8Array;
  #at = 0;
  constructor(stream: Stream) {
    this.#truth = new Uint8Array(stream.samples.length);
    for (const [from, to] of stream.utterances) this.#truth.fill(1, from, to);
  }
  isSpeech(): boolean {
    const at = this.#at;
    this.#at += this.frameLength;
    return this.#truth.subarray(at, at + this.frameLength).includes(1);
  }
  reset(): void { this.#at = 0; }
}
const ORACLE = 'oracle (the truth)';

/**
 * CPU, bytes per call and GCs of one gate on one stream. The stream is run through once first: V8
 * optimizes the gate only after it has seen every branch (the first pass through a branch never taken
 * runs unoptimized code, which boxes numbers), so the figures are the steady state's.
 */
async function costOf(engine: Engine | null, blocks: readonly Float32Array[]): Promise<{ usPerBlock: number; gcs: number | null; bytes: number | null }> {
  if (engine === null) return { usPerBlock: 0, gcs: 0, bytes: 0 };
  const gate = new VoiceGate({ sampleRate: CORPUS_RATE, detector: engine.make(CORPUS_RATE), preRollMs: DEFAULT_PRE_ROLL, hangoverMs: HANGOVER_MS, commitAfterMs: COMMIT_AFTER_MS });
  for (let i = 0; i < blocks.length; i++) gate.process(blocks[i]!);
  let best = Infinity;
  const count = Math.min(blocks.length, 20000);
  for (let round = 0; round < 3; round++) {
    const before = process.cpuUsage();
    for (let i = 0; i < count; i++) gate.process(blocks[i]!);
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / count);
  }
  let k = 0;
  const step = (): void => { gate.process(blocks[k]!); k = k + 1 === blocks.length ? 0 : k + 1; };
  const bytes = bytesPerCall(step);
  const window = await gcWindow({ id: engine.id, label: engine.id, samplesPerStep: BLOCK, inputRate: CORPUS_RATE, step }, GC_BLOCKS, 30000);
  const gcs = (globalThis as { gc?: unknown }).gc === undefined ? null : window.gcs * (GC_BLOCKS / window.steps);
  return { usPerBlock: best, gcs, bytes };
}

async function main(): Promise<void> {
  const { write, engines } = parse(process.argv.slice(2));
  const started = performance.now();
  const corpus = await loadCorpus();
  process.stderr.write(`vad: corpus ${corpus.madeInSeconds > 0 ? `made in ${corpus.madeInSeconds.toFixed(1)} s` : 'from the cache'}: ${corpus.utterances.length} espeak utterances, ${corpus.phrases.length} LibriVox phrases\n`);
  const lines: string[] = [];
  const out = (s = ''): void => { lines.push(s); };
  const summary: string[][] = [];
  const targets: string[] = [];
  const candidates: (Engine | null)[] = [null, { id: ORACLE, make: () => { throw new Error('the oracle needs its stream'); } }, ...engines];
  let cpuBlocks: Float32Array[] = [];
  const streams: { stream: Stream; blocks: Float32Array[] }[] = [];
  for (const kind of KINDS) for (const condition of CONDITIONS) {
    const stream = makeStream(corpus, kind, condition);
    const blocks = blocksOf(stream.samples);
    streams.push({ stream, blocks });
    if (kind === 'espeak' && condition.id === 'white 10 dB') cpuBlocks = blocks;
  }
  const seconds = streams.reduce((s, x) => s + x.stream.samples.length, 0) / CORPUS_RATE;
  out(`Corpus: ${streams.length} streams, ${(seconds / 60).toFixed(1)} audio minutes at 16 kHz; each stream ${pct(scoreStream(streams[0]!.stream, streams[0]!.blocks, null, { preRollMs: 0, hangoverMs: 0, commitAfterMs: 0 }).silence)} % silence or more.`);
  out(`Gate: 128-sample blocks, hangover ${HANGOVER_MS} ms, commit after ${COMMIT_AFTER_MS} ms; pre-roll ${PRE_ROLLS.join('/')} ms in the ${PRE_ROLL_LABEL} columns.`);
  out(`"complete": every sample of [onset - 200 ms, onset + 200 ms) sent; "missed": no sample of the utterance sent; "speech sent": share of the utterances' samples sent.`);
  out();
  for (const engine of candidates) {
    const id = engine?.id ?? 'gate off';
    process.stderr.write(`vad: ${id}…\n`);
    const rows: Row[] = streams.map(({ stream, blocks }) => ({
      stream,
      scores: PRE_ROLLS.map((preRollMs) => scoreStream(stream, blocks,
        engine === null ? null : engine.id === ORACLE ? new OracleDetector(stream) : engine.make(CORPUS_RATE),
        { preRollMs, hangoverMs: HANGOVER_MS, commitAfterMs: COMMIT_AFTER_MS })),
    }));
    out(`### ${id}`);
    out();
    out(`| stream / condition | utterances | complete % ${PRE_ROLL_LABEL} | missed ${PRE_ROLL_LABEL} | speech sent % (${DEFAULT_PRE_ROLL} ms) | samples sent % ${PRE_ROLL_LABEL} |`);
    out('|---|---:|---|---|---:|---|');
    for (const { stream, scores } of rows) {
      out(`| ${stream.id} | ${scores[0]!.utterances} | ${scores.map((s) => pct(s.complete / s.utterances)).join(' / ')} | ${scores.map((s) => s.missed).join(' / ')} | ${pct(scores[AT]!.speechSent)} | ${scores.map((s) => pct(s.sent)).join(' / ')} |`);
    }
    out();
    const cpu = engine?.id === ORACLE ? { usPerBlock: NaN, gcs: null, bytes: null } : await costOf(engine, cpuBlocks);
    const gcs = cpu.gcs;
    const worst = (pred: (s: Stream) => boolean, p: number): string => {
      const picked = rows.filter((r) => pred(r.stream));
      return pct(Math.min(...picked.map((r) => r.scores[p]!.complete / r.scores[p]!.utterances)));
    };
    const noisy = (snr: string) => (s: Stream): boolean => s.id.endsWith(snr);
    const missedAtOrAbove10 = rows.reduce((m, r) => m + r.scores[AT]!.missed, 0);
    const sentShare = (pred: (s: Stream) => boolean): string => {
      const picked = rows.filter((r) => pred(r.stream));
      return pct(picked.reduce((m, r) => m + r.scores[AT]!.sent * r.stream.samples.length, 0) / picked.reduce((m, r) => m + r.stream.samples.length, 0));
    };
    const worstAt = (snr: string): number => Math.min(...rows.filter((r) => r.stream.id.endsWith(snr)).map((r) => r.scores[AT]!.complete / r.scores[AT]!.utterances));
    const share = (babble: boolean): number => {
      const picked = rows.filter((r) => r.stream.id.includes('babble') === babble);
      return picked.reduce((m, r) => m + r.scores[AT]!.sent * r.stream.samples.length, 0) / picked.reduce((m, r) => m + r.stream.samples.length, 0);
    };
    if (engine !== null && engine.id.startsWith('energy')) {
      const mark = (ok: boolean): string => (ok ? 'PASS' : 'MISS');
      targets.push(
        `- onset complete >= 99.5 % at 20 dB: ${pct(worstAt('20 dB'))} % (worst stream) ${mark(worstAt('20 dB') >= 0.995)}`,
        `- onset complete >= 99.5 % at 10 dB: ${pct(worstAt('10 dB'))} % (worst stream) ${mark(worstAt('10 dB') >= 0.995)}`,
        `- no utterance missed whole: ${missedAtOrAbove10} ${mark(missedAtOrAbove10 === 0)}`,
        `- samples sent at least 40 % fewer than ungated: ${pct(share(false))} % sent without babble ${mark(share(false) <= 0.6)}, ${pct(share(true))} % in babble ${mark(share(true) <= 0.6)}`,
        `- 0 GCs in 10 minutes: ${gcs === null ? 'n/a' : Math.round(gcs)} ${gcs === null ? '' : mark(Math.round(gcs) === 0)}`,
      );
    }
    summary.push([
      id,
      PRE_ROLLS.map((_, p) => worst((s) => s.id.endsWith('clean'), p)).join(' / '),
      PRE_ROLLS.map((_, p) => worst(noisy('20 dB'), p)).join(' / '),
      PRE_ROLLS.map((_, p) => worst(noisy('10 dB'), p)).join(' / '),
      String(missedAtOrAbove10),
      sentShare((s) => !s.id.includes('babble')),
      sentShare((s) => s.id.includes('babble')),
      engine === null ? '0' : Number.isNaN(cpu.usPerBlock) ? 'n/a' : cpu.usPerBlock.toFixed(2),
      gcs === null ? 'n/a' : String(Math.round(gcs)),
      cpu.bytes === null ? 'n/a' : cpu.bytes.toFixed(0),
    ]);
  }
  // Hangover: what a shorter one saves and what it cuts, at the default pre-roll, rooms without babble.
  const hangoverRows: string[] = [];
  for (const engine of candidates.filter((e): e is Engine => e !== null && (e.id === ORACLE || e.id.startsWith('energy')))) {
    process.stderr.write(`vad: hangover sweep, ${engine.id}…\n`);
    for (const hangoverMs of HANGOVERS) {
      let sent = 0, all = 0, speech = 0, speechSent = 0, complete = 0, utterances = 0;
      for (const { stream, blocks } of streams.filter((s) => !s.stream.id.includes('babble'))) {
        const detector = engine.id === ORACLE ? new OracleDetector(stream) : engine.make(CORPUS_RATE);
        const score = scoreStream(stream, blocks, detector, { preRollMs: DEFAULT_PRE_ROLL, hangoverMs, commitAfterMs: Math.max(COMMIT_AFTER_MS, hangoverMs) });
        sent += score.sent * blocks.length * BLOCK;
        all += blocks.length * BLOCK;
        speech += score.speechSamples;
        speechSent += score.speechSent * score.speechSamples;
        complete += score.complete;
        utterances += score.utterances;
      }
      hangoverRows.push(`| ${engine.id} | ${hangoverMs} | ${pct(complete / utterances)} | ${pct(speechSent / speech)} | ${pct(sent / all)} |`);
    }
  }
  lines.push('### hangover', '', `Pre-roll ${DEFAULT_PRE_ROLL} ms; every stream but babble's.`, '',
    '| engine | hangover ms | complete % | speech sent % | samples sent % |', '|---|---:|---:|---:|---:|', ...hangoverRows, '');
  const sizes = await bundleSizes();
  // WER gated minus ungated: PocketSphinx through the reference server, the session's gate at its defaults.
  const wer = await gatedWer((text) => process.stderr.write(`${text}\n`));
  const werPoints = 100 * (wer.gated - wer.ungated);
  const werTable = [
    '## WER, gated vs ungated',
    '',
    `PocketSphinx through the reference server: pocketsphinx-testdata's ${wer.clips} LibriVox clips (${wer.words} words), each split at its pauses with 2 s of silence inserted between phrases (${wer.audioSeconds.toFixed(1)} s of audio), sent ungated and with \`gate: true\` (defaults); each run's lines against the clip's transcription.`,
    '',
    '| session | WER % | samples saved % |',
    '|---|---:|---:|',
    `| gate off | ${(100 * wer.ungated).toFixed(1)} | 0 |`,
    `| gate on (energy, defaults) | ${(100 * wer.gated).toFixed(1)} | ${(100 * wer.savedShare).toFixed(1)} |`,
    '',
  ];
  targets.push(`- WER gated minus ungated <= 0.5 points: ${werPoints >= 0 ? '+' : ''}${werPoints.toFixed(2)} points ${werPoints <= 0.5 ? 'PASS' : 'MISS'}`);
  const head = [
    '## Summary',
    '',
    `Worst stream per column (espeak, espeak quiet at -35 dBFS, LibriVox; white, pink and babble noise). Pre-roll ${PRE_ROLL_LABEL} = ${PRE_ROLLS.join('/')} ms.`,
    '',
    `| engine | complete % clean ${PRE_ROLL_LABEL} | complete % 20 dB (worst) | complete % 10 dB (worst) | missed whole (all streams, ${DEFAULT_PRE_ROLL} ms) | samples sent % clean, white, pink (${DEFAULT_PRE_ROLL} ms) | samples sent % babble (${DEFAULT_PRE_ROLL} ms) | CPU µs / 128 | GCs / 10 min | B / call |`,
    '|---|---|---|---|---:|---:|---:|---:|---:|---:|',
    ...summary.map((r) => `| ${r.join(' | ')} |`),
    '',
    `Bundle (esbuild, minified, gzip -9): ${sizes.map((s) => `${s.id} ${(s.gzip / 1024).toFixed(1)} KB (${(s.minified / 1024).toFixed(1)} KB min)`).join('; ')}.`,
    '',
    `Targets, the default engine at the default pre-roll (${DEFAULT_PRE_ROLL} ms), hangover ${HANGOVER_MS} ms:`,
    '',
    ...targets,
    `- bundle <= 25 KB min+gz: ${(sizes[0]!.gzip / 1024).toFixed(1)} KB ${sizes[0]!.gzip <= 25 * 1024 ? 'PASS' : 'MISS'}`,
    '',
  ];
  const text = `# Voice gate (pnpm bench:vad)\n\n${[...head, ...werTable, ...lines].join('\n')}\n`;
  process.stdout.write(text);
  process.stderr.write(`vad: ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
  if (write) {
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'results', 'vad.md');
    writeFileSync(file, text);
    process.stderr.write(`vad: wrote ${file}\n`);
  }
}

await main();
