/**
 * Why a recognizer could not be chosen, or cannot serve now.
 *
 *   RECOGNIZER_UNAVAILABLE     startServer (and the CLI) asked for PocketSphinx and it cannot run; or,
 *                              later, a decoder failed to load (the model changed underneath)
 *   RECOGNIZER_UNKNOWN         a recognizer name other than the choices
 *   RECOGNIZER_BUSY            every decoder slot (PocketSphinxOptions.maxDecoders) is taken
 *   RECOGNIZER_ACCOUNT_LIMIT   the account holds its most slots at once (maxDecodersPerAccount)
 *   RECOGNIZER_CLOSED          the recognizer was closed (server shutdown)
 *   RECOGNIZER_INVALID_OPTION  a PocketSphinx option out of range
 *
 * The automatic choice never throws: it falls back to the deterministic recognizer with a one-line
 * notice. The server turns the run-time codes into typed answers (protocol.md "Recognizer capacity").
 */
export type RecognizerErrorCode = 'RECOGNIZER_UNAVAILABLE' | 'RECOGNIZER_UNKNOWN' | 'RECOGNIZER_BUSY' | 'RECOGNIZER_ACCOUNT_LIMIT' | 'RECOGNIZER_CLOSED' | 'RECOGNIZER_INVALID_OPTION';

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
