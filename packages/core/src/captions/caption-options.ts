import { CaptionError } from '../errors/caption-error.js';

/** How words of a partial that are not yet stable are shown. */
export type UnstableTail = 'withhold' | 'separate';

export interface CaptionOptions {
  /** Lines per cue (default 2). */
  readonly maxLines?: number;
  /** Characters per cue line; lines break at word boundaries, a longer word stands alone (default 42). */
  readonly maxLineChars?: number;
  /** Reading rate: a cue lasts at least its characters / this many seconds (default 17). */
  readonly maxCharsPerSecond?: number;
  /** Shortest cue, in ms (default 800). */
  readonly minDurationMs?: number;
  /** Longest cue, in ms; a cue also closes when its words span this long (default 7000). */
  readonly maxDurationMs?: number;
  /** A partial's word is stable once it stayed unchanged for this many further partials (default 1). */
  readonly stableUpdates?: number;
  /** ...or once it stayed unchanged for this long, in ms of the caller's clock (default 1000). */
  readonly stableMs?: number;
  /** `withhold` (default): unstable words are not shown; `separate`: they ride along in `Cue.tail`. */
  readonly unstableTail?: UnstableTail;
}

export type ResolvedCaptionOptions = Required<CaptionOptions>;

export const CAPTION_DEFAULTS: Readonly<Required<CaptionOptions>> = Object.freeze({
  maxLines: 2,
  maxLineChars: 42,
  maxCharsPerSecond: 17,
  minDurationMs: 800,
  maxDurationMs: 7000,
  stableUpdates: 1,
  stableMs: 1000,
  unstableTail: 'withhold',
});

function bad(message: string): CaptionError {
  return new CaptionError('CAPTIONS_INVALID_OPTION', message);
}

function integer(name: string, value: number, min: number, max: number): void {
  if (!Number.isInteger(value) || value < min || value > max) throw bad(`${name} must be an integer from ${String(min)} to ${String(max)} (got ${String(value)})`);
}

function finite(name: string, value: number, min: number, max: number): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) throw bad(`${name} must be a number from ${String(min)} to ${String(max)} (got ${String(value)})`);
}

/** Defaults filled in and every value checked: bad options fail here, never mid-session. */
export function resolveCaptionOptions(options: CaptionOptions = {}): ResolvedCaptionOptions {
  const o: ResolvedCaptionOptions = { ...CAPTION_DEFAULTS };
  for (const [key, value] of Object.entries(options)) {
    if (value === undefined) continue;
    if (!(key in CAPTION_DEFAULTS)) throw bad(`unknown caption option "${key}"`);
    (o as Record<string, unknown>)[key] = value;
  }
  integer('maxLines', o.maxLines, 1, 10);
  integer('maxLineChars', o.maxLineChars, 8, 200);
  finite('maxCharsPerSecond', o.maxCharsPerSecond, 1, 100);
  integer('minDurationMs', o.minDurationMs, 0, 60_000);
  integer('maxDurationMs', o.maxDurationMs, 100, 600_000);
  integer('stableUpdates', o.stableUpdates, 0, 100);
  integer('stableMs', o.stableMs, 0, 600_000);
  if (o.unstableTail !== 'withhold' && o.unstableTail !== 'separate') throw bad(`unstableTail must be "withhold" or "separate" (got ${String(o.unstableTail)})`);
  if (o.minDurationMs > o.maxDurationMs) throw bad(`minDurationMs (${String(o.minDurationMs)}) is above maxDurationMs (${String(o.maxDurationMs)})`);
  // A cue must be able to hold at least one full line at the reading rate, else no cue could be readable.
  if ((o.maxLineChars * 1000) / o.maxCharsPerSecond > o.maxDurationMs) {
    throw bad(`maxDurationMs (${String(o.maxDurationMs)}) is too short to read one line of ${String(o.maxLineChars)} characters at ${String(o.maxCharsPerSecond)} characters per second`);
  }
  return Object.freeze(o);
}
