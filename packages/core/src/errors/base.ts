/**
 * Every error this SDK throws is a SoundCloneError with a stable string `code`. Subclasses narrow
 * the family (DSP misuse, HTTP failures, realtime session failures); `code` says which case.
 * The full list of codes lives in docs/errors.md.
 */
export class SoundCloneError extends Error {
  override name = 'SoundCloneError';
  readonly code: string;

  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** Matches by class or, across bundle copies of this package, by name and a string code. */
export function isSoundCloneError(value: unknown): value is SoundCloneError {
  if (value instanceof SoundCloneError) return true;
  return value instanceof Error && typeof (value as { code?: unknown }).code === 'string' && /^[A-Z][A-Za-z]*Error$/.test(value.name);
}
