import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';

/**
 * Collects every broken rule before anything is sent, so the caller sees all of them at once
 * (validation reports all violations at once). Each checker records `{ field, rule }` and returns
 * whether the value passed; `undefined` always passes (absent optional fields are the service's
 * defaults).
 */
export class Checks {
  readonly violations: Violation[] = [];

  add(field: string, rule: string): void {
    this.violations.push({ field, rule });
  }

  throwIfAny(): void {
    if (this.violations.length > 0) throw new ValidationError(this.violations);
  }

  boolean(field: string, value: unknown): boolean {
    if (value === undefined || typeof value === 'boolean') return true;
    this.add(field, 'must be a boolean');
    return false;
  }

  /** Integer in [min, max]. */
  integer(field: string, value: unknown, min: number, max: number = Number.MAX_SAFE_INTEGER): boolean {
    if (value === undefined) return true;
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max) return true;
    this.add(field, max === Number.MAX_SAFE_INTEGER ? `must be an integer of at least ${min}` : `must be an integer from ${min} to ${max}`);
    return false;
  }

  /** Finite number in [min, max], or (min, max] with minExclusive. */
  number(field: string, value: unknown, min: number, max: number, minExclusive = false): boolean {
    if (value === undefined) return true;
    if (typeof value === 'number' && Number.isFinite(value) && (minExclusive ? value > min : value >= min) && value <= max) return true;
    this.add(field, minExclusive ? `must be a number greater than ${min} and at most ${max}` : `must be a number from ${min} to ${max}`);
    return false;
  }

  /** String of 1..maxChars characters (Unicode code points, as the service counts them). */
  string(field: string, value: unknown, maxChars: number, { allowEmpty = false } = {}): boolean {
    if (value === undefined) return true;
    if (typeof value !== 'string') {
      this.add(field, 'must be a string');
      return false;
    }
    if (!allowEmpty && value.trim() === '') {
      this.add(field, 'must not be empty');
      return false;
    }
    if (codePoints(value) > maxChars) {
      this.add(field, `must be at most ${maxChars} characters`);
      return false;
    }
    return true;
  }

  oneOf(field: string, value: unknown, allowed: readonly string[]): boolean {
    if (value === undefined) return true;
    if (typeof value === 'string' && allowed.includes(value)) return true;
    this.add(field, `must be one of ${allowed.join(', ')}`);
    return false;
  }

  /** Array of at most maxItems non-empty strings, each at most maxChars characters. */
  stringArray(field: string, value: unknown, maxItems: number, maxChars = Number.POSITIVE_INFINITY): boolean {
    if (value === undefined) return true;
    if (!Array.isArray(value)) {
      this.add(field, 'must be an array of strings');
      return false;
    }
    let ok = true;
    if (value.length > maxItems) {
      this.add(field, `must hold at most ${maxItems} strings`);
      ok = false;
    }
    value.forEach((item, i) => {
      if (typeof item !== 'string' || item === '') {
        this.add(`${field}[${i}]`, 'must be a non-empty string');
        ok = false;
      } else if (codePoints(item) > maxChars) {
        this.add(`${field}[${i}]`, `must be at most ${maxChars} characters`);
        ok = false;
      }
    });
    return ok;
  }

  /** Absolute http or https URL of at most maxChars characters. */
  httpUrl(field: string, value: unknown, maxChars: number): boolean {
    if (value === undefined) return true;
    if (typeof value === 'string' && value.length <= maxChars && isHttpUrl(value)) return true;
    this.add(field, `must be an absolute http or https URL of at most ${maxChars} characters`);
    return false;
  }
}

export function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Depth of a JSON value: a scalar is 0, {a: 1} is 1, {a: {b: 1}} is 2; arrays count as a level. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value as Record<string, unknown>);
  let deepest = 0;
  for (const child of children) deepest = Math.max(deepest, jsonDepth(child));
  return 1 + deepest;
}

/**
 * The parameters object of a call: undefined means none given; anything but a plain object (null, a
 * string, an array) is a ValidationError rather than a TypeError from reading a field of it.
 */
export function requireParams<T extends object>(value: T | undefined, field = 'params'): T {
  if (value === undefined) return {} as T;
  if (!isPlainObject(value)) throw new ValidationError([{ field, rule: 'must be an object' }]);
  return value;
}
