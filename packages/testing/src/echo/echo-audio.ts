import { TestingError } from '../errors.js';
import type { SpeechScript } from '../speech/script.js';
import { SAMPLE_RATE, toSamples, type AudioTime } from '../speech/time.js';
import { ALPHABET, spell, TONE, toneHz, wordMs } from './tone-code.js';

export interface EchoAudioOptions {
  /** Samples per second of the audio made (default 16,000): a capture rate such as 48,000 goes through the SDK's resampler. */
  readonly sampleRate?: number;
  /** Silence after the last line (default 600 ms, more than a line end, so the last line is committed before a finish). */
  readonly tail?: AudioTime;
}

/** A line of echo speech placed in milliseconds. */
export interface EchoLine {
  readonly startMs: number;
  readonly endMs: number;
  readonly words: readonly string[];
}

/**
 * Places a script for echo: each line starts at its `at` (durations come from the spelling, so a
 * `duration` is not used) and must leave a line end of silence before the next. Throws TestingError
 * TESTING_INVALID_SCRIPT naming the entry.
 */
export function placeEcho(script: SpeechScript): EchoLine[] {
  if (!Array.isArray(script)) throw new TestingError('TESTING_INVALID_SCRIPT', 'a speech script is an array of { at, say } entries');
  const lines: EchoLine[] = [];
  script.forEach((entry, index) => {
    const where = `script[${index}]`;
    if (entry === null || typeof entry !== 'object') throw new TestingError('TESTING_INVALID_SCRIPT', `${where}: expected { at, say }`);
    const words = spell(typeof entry.say === 'string' ? entry.say : '', `${where}.say`);
    const startMs = (toSamples(entry.at, `${where}.at`) * 1000) / SAMPLE_RATE;
    const endMs = startMs + words.reduce((ms, w) => ms + wordMs(w), 0) + (words.length - 1) * TONE.wordGapMs;
    const previous = lines[lines.length - 1];
    if (previous !== undefined && startMs < previous.endMs + TONE.lineGapMs) {
      throw new TestingError('TESTING_INVALID_SCRIPT', `${where}.at: starts at ${startMs} ms; echo needs ${TONE.lineGapMs} ms of silence after the previous line, which ends at ${previous.endMs} ms`);
    }
    lines.push({ startMs, endMs, words });
  });
  return lines;
}

/**
 * Mono audio in [-1, 1] that speaks a script in the echo tone code (tone-code.ts), for
 * `startTestServer({ recognizer: 'echo' })`: write it to a realtime session (`session.write`, with the
 * session's `sampleRate` the same as this one's) and the lines come back as the script says them. The
 * same script gives the same audio, sample for sample.
 */
export function echoAudio(script: SpeechScript, options: EchoAudioOptions = {}): Float32Array {
  const rate = options.sampleRate ?? SAMPLE_RATE;
  if (!Number.isSafeInteger(rate) || rate < 8_000 || rate > 192_000) throw new TestingError('TESTING_INVALID_SCRIPT', `sampleRate: a whole number of samples per second, 8,000 to 192,000 (got ${rate})`);
  const lines = placeEcho(script);
  const tailMs = (toSamples(options.tail ?? '600ms', 'tail') * 1000) / SAMPLE_RATE;
  const endMs = (lines[lines.length - 1]?.endMs ?? 0) + tailMs;
  const at = (ms: number): number => Math.round((ms * rate) / 1000);
  const out = new Float32Array(at(endMs));
  const letter = at(TONE.letterMs);
  const fade = at(5);
  for (const line of lines) {
    let ms = line.startMs;
    for (const word of line.words) {
      for (const char of word) {
        const hz = toneHz(ALPHABET.indexOf(char));
        const start = at(ms);
        for (let n = 0; n < letter; n++) {
          const envelope = Math.min(1, n / fade, (letter - n) / fade);
          out[start + n] = TONE.level * envelope * Math.sin((2 * Math.PI * hz * n) / rate);
        }
        ms += TONE.letterMs + TONE.letterGapMs;
      }
      ms += TONE.wordGapMs - TONE.letterGapMs;
    }
  }
  return out;
}
