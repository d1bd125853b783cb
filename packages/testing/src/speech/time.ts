import { TestingError, type TestingErrorCode } from '../errors.js';

/** The service recognises 16 kHz mono PCM16: every script position is a sample at this rate. */
export const SAMPLE_RATE = 16_000;

/**
 * A position or length in audio: a whole number of samples (16 kHz), or a string of seconds or
 * milliseconds: `'1.2s'`, `'250ms'`. Strings round to the nearest sample. Typed as any string so a
 * script written as a plain array literal type-checks; the form is checked when the script is used.
 */
export type AudioTime = number | string;

/** The sample count an AudioTime names; `what` names it in the error. */
export function toSamples(time: AudioTime, what: string, code: TestingErrorCode = 'TESTING_INVALID_SCRIPT'): number {
  if (typeof time === 'number') {
    if (Number.isSafeInteger(time) && time >= 0) return time;
    throw new TestingError(code, `${what}: a number is a count of samples, a whole number of at least 0 (got ${time})`);
  }
  const match = typeof time === 'string' ? /^(\d+(?:\.\d+)?)(ms|s)$/.exec(time.trim()) : null;
  if (match === null) throw new TestingError(code, `${what}: expected samples, '1.2s' or '250ms' (got ${JSON.stringify(time)})`);
  const value = Number(match[1]);
  const ms = match[2] === 's' ? value * 1000 : value;
  return Math.round((ms * SAMPLE_RATE) / 1000);
}

/** Samples to milliseconds, rounded (the recognizer reports whole milliseconds). */
export function samplesToMs(samples: number): number {
  return Math.round((samples * 1000) / SAMPLE_RATE);
}
