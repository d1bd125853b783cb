import { expect } from 'vitest';
import { DspError, isSoundCloneError, type DspErrorCode } from '../../src/index.js';

/** Runs `fn` and checks it threw a DspError with `code` (by the guard, so it also matches by name). */
export function expectDspError(fn: () => unknown, code: DspErrorCode): void {
  let thrown: unknown;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  expect(isSoundCloneError(thrown, DspError), `expected a DspError ${code}, got ${String(thrown)}`).toBe(true);
  expect((thrown as { code: string }).code).toBe(code);
}
