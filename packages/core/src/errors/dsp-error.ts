import { SoundCloneError } from './base.js';

export type DspErrorCode =
  /** A sample rate outside the supported set, or a ratio that cannot be reduced to small integers. */
  | 'DSP_UNSUPPORTED_RATE'
  /** A buffer of the wrong type, a length that is not a whole number of frames, or a bad offset. */
  | 'DSP_INVALID_BUFFER'
  /** An output buffer too small for what the call would produce. */
  | 'DSP_OUTPUT_TOO_SMALL'
  /** A non-finite sample (NaN, ±Infinity) under the `nonFinite: 'throw'` policy. */
  | 'DSP_NON_FINITE_SAMPLE'
  /** Any other option out of its documented range. */
  | 'DSP_INVALID_OPTION'
  /** A call that the object's state forbids, such as process() after flush(). */
  | 'DSP_INVALID_STATE';

/** Misuse of the DSP classes. Runtime conditions (a full ring, an empty read) are return values, never errors. */
export class DspError extends SoundCloneError {
  override name = 'DspError' as const;
  declare readonly code: DspErrorCode;

  constructor(code: DspErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
