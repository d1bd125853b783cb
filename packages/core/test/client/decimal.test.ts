import { describe, expect, it } from 'vitest';
import { ResponseFormatError } from '../../src/errors/client-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { isDecimalString, parseDecimal, parseOptionalDecimal, toDecimalString } from '../../src/util/decimal.js';
import { parseBilling } from '../../src/parse/transcription.js';

describe('decimal strings', () => {
  it('parses counts exactly into bigint, past 2^53', () => {
    expect(parseDecimal('0', 'x')).toBe(0n);
    expect(parseDecimal('42', 'x')).toBe(42n);
    expect(parseDecimal('9007199254740993', 'x')).toBe(9007199254740993n);
    expect(parseDecimal('1' + '0'.repeat(39), 'x')).toBe(10n ** 39n);
  });

  it('refuses anything but a plain non-negative digit string, naming the field', () => {
    for (const bad of ['', '01', '-1', '+1', '1.0', '1e3', ' 1', '1 ', '0x1', '١٢', '1'.repeat(41), 5, 5n, null, undefined, {}, []]) {
      let caught: unknown;
      try {
        parseDecimal(bad, 'data.billing.reservedCharacters');
      } catch (error) {
        caught = error;
      }
      expect(caught, String(bad)).toBeInstanceOf(ResponseFormatError);
      expect(isSoundCloneError(caught, ResponseFormatError)).toBe(true);
      expect(caught).toMatchObject({ code: 'MALFORMED_DECIMAL', path: 'data.billing.reservedCharacters' });
      expect((caught as Error).message).toContain('data.billing.reservedCharacters');
    }
  });

  it('optional fields allow null and absence', () => {
    expect(parseOptionalDecimal(null, 'x')).toBeNull();
    expect(parseOptionalDecimal(undefined, 'x')).toBeNull();
    expect(parseOptionalDecimal('7', 'x')).toBe(7n);
  });

  it('reports the exact path of a malformed field inside a response', () => {
    const billing = { state: 'SETTLED', planKey: 'pro', rateVersion: 'v', ratePerMinute: '600', reservedCharacters: '600', settledCharacters: '30', releasedCharacters: '570', billableCharacters: '3O', billableDurationMs: '2600' };
    expect(() => parseBilling(billing, 'data.billing')).toThrow(/data\.billing\.billableCharacters/);
    expect(parseBilling({ ...billing, billableCharacters: '30' }, 'data.billing').billableCharacters).toBe(30n);
  });

  it('turns caller counts into the contract form', () => {
    expect(toDecimalString(0n)).toBe('0');
    expect(toDecimalString(2n ** 64n)).toBe('18446744073709551616');
    expect(toDecimalString(16000)).toBe('16000');
    expect(toDecimalString('123')).toBe('123');
    for (const bad of [-1n, -1, 1.5, Number.MAX_SAFE_INTEGER + 1, Number.NaN, '-1', '01', '1.0', '']) expect(toDecimalString(bad as never)).toBeUndefined();
    expect(isDecimalString('10')).toBe(true);
    expect(isDecimalString(10)).toBe(false);
  });
});
