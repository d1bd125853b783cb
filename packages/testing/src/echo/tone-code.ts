import { TestingError } from '../errors.js';

/**
 * The tone code of echo mode, shared by the speaker (echo-audio.ts) and the listener
 * (echo-recognizer.ts). A word is spelled: each character a tone of its own frequency, 60 ms long,
 * 40 ms of silence after it; words are 200 ms apart; a line ends with at least 500 ms of silence.
 *
 * The listener reads 20 ms blocks at fixed positions (every 320 samples from the stream's start), so
 * what it hears never depends on how the audio was framed. The lengths are chosen so that whatever
 * small delay a resampler adds, a letter still fills two whole blocks, the gap after it one, and the
 * silences between letters, words and lines stay apart in whole blocks:
 *
 *   letter gap   1-2 silent blocks     (40 ms of silence)
 *   word gap     4+ silent blocks      (200 ms: 9 or more)
 *   line end     20+ silent blocks     (500 ms: 24 or more)
 *
 * Frequencies are 100 Hz apart from 400 Hz to 4 kHz: inside what the SDK's 48 kHz → 16 kHz path keeps,
 * and four bins of a 20 ms block apart.
 */
export const ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789'";

export const TONE = {
  /** Samples per analysis block (20 ms at 16 kHz). */
  blockSamples: 320,
  letterMs: 60,
  letterGapMs: 40,
  wordGapMs: 200,
  /** The least silence after a line: the listener commits it from 400 ms on. */
  lineGapMs: 500,
  /** Silent blocks from which a word has ended, and a line. */
  wordEndBlocks: 4,
  lineEndBlocks: 20,
  /** Peak level of a tone (of full scale), and the block RMS from which a block counts as sound. */
  level: 0.3,
  soundRms: 1_000,
} as const;

/** The frequency (Hz) of the character at `index` in ALPHABET. */
export function toneHz(index: number): number {
  return 400 + 100 * index;
}

/** A script's words as echo can speak them: lower-cased, every character in ALPHABET; `where` names the entry. */
export function spell(text: string, where: string): string[] {
  const words = text.trim().toLowerCase().split(/\s+/).filter((w) => w !== '');
  if (words.length === 0) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}: at least one word`);
  for (const word of words) {
    for (const char of word) {
      if (!ALPHABET.includes(char)) throw new TestingError('TESTING_INVALID_SCRIPT', `${where}: echo speaks letters, digits and ' only (got ${JSON.stringify(char)} in ${JSON.stringify(word)})`);
    }
  }
  return words;
}

/** How long a spoken word lasts, in ms (its letters and the gaps between them, not the one after). */
export function wordMs(word: string): number {
  return word.length * (TONE.letterMs + TONE.letterGapMs) - TONE.letterGapMs;
}
