import type { SupplementKind } from '@soundclone/server';
import { TestingError } from '../errors.js';
import { toSamples, type AudioTime } from './time.js';

/** How long each word of a line lasts when the entry gives no `duration`. */
export const DEFAULT_WORD_MS = 300;

/**
 * What the service sends for a line's supplements. `language` is the line's detected language
 * (ISO 639-1, as realtime lines carry it; default 'en'); `delayMs` holds a supplement back that long
 * after the line; `withhold` never sends it (the finish then reports SUPPLEMENT_NOT_RECEIVED).
 */
export interface ScriptSupplements {
  readonly language?: string | null;
  readonly languageProbability?: number;
  readonly delayMs?: Partial<Readonly<Record<SupplementKind, number>>>;
  readonly withhold?: readonly SupplementKind[];
}

/**
 * One line of scripted speech: `say` is spoken from `at` (a position in the session's received
 * audio) for `duration` (default 300 ms a word), words evenly spread over it.
 */
export interface ScriptLine {
  readonly at: AudioTime;
  readonly say: string;
  readonly duration?: AudioTime;
  /** 0-based speaker (default 0). */
  readonly speaker?: number;
  readonly supplements?: ScriptSupplements;
}

export type SpeechScript = readonly ScriptLine[];

/** A word placed in samples: [start, end). */
export interface PlacedWord {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

/** A script line placed in samples, checked. */
export interface PlacedLine {
  readonly index: number;
  readonly start: number;
  readonly end: number;
  readonly words: readonly PlacedWord[];
  readonly speaker: number;
  readonly language: string | null;
  readonly languageProbability: number | null;
  readonly supplements: ScriptSupplements;
}

/**
 * Places every line in samples and checks the script: text with at least one word, lines in order
 * and not overlapping (one voice at a time, as the realtime recognizer hears it). Throws
 * TestingError TESTING_INVALID_SCRIPT naming the entry.
 */
export function placeScript(script: SpeechScript): PlacedLine[] {
  if (!Array.isArray(script)) throw new TestingError('TESTING_INVALID_SCRIPT', 'a speech script is an array of { at, say } entries');
  const placed: PlacedLine[] = [];
  let previousEnd = 0;
  script.forEach((entry, index) => {
    const where = `script[${index}]`;
    if (entry === null || typeof entry !== 'object') throw new TestingError('TESTING_INVALID_SCRIPT', `${where}: expected { at, say }`);
    const text: string[] = typeof entry.say === 'string' ? entry.say.trim().split(/\s+/).filter((w: string) => w !== '') : [];
    if (text.length === 0) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.say: at least one word`);
    const start = toSamples(entry.at, `${where}.at`);
    const length = entry.duration === undefined ? toSamples(`${DEFAULT_WORD_MS * text.length}ms`, `${where}.duration`) : toSamples(entry.duration, `${where}.duration`);
    if (length < text.length) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.duration: at least one sample a word`);
    if (start < previousEnd) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.at: starts at sample ${start}, before the previous line ends (sample ${previousEnd}); lines are in order and do not overlap`);
    const speaker = entry.speaker ?? 0;
    if (!Number.isSafeInteger(speaker) || speaker < 0) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.speaker: a whole number of at least 0`);
    const supplements = entry.supplements ?? {};
    const probability = supplements.languageProbability ?? 0.9;
    if (!(probability >= 0 && probability <= 1)) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.supplements.languageProbability: between 0 and 1`);
    for (const [kind, ms] of Object.entries(supplements.delayMs ?? {})) {
      if (!Number.isFinite(ms) || (ms as number) < 0) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.supplements.delayMs.${kind}: milliseconds, at least 0`);
    }
    const words = text.map((word, i) => ({
      text: word,
      start: start + Math.floor((length * i) / text.length),
      end: start + Math.floor((length * (i + 1)) / text.length),
    }));
    const language = supplements.language === undefined ? 'en' : supplements.language;
    placed.push({ index, start, end: start + length, words, speaker, language, languageProbability: language === null ? null : probability, supplements });
    previousEnd = start + length;
  });
  return placed;
}

/** The sample where the script's last line ends (0 for an empty script). */
export function scriptEnd(lines: readonly PlacedLine[]): number {
  return lines.length === 0 ? 0 : (lines[lines.length - 1] as PlacedLine).end;
}
