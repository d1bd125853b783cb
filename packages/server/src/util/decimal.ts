/**
 * Spec "billing fields": counts and durations travel as decimal strings. Internally they are bigint
 * (samples, characters) so nothing rounds; these helpers are the only conversions.
 */
export function dec(value: bigint | number): string {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new RangeError(`not a safe integer: ${value}`);
    return String(value);
  }
  return value.toString();
}

const DECIMAL = /^(0|[1-9][0-9]{0,30})$/;

/**
 * Parses a non-negative count given as a decimal string (the contract form) or a JSON number
 * (accepted, spec "finish": "a JSON number is accepted"). Returns undefined when malformed.
 */
export function parseCount(value: unknown): bigint | undefined {
  if (typeof value === 'string') return DECIMAL.test(value) ? BigInt(value) : undefined;
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return BigInt(value);
  return undefined;
}

/** Integer division rounding up, for non-negative bigints. */
export function ceilDiv(a: bigint, b: bigint): bigint {
  return (a + b - 1n) / b;
}
