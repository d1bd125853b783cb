import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Real recorded speech for the recognition tests: the LibriVox clips and the spoken card commands that
 * Debian's pocketsphinx-testdata ships with their transcriptions. scripts/setup.sh installs it (and
 * PocketSphinx itself); a missing package fails the tests with the command that fixes it.
 */
export const TESTDATA = '/usr/share/pocketsphinx/test/data';

export interface Clip {
  readonly id: string;
  readonly path: string;
  /** The reference words, lower case. */
  readonly words: readonly string[];
}

function requireFile(path: string, pkg: string): void {
  if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package ${pkg} (npm run setup does)`);
}

/** Transcription files: `<s> words </s> (id)` per line. */
function readTranscription(file: string, dir: string): Clip[] {
  requireFile(file, 'pocketsphinx-testdata');
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((line) => /^(.*)\(([^)]+)\)\s*$/.exec(line.trim()))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ id: m[2] as string, path: join(dir, `${m[2] as string}.wav`), words: normalize(m[1] as string) }));
}

export function librivox(): Clip[] {
  const dir = join(TESTDATA, 'librivox');
  return readTranscription(join(dir, 'transcription'), dir);
}

export function cards(): Clip[] {
  const dir = join(TESTDATA, 'cards');
  return readTranscription(join(dir, 'cards.transcription'), dir);
}

/** Lower case words without sentence markers or punctuation (the same rule for reference and hypothesis). */
export function normalize(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/<\/?s>/g, ' ')
    .replace(/[^a-z' ]+/g, ' ')
    .split(/\s+/)
    .filter((w) => w !== '');
}

/** Word error rate: (substitutions + deletions + insertions) / reference words, by edit distance. */
export function wordErrors(reference: readonly string[], hypothesis: readonly string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = (previous[j - 1] as number) + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution));
    }
    previous = current;
  }
  return previous[hypothesis.length] as number;
}

/** Prints a measured figure to the test log, where CI keeps it. */
export function report(label: string, rate: number, hypothesis: readonly string[]): void {
  process.stdout.write(`[recognition] ${label} WER ${rate.toFixed(3)}: ${hypothesis.join(' ')}\n`);
}

export function wer(pairs: ReadonlyArray<{ reference: readonly string[]; hypothesis: readonly string[] }>): number {
  const errors = pairs.reduce((n, p) => n + wordErrors(p.reference, p.hypothesis), 0);
  const words = pairs.reduce((n, p) => n + p.reference.length, 0);
  return errors / words;
}

/**
 * The clips joined and resampled up to `rate` by sox (an independent resampler, so the SDK's own
 * downsampler is what brings the audio back to 16 kHz), as Float32 samples.
 */
export function joinedAt(clips: readonly Clip[], rate: number): Float32Array {
  try {
    execFileSync('sox', ['--version'], { stdio: 'ignore' });
  } catch {
    throw new Error('sox is missing: install the Debian package sox (npm run setup does)');
  }
  const raw = execFileSync('sox', ['-G', ...clips.map((c) => c.path), '-t', 'raw', '-e', 'floating-point', '-b', '32', '-r', String(rate), '-c', '1', '-'], { maxBuffer: 256 * 1024 * 1024 });
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
}

/** Sends Float32 audio in `blockMs` blocks, yielding now and then (faster than real time). */
export async function writeBlocks(session: { write(block: Float32Array): number }, audio: Float32Array, rate: number, blockMs = 20): Promise<void> {
  const block = Math.round((rate * blockMs) / 1000);
  let blocks = 0;
  for (let at = 0; at < audio.length; at += block) {
    session.write(audio.subarray(at, Math.min(audio.length, at + block)));
    if (++blocks % 10 === 0) await new Promise((resolve) => setTimeout(resolve, 1));
  }
}
