import { ResponseFormatError } from '../errors/client-errors.js';
import { DECIMALS } from '../protocol.js';

/**
 * Decimal strings (spec "billing fields": "Character counts and durations are JSON strings and must be
 * converted before comparing"; usage counters, audioDurationMs).
 *
 * The documented choice: every such field becomes a `bigint`. Sample counters of a long session pass
 * 2^53 long before anything else does, and a bigint cannot silently round or be compared as text
 * ("9" > "10"). The parse is strict: only `0` or a digit string without leading zeros, sign, spaces,
 * exponent or fraction. Anything else is a ResponseFormatError with code MALFORMED_DECIMAL naming the
 * field path, never a guess.
 */
const DECIMAL = /^(?:0|[1-9][0-9]*)$/;

/** Longest accepted string; 40 digits is far past any count and keeps a hostile value cheap. */
const MAX_DIGITS = 40;

export function isDecimalString(value: unknown): value is string {
  return typeof value === 'string' && value.length <= MAX_DIGITS && DECIMAL.test(value);
}

/** Parses one response field; `path` names it in the error, e.g. `data.billing.reservedCharacters`. */
export function parseDecimal(value: unknown, path: string): bigint {
  if (isDecimalString(value)) return BigInt(value);
  if (DECIMALS.acceptJsonNumbers && typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  throw ResponseFormatError.malformedDecimal(path, value);
}

/** Like parseDecimal, for fields that may be null or absent. */
export function parseOptionalDecimal(value: unknown, path: string): bigint | null {
  return value === null || value === undefined ? null : parseDecimal(value, path);
}

/** A count the caller gives: bigint, a safe non-negative integer, or a decimal string. */
export type CountInput = bigint | number | string;

/**
 * Turns a caller's count into the contract form, a decimal string (spec "pause"/"finish": "a decimal
 * string is preferred"). Returns undefined when the input is not a non-negative integer.
 */
export function toDecimalString(value: CountInput): string | undefined {
  if (typeof value === 'bigint') return value >= 0n ? value.toString() : undefined;
  if (typeof value === 'number') return Number.isSafeInteger(value) && value >= 0 ? String(value) : undefined;
  return isDecimalString(value) ? value : undefined;
}
