/**
 * A caption cue on the session's audio clock (ms since the session's first sample). Shaped so a player
 * builds `new VTTCue(startMs / 1000, endMs / 1000, text)` with `id` from it, and replaces a cue it holds
 * when one with the same id arrives.
 */
export interface Cue {
  /** Stable for the life of the cue, through every revision: `cue_0001`, `cue_0002`, … in time order. */
  readonly id: string;
  /** The cue's place in time order (0-based); writers emit cues in this order. */
  readonly index: number;
  readonly startMs: number;
  readonly endMs: number;
  /** The text broken at word boundaries into at most `maxLines` lines of at most `maxLineChars`. */
  readonly lines: readonly string[];
  /** `lines` joined with a line feed: what a VTTCue's text is. Empty when a revision left no words here. */
  readonly text: string;
  /** Words of a partial that are not stable yet (only with `unstableTail: 'separate'`, only on live cues). */
  readonly tail: string;
  /** The speaker when the line names one, else null. */
  readonly speaker: string | null;
  /** The words are committed (a session line); a live cue from a partial is not final. */
  readonly final: boolean;
  /** Final and no supplement that could still change it (alignment, revision) is pending. */
  readonly settled: boolean;
  /** 0 when first emitted as final; each revision of a final cue adds one. */
  readonly revision: number;
  /** The committed line the words come from (null on a live cue). */
  readonly lineId: string | null;
}

/**
 * What the engine decided on one input. `live`: a not-yet-final cue to show (replaces one with the same
 * id); `final`: a cue's words are committed; `revised`: a final cue changed (times, text, settled) and
 * keeps its id; `removed`: a live cue that no final cue replaces, to take off the screen.
 */
export interface CueChange {
  readonly kind: 'live' | 'final' | 'revised' | 'removed';
  readonly cue: Cue;
}

export function cueId(index: number): string {
  return `cue_${String(index + 1).padStart(4, '0')}`;
}
