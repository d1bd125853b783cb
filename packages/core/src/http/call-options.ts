import type { Violation } from '../errors/api-errors.js';
import { ValidationError } from '../errors/client-errors.js';

/**
 * The per-call options every REST call takes (`{ signal, timeoutMs, maxRetries }`), checked before
 * anything is sent. Without this a `maxRetries: NaN` never stops retrying (`retry >= NaN` is never
 * true), a `timeoutMs: NaN` or `'5000'` silently means no timeout, and a signal that is not an
 * AbortSignal fails deep inside as a TypeError.
 */
export function callOptionViolations(call: unknown): Violation[] {
  if (call === undefined || call === null) return [];
  if (typeof call !== 'object') return [{ field: 'options', rule: 'must be an object' }];
  const o = call as { signal?: unknown; timeoutMs?: unknown; maxRetries?: unknown };
  const problems: Violation[] = [];
  if (o.signal !== undefined && !isAbortSignalLike(o.signal)) problems.push({ field: 'signal', rule: 'must be an AbortSignal' });
  if (o.timeoutMs !== undefined && !(typeof o.timeoutMs === 'number' && Number.isFinite(o.timeoutMs) && o.timeoutMs >= 0)) {
    problems.push({ field: 'timeoutMs', rule: 'must be a non-negative finite number of milliseconds' });
  }
  if (o.maxRetries !== undefined && !(typeof o.maxRetries === 'number' && Number.isSafeInteger(o.maxRetries) && o.maxRetries >= 0)) {
    problems.push({ field: 'maxRetries', rule: 'must be a non-negative integer' });
  }
  return problems;
}

export function checkCallOptions(call: unknown): void {
  const problems = callOptionViolations(call);
  if (problems.length > 0) throw new ValidationError(problems);
}

/** By shape, not `instanceof`: a signal from another realm (an iframe, a test DOM) is still a signal. */
export function isAbortSignalLike(value: unknown): value is AbortSignal {
  if (value === null || typeof value !== 'object') return false;
  const s = value as { aborted?: unknown; addEventListener?: unknown; removeEventListener?: unknown };
  return typeof s.aborted === 'boolean' && typeof s.addEventListener === 'function' && typeof s.removeEventListener === 'function';
}
