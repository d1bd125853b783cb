import type { CaptureHealth, Cue, CueChange, SessionHealth, SessionLine } from '@soundclone/core';

/**
 * Where a live-captions view is:
 *
 *   idle ──start()──► starting ──► live ◄──► reconnecting
 *                        │          │  ▲
 *                        │          ▼  │
 *                        │        paused (pause() / resume())
 *                        ▼
 *   any of them ──stop()──► stopping ──► stopped ──start()──► starting ...
 *   any of them ──the microphone refused, no session, the session or the capture failed──► failed ──start()──► ...
 *
 * `stopped` and `failed` keep the lines, cues and error of the run that ended; the next start() begins empty.
 */
export type LiveCaptionsStatus = 'idle' | 'starting' | 'live' | 'reconnecting' | 'paused' | 'stopping' | 'stopped' | 'failed';

/**
 * One immutable view of the store. A new object on every change (compare with `===`); the same object
 * until then, so `getSnapshot()` may be called as often as a framework likes.
 */
export interface LiveCaptionsSnapshot {
  readonly status: LiveCaptionsStatus;
  /** Why, in words a status line can show ("asking for the microphone", "reconnecting: socket closed 1006", ...). */
  readonly reason: string;
  /** The server's session of the current (or last) run; null before one was reserved. */
  readonly sessionId: string | null;
  /** Committed lines in order, each once, updated in place by its supplements (at most `maxLines`, oldest dropped). */
  readonly lines: readonly SessionLine[];
  /** The text still being recognised ('' when none). */
  readonly partial: string;
  /** Caption cues by core's caption engine, in order (at most `maxCues`); empty with `captions: false`. */
  readonly cues: readonly Cue[];
  readonly muted: boolean;
  readonly paused: boolean;
  /** The microphone's health (device, level, silence, recoveries); null while no capture runs. */
  readonly capture: CaptureHealth | null;
  /** The session's health (connection, reconnects); null before the session is attached. */
  readonly session: SessionHealth | null;
  /** Why the last run failed (a WebAudioError or a core error with its `code`); null otherwise. */
  readonly error: Error | null;
}

export const IDLE: LiveCaptionsSnapshot = Object.freeze({
  status: 'idle', reason: 'not started', sessionId: null, lines: Object.freeze([]), partial: '', cues: Object.freeze([]),
  muted: false, paused: false, capture: null, session: null, error: null,
});

/** A line committed or updated: appended once, replaced by id after; the oldest dropped past `max`. */
export function withLine(lines: readonly SessionLine[], line: SessionLine, max: number): readonly SessionLine[] {
  const at = lastIndexById(lines, line.id, (l) => l.id);
  if (at >= 0) return Object.freeze(lines.map((l, i) => (i === at ? line : l)));
  const next = lines.length >= max ? lines.slice(lines.length - max + 1) : lines.slice();
  next.push(line);
  return Object.freeze(next);
}

/** A cue change applied: live, final and revised cues replace theirs by id (or are appended); removed ones go. */
export function withCue(cues: readonly Cue[], change: CueChange, max: number): readonly Cue[] {
  const at = lastIndexById(cues, change.cue.id, (c) => c.id);
  if (change.kind === 'removed') return at < 0 ? cues : Object.freeze(cues.filter((_, i) => i !== at));
  if (at >= 0) return Object.freeze(cues.map((c, i) => (i === at ? change.cue : c)));
  const next = cues.length >= max ? cues.slice(cues.length - max + 1) : cues.slice();
  next.push(change.cue);
  return Object.freeze(next);
}

/** Ids change near the end: search from there. */
function lastIndexById<T>(items: readonly T[], id: string, idOf: (item: T) => string): number {
  for (let i = items.length - 1; i >= 0; i--) if (idOf(items[i]!) === id) return i;
  return -1;
}
