/**
 * Why a body is not media the service will keep. Every refusal names its problem in `details.problem`
 * (docs/protocol.md "Uploads"), so a client can tell a codec it may convert from a file that lies about
 * itself. `code` is the envelope's errorCode: UNSUPPORTED_TYPE (415) for what cannot be read,
 * PAYLOAD_TOO_LARGE (413) for audio longer than the service transcribes.
 */
export type MediaProblem =
  /** Not WAV, not Matroska, not raw PCM16. */
  | 'UNKNOWN_CONTAINER'
  /** A codec, sample format or channel count the reference service does not decode. */
  | 'UNSUPPORTED_FORMAT'
  /** A declared sampling rate outside 1 kHz..384 kHz (or not a finite number). */
  | 'RATE_OUT_OF_RANGE'
  /** Structure the bytes cannot hold: an element or chunk running past its parent, a truncated header. */
  | 'MALFORMED'
  /** Matroska lace sizes that do not add up to the bytes of their block. */
  | 'LACE_OVERRUN'
  /** Matroska master elements nested deeper than MATROSKA_MAX_DEPTH. */
  | 'NESTING_TOO_DEEP'
  /** More Matroska elements, tracks or laced frames than the limits allow. */
  | 'TOO_MANY_ELEMENTS'
  /** No audio track at all. */
  | 'NO_AUDIO'
  /** Longer than SERVER_LIMITS.mediaMaxDurationMs. */
  | 'DURATION_TOO_LONG';

export class UndecodableMediaError extends Error {
  override readonly name = 'UndecodableMediaError';
  readonly code: 'UNSUPPORTED_TYPE' | 'PAYLOAD_TOO_LARGE';
  readonly details: Readonly<Record<string, unknown>>;

  constructor(readonly problem: MediaProblem, message: string, extra: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.code = problem === 'DURATION_TOO_LONG' ? 'PAYLOAD_TOO_LARGE' : 'UNSUPPORTED_TYPE';
    this.details = { problem, ...extra };
  }
}
