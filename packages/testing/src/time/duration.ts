import { TestingError } from '../errors.js';

/** A length of time: milliseconds as a number, or a string such as `'1h'`, `'30m'`, `'1.5s'`, `'250ms'`. */
export type Duration = number | string;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** The milliseconds a Duration names; `what` names it in the error (TESTING_INVALID_TIME). */
export function durationMs(time: Duration, what: string): number {
  if (typeof time === 'number') {
    if (Number.isFinite(time) && time >= 0) return time;
    throw new TestingError('TESTING_INVALID_TIME', `${what}: a number is milliseconds, at least 0 (got ${time})`);
  }
  const match = typeof time === 'string' ? /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(time.trim()) : null;
  if (match === null) throw new TestingError('TESTING_INVALID_TIME', `${what}: expected milliseconds or a string such as '1h', '30m', '1.5s', '250ms' (got ${JSON.stringify(time)})`);
  return Number(match[1]) * (UNIT_MS[match[2] as string] as number);
}
