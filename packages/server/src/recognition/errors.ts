/**
 * Why a recognizer could not be chosen. Thrown by startServer (and the CLI) when the PocketSphinx
 * recognizer was asked for explicitly and cannot run, or a recognizer name is unknown. The automatic
 * choice never throws: it falls back to the deterministic recognizer with a one-line notice.
 */
export type RecognizerErrorCode = 'RECOGNIZER_UNAVAILABLE' | 'RECOGNIZER_UNKNOWN';

export class RecognizerError extends Error {
  override readonly name = 'RecognizerError';

  constructor(
    readonly code: RecognizerErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isRecognizerError(value: unknown): value is RecognizerError {
  return value instanceof RecognizerError || (value instanceof Error && value.name === 'RecognizerError');
}
