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
