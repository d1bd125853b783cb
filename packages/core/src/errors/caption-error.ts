import { SoundCloneError } from './base.js';

export type CaptionErrorCode =
  /** A caption option out of its documented range, or options that contradict each other. */
  | 'CAPTIONS_INVALID_OPTION'
  /** A call the engine or writer state forbids, such as a cue written after end(). */
  | 'CAPTIONS_INVALID_STATE';

/** Misuse of the caption engine or its writers. What the session sends is never an error here. */
export class CaptionError extends SoundCloneError {
  override name = 'CaptionError' as const;
  declare readonly code: CaptionErrorCode;

  constructor(code: CaptionErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
