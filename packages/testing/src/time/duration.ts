import { TestingError } from '../errors.js';

/**
 * A length of time: milliseconds as a number, or a string such as `'1h'`, `'30m'`, `'1.5s'`, `'250ms'`,
 * or parts of those one after another, largest first: `'1h30m'`, `'9m59s'`.
 */
export type Duration = number | string;

const UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/** The milliseconds a Duration names; `what` names it in the error (TESTING_INVALID_TIME). */
export function durationMs(time: Duration, what: string): number {
  if (typeof time === 'number') {
    if (Number.isFinite(time) && time >= 0) return time;
    throw new TestingError('TESTING_INVALID_TIME', `${what}: a number is milliseconds, at least 0 (got ${time})`);
  }
  const text = typeof time === 'string' ? time.trim() : '';
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  const units = parts.map((p) => UNIT_MS[p[2] as string] as number);
  const whole = parts.map((p) => p[0]).join('') === text && text !== '';
  const largestFirst = units.every((unit, i) => i === 0 || unit < (units[i - 1] as number));
  if (!whole || !largestFirst) throw new TestingError('TESTING_INVALID_TIME', `${what}: expected milliseconds or a string such as '1h', '9m59s', '1.5s', '250ms' (got ${JSON.stringify(time)})`);
  return parts.reduce((sum, p, i) => sum + Number(p[1]) * (units[i] as number), 0);
}
