import type { Cue, CueChange } from '@soundclone/core';

/** Scripted session input for the caption engine: lines the way a session's SessionLine looks. */
export function line(id: string, text: string, startMs: number, endMs: number, extra: Record<string, unknown> = {}): {
  id: string; text: string; revisedText: string | null; startMs: number; endMs: number; epoch: number; words: Array<Record<string, unknown>>; pendingSupplements: string[];
} {
  return { id, text, revisedText: null, startMs, endMs, epoch: 1, words: [], pendingSupplements: [], ...extra };
}

/** The words of the final cues in id order: what exactness compares with the lines. */
export function finalWords(cues: readonly Cue[]): string[] {
  return [...cues].sort((a, b) => a.index - b.index).flatMap((c) => c.text.split(/\s+/u).filter((w) => w !== ''));
}

/** The latest version of every final cue, by id, from a stream of changes. */
export function latestFinal(changes: readonly CueChange[]): Cue[] {
  const byId = new Map<string, Cue>();
  for (const c of changes) if (c.cue.final) byId.set(c.cue.id, c.cue);
  return [...byId.values()].sort((a, b) => a.index - b.index);
}
