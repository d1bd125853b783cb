import type { Violations } from '../errors.js';

/** Small field checkers that record a violation naming the field and the rule, and return the value. */

export function bool(v: Violations, field: string, value: unknown): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') v.add(field, 'must be a boolean');
  return typeof value === 'boolean' ? value : undefined;
}

export function int(v: Violations, field: string, value: unknown, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    v.add(field, max === Number.MAX_SAFE_INTEGER ? `must be an integer of at least ${min}` : `must be an integer from ${min} to ${max}`);
    return undefined;
  }
  return value;
}

export function num(
  v: Violations,
  field: string,
  value: unknown,
  min: number,
  max: number,
  { minExclusive = false }: { minExclusive?: boolean } = {},
): number | undefined {
  if (value === undefined) return undefined;
  const bad = typeof value !== 'number' || !Number.isFinite(value) || (minExclusive ? value <= min : value < min) || value > max;
  if (bad) {
    v.add(field, minExclusive ? `must be a number greater than ${min} and at most ${max}` : `must be a number from ${min} to ${max}`);
    return undefined;
  }
  return value as number;
}

export function oneOf<T extends string>(v: Violations, field: string, value: unknown, allowed: readonly T[]): T | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    v.add(field, `must be one of ${allowed.join(', ')}`);
    return undefined;
  }
  return value as T;
}

export function str(v: Violations, field: string, value: unknown, maxChars: number, { nonEmpty = true } = {}): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    v.add(field, 'must be a string');
    return undefined;
  }
  if (nonEmpty && value.trim() === '') v.add(field, 'must not be empty');
  else if ([...value].length > maxChars) v.add(field, `must be at most ${maxChars} characters`);
  else if (!isText(value)) v.add(field, NOT_TEXT);
  return value;
}

/** The rule a string breaks when it is not text every store can keep. */
export const NOT_TEXT = 'must be text: no U+0000 and no unpaired surrogate (ill-formed UTF-16)';

const NUL_OR_LONE_SURROGATE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether `value` is text a database keeps as sent: PostgreSQL's text refuses U+0000, and an unpaired
 * surrogate has no UTF-8 form (it would come back as U+FFFD). Names, titles and other short strings
 * are refused with INPUT_INVALID rather than changed or failed later.
 */
export function isText(value: string): boolean {
  return !NUL_OR_LONE_SURROGATE.test(value);
}

export function strArray(v: Violations, field: string, value: unknown, maxItems: number, maxChars: number): string[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) {
    v.add(field, 'must be an array of strings');
    return undefined;
  }
  if (value.length > maxItems) v.add(field, `must hold at most ${maxItems} strings`);
  // Elements are checked until the report is full, and never past maxItems: an array that is too long
  // is refused for its length, so a hostile one costs no more than a valid one (a 1 MiB body holds
  // 500,000 of them; checking each would hold the event loop for tens of ms).
  const checked = boundedElements(value, maxItems);
  for (let i = 0; i < checked; i++) {
    if (v.stopChecking()) break;
    const item: unknown = value[i];
    if (typeof item !== 'string' || item === '') v.add(`${field}[${i}]`, 'must be a non-empty string');
    else if (codePoints(item, maxChars) > maxChars) v.add(`${field}[${i}]`, `must be at most ${maxChars} characters`);
    else if (!isText(item)) v.add(`${field}[${i}]`, NOT_TEXT);
  }
  if (checked < value.length) {
    v.checkingStopped = true;
    return undefined;
  }
  return value.filter((item): item is string => typeof item === 'string');
}

/**
 * How many leading elements of `value` an array check looks at: all of them up to `maxItems`. When the
 * array is longer the caller reports its length and marks `checkingStopped` after its loop (there may
 * be more broken elements than the report shows).
 */
export function boundedElements(value: readonly unknown[], maxItems: number): number {
  return value.length <= maxItems ? value.length : maxItems;
}

/** Code points of `text`, counting no further than `limit + 1` (enough to tell "too long"). */
function codePoints(text: string, limit: number): number {
  if (text.length <= limit) return text.length;
  let count = 0;
  for (const _ of text) if (++count > limit) break;
  return count;
}

export function plainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Refuses keys outside `known` (unknown options are refused rather than dropped). */
export function unknownKeys(v: Violations, prefix: string, object: Record<string, unknown>, known: readonly string[]): void {
  for (const key of Object.keys(object)) if (!known.includes(key)) v.add(prefix + key, 'is not a known field');
}

/** Depth of a JSON value: a scalar is 0, {a: 1} is 1, {a: {b: 1}} is 2; arrays count as a level. */
export function jsonDepth(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  const children = Array.isArray(value) ? value : Object.values(value);
  return 1 + children.reduce((max: number, child) => Math.max(max, jsonDepth(child)), 0);
}
