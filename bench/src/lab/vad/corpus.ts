import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { mulberry32 } from '@soundclone/core/internal';
import { librivoxIds, testRecording } from '../testdata.js';

/**
 * The voice-gate corpus: utterances placed at known sample positions in silence, then noise added at a
 * known SNR. Everything is 16 kHz mono float.
 *
 * Sources, made once and cached under `$TMPDIR/soundclone-vad-corpus-v1/` (about 10 s the first time):
 * - espeak-ng: 30 sentences (onsets on vowels, nasals, plosives, fricatives; single words to long
 *   sentences) x 6 voices, speeds cycling 130/175/210 words per minute, resampled 22050 -> 16000 by sox;
 * - sox `synth whitenoise` and `synth pinknoise`, 60 s each;
 * - babble: six talkers, each a track of espeak sentences back to back in one voice (voices and sentence
 *   orders differ from talker to talker), summed with each track at its own offset: speech-shaped,
 *   speech-modulated noise, the hardest case for an energy detector;
 * - pocketsphinx-testdata's five LibriVox clips, split at their pauses into phrases, each placed six times.
 *
 * Ground truth: an utterance's onset is its first sample whose magnitude exceeds -50 dB re its peak
 * (espeak) or, for a recorded phrase, the start of the first 10 ms frame of its rising edge (see
 * `phrasesOf`); each source is trimmed to start there, so the onset is exactly where it is placed.
 */

export const CORPUS_RATE = 16000;
const CACHE = join(tmpdir(), 'soundclone-vad-corpus-v1');
const run = promisify(execFile);

const SENTENCES = [
  'Hello, can you hear me?',
  'Seven.',
  'Stop.',
  'She sells sea shells by the sea shore.',
  'Five fine fish swam past the fence.',
  'Thank you very much for calling.',
  'Please call Stella and ask her to bring these things with her from the store.',
  'Yes.',
  'How are you doing today?',
  'Few people think about the weather in August.',
  'Open the window, it is warm in here.',
  'My name is Nora, and I live near the station.',
  'Zero, one, two, three.',
  'Check the heater before you leave.',
  'Good morning everyone.',
  'Every evening the old man walks his dog along the river.',
  'Turn left at the second light.',
  'Hmm, I am not sure about that.',
  'Quickly, before the bus leaves!',
  'Some of the results were surprising.',
  'We need six more chairs for the meeting.',
  'Is it raining outside?',
  'Fine.',
  'Shall we begin?',
  'Under the bridge there is a small boat.',
  'Heavy rain is expected this afternoon.',
  'Perhaps tomorrow would be better.',
  'The invoice was sent on Friday.',
  'Listen carefully to the next instructions.',
  'All right, thanks.',
];

const VOICES = ['en-us', 'en-gb', 'en-us+f3', 'en-gb-scotland+f2', 'en-029+m3', 'en-gb-x-rp+f4'];
const SPEEDS = [130, 175, 210];

export interface Corpus {
  /** Trimmed clean utterances (onset at index 0), at their synthesized level. */
  readonly utterances: readonly Float32Array[];
  readonly phrases: readonly Float32Array[];
  readonly white: Float32Array;
  readonly pink: Float32Array;
  readonly babble: Float32Array;
  /** Seconds the sources took to make (0 when read from the cache). */
  readonly madeInSeconds: number;
}

export type NoiseKind = 'white' | 'pink' | 'babble';
export interface Condition {
  readonly id: string;
  readonly noise: NoiseKind | null;
  readonly snrDb: number;
}
export const CONDITIONS: readonly Condition[] = [
  { id: 'clean', noise: null, snrDb: Infinity },
  { id: 'white 20 dB', noise: 'white', snrDb: 20 },
  { id: 'white 10 dB', noise: 'white', snrDb: 10 },
  { id: 'pink 20 dB', noise: 'pink', snrDb: 20 },
  { id: 'pink 10 dB', noise: 'pink', snrDb: 10 },
  { id: 'babble 20 dB', noise: 'babble', snrDb: 20 },
  { id: 'babble 10 dB', noise: 'babble', snrDb: 10 },
];

/** One stream to gate: its samples and where each utterance lies. */
export interface Stream {
  readonly id: string;
  readonly samples: Float32Array;
  /** [onset, end) of every utterance, in samples, ascending. */
  readonly utterances: readonly (readonly [number, number])[];
}

async function pool<T>(items: readonly T[], width: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) {
      const i = next++;
      await work(items[i] as T, i);
    }
  }));
}

function readRaw(file: string): Float32Array {
  const bytes = readFileSync(file);
  const pcm = new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength >> 1);
  const out = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = (pcm[i]) / 32768;
  return out;
}

async function espeak(text: string, voice: string, speed: number, file: string): Promise<void> {
  const wav = `${file}.wav`;
  await run('espeak-ng', ['-v', voice, '-s', String(speed), '-w', wav, text]);
  await run('sox', [wav, '-r', String(CORPUS_RATE), '-b', '16', '-e', 'signed-integer', '-t', 'raw', file]);
}

/** Makes the cached sources that are missing; returns the seconds it took. */
async function ensureSources(): Promise<number> {
  const done = join(CACHE, 'complete');
  if (existsSync(done)) return 0;
  const started = performance.now();
  mkdirSync(join(CACHE, 'utt'), { recursive: true });
  const jobs: { text: string; voice: string; speed: number; file: string }[] = [];
  SENTENCES.forEach((text, s) => VOICES.forEach((voice, v) => {
    const speed = SPEEDS[(s + v) % SPEEDS.length];
    jobs.push({ text, voice, speed, file: join(CACHE, 'utt', `${String(s).padStart(2, '0')}-${v}.raw`) });
  }));
  await pool(jobs, 4, (j) => espeak(j.text, j.voice, j.speed, j.file));
  for (const kind of ['white', 'pink'] as const) {
    await run('sox', ['-n', '-r', String(CORPUS_RATE), '-b', '16', '-e', 'signed-integer', '-t', 'raw', join(CACHE, `${kind}.raw`),
      'synth', '60', `${kind}noise`, 'vol', '0.5']);
  }
  writeFileSync(done, 'v1\n');
  return (performance.now() - started) / 1000;
}

/** Trims an espeak utterance to [first, last] sample above -50 dB re its peak. */
function trimmed(x: Float32Array): Float32Array {
  let peak = 0;
  for (const v of x) peak = Math.max(peak, Math.abs(v));
  const floor = peak * 10 ** (-50 / 20);
  let a = 0;
  while (a < x.length && Math.abs(x[a]) <= floor) a++;
  let b = x.length;
  while (b > a && Math.abs(x[b - 1]) <= floor) b--;
  return x.slice(a, b);
}

const FRAME = CORPUS_RATE / 100;
function frameDb(x: Float32Array): Float64Array {
  const n = Math.floor(x.length / FRAME);
  const out = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let s = 0;
    for (let i = f * FRAME; i < (f + 1) * FRAME; i++) s += (x[i]) ** 2;
    out[f] = 10 * Math.log10(s / FRAME + 1e-20);
  }
  return out;
}

/**
 * A recording's phrases: frames more than 12 dB above the recording's floor (its 10th percentile frame)
 * are speech; a phrase starts at the first frame of its rising edge (walking back while frames stay
 * 3 dB above the floor) and ends after the last speech frame before a pause of 200 ms or more.
 */
export function phrasesOf(x: Float32Array): Float32Array[] {
  const db = frameDb(x);
  const sorted = Float64Array.from(db).sort();
  const floor = sorted[Math.floor(sorted.length * 0.1)];
  const out: Float32Array[] = [];
  let f = 0;
  let previousEnd = 0;
  while (f < db.length) {
    if ((db[f]) < floor + 12) { f++; continue; }
    let start = f;
    while (start > previousEnd && (db[start - 1]) > floor + 3) start--;
    let last = f;
    let g = f;
    while (g < db.length && g - last < 20) { if ((db[g]) >= floor + 12) last = g; g++; }
    out.push(x.slice(start * FRAME, (last + 1) * FRAME));
    previousEnd = last + 1;
    f = g;
  }
  return out;
}

function rms(x: Float32Array): number {
  let s = 0;
  for (const v of x) s += v * v;
  return Math.sqrt(s / Math.max(1, x.length));
}

/** Active speech level: RMS over the 10 ms frames within 30 dB of the loudest. */
export function activeRms(x: Float32Array): number {
  const db = frameDb(x);
  let max = -Infinity;
  for (const v of db) max = Math.max(max, v);
  let s = 0;
  let n = 0;
  db.forEach((v, f) => { if (v > max - 30) { s += 10 ** (v / 10); n++; } });
  return Math.sqrt(s / Math.max(1, n));
}

function babbleOf(utterances: readonly Float32Array[], seconds: number): Float32Array {
  const out = new Float32Array(seconds * CORPUS_RATE);
  const random = mulberry32(7);
  for (let talker = 0; talker < 6; talker++) {
    let at = Math.floor(random() * CORPUS_RATE);
    while (at < out.length) {
      const s = Math.floor(random() * SENTENCES.length);
      const u = utterances[s * VOICES.length + ((talker + s) % VOICES.length)] as Float32Array;
      const gain = 0.1 / Math.max(1e-6, activeRms(u));
      for (let i = 0; i < u.length && at + i < out.length; i++) out[at + i] = (out[at + i]) + (u[i]) * gain;
      at += u.length + Math.floor(random() * 0.15 * CORPUS_RATE);
    }
  }
  return out;
}

export async function loadCorpus(): Promise<Corpus> {
  const madeInSeconds = await ensureSources();
  const files = readdirSync(join(CACHE, 'utt')).filter((f) => f.endsWith('.raw')).sort();
  const utterances = files.map((f) => trimmed(readRaw(join(CACHE, 'utt', f))));
  const phrases = librivoxIds().flatMap((id) => {
    const pcm = testRecording(`librivox/${id}`);
    const x = new Float32Array(pcm.length);
    for (let i = 0; i < pcm.length; i++) x[i] = (pcm[i]) / 32768;
    return phrasesOf(x);
  });
  return {
    utterances,
    phrases,
    white: readRaw(join(CACHE, 'white.raw')),
    pink: readRaw(join(CACHE, 'pink.raw')),
    babble: babbleOf(utterances, 60),
    madeInSeconds,
  };
}

export type StreamKind = 'espeak' | 'espeak quiet' | 'librivox';

/**
 * One stream: 2 s of silence, then the sources one after another, each scaled to its level and followed
 * by 1.5-3.5 s of silence (seeded), so that more than half the stream is silence; then noise scaled to
 * `level - snr` over the whole stream. Levels: `espeak` -24 dBFS active level,
 * `espeak quiet` -35 dBFS (every third utterance), `librivox` -26 dBFS.
 */
export function makeStream(corpus: Corpus, kind: StreamKind, condition: Condition): Stream {
  const random = mulberry32(kind === 'espeak' ? 1 : kind === 'espeak quiet' ? 2 : 3);
  // The five clips hold few pauses, so their phrases are placed six times over (each time in other noise).
  const sources = kind === 'librivox' ? Array.from({ length: 6 }, () => corpus.phrases).flat() : kind === 'espeak quiet' ? corpus.utterances.filter((_, i) => i % 3 === 0) : corpus.utterances;
  const placed: { at: number; x: Float32Array; gain: number }[] = [];
  let at = 2 * CORPUS_RATE;
  let referenceLevel = 0;
  for (const x of sources) {
    const levelDb = kind === 'espeak' ? -24 : kind === 'espeak quiet' ? -35 : -26;
    const gain = 10 ** (levelDb / 20) / Math.max(1e-9, activeRms(x));
    referenceLevel = 10 ** (levelDb / 20);
    placed.push({ at, x, gain });
    at += x.length + Math.floor((1.5 + 2 * random()) * CORPUS_RATE);
  }
  const samples = new Float32Array(at);
  for (const p of placed) for (let i = 0; i < p.x.length; i++) samples[p.at + i] = (p.x[i]) * p.gain;
  if (condition.noise !== null) {
    const noise = corpus[condition.noise];
    const gain = referenceLevel / 10 ** (condition.snrDb / 20) / rms(noise);
    const offset = Math.floor(random() * noise.length);
    for (let i = 0; i < samples.length; i++) samples[i] = (samples[i]) + (noise[(offset + i) % noise.length]) * gain;
  }
  return { id: `${kind} / ${condition.id}`, samples, utterances: placed.map((p) => [p.at, p.at + p.x.length] as const) };
}
