import { CaptionEngine, type CaptionOptions, type Cue } from '@soundclone/core';
import type { ResolvedCaptionOptions } from '@soundclone/core';
import { percentile } from '../speech.js';
import type { Trace } from './trace.js';

const words = (text: string): string[] => text.split(/\s+/u).filter((w) => w !== '');

/**
 * Words of `old` that `next` keeps (a longest common subsequence, after the shared prefix, which is
 * nearly all of it: the committed lines). The rest were changed or removed.
 */
function kept(old: readonly string[], next: readonly string[]): boolean[] {
  const keep = old.map(() => false);
  let p = 0;
  while (p < old.length && p < next.length && old[p] === next[p]) keep[p++] = true;
  const a = old.slice(p);
  const b = next.slice(p);
  const table = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      (table[i] as number[])[j] = a[i] === b[j] ? ((table[i + 1] as number[])[j + 1] as number) + 1 : Math.max((table[i + 1] as number[])[j] as number, (table[i] as number[])[j + 1] as number);
    }
  }
  for (let i = 0, j = 0; i < a.length && j < b.length;) {
    if (a[i] === b[j]) {
      keep[p + i] = true;
      i++;
      j++;
    } else if (((table[i + 1] as number[])[j] as number) >= ((table[i] as number[])[j + 1] as number)) i++;
    else j++;
  }
  return keep;
}

/**
 * Displayed text as a word sequence over time. Churn is what a viewer saw and then lost: each time the
 * display changes, the characters of the old display's words the new one does not keep (changed or
 * removed, by a word-level diff; a word is its characters plus a space). Text that only grows costs nothing.
 */
class Display {
  #words: readonly string[] = [];
  churnChars = 0;
  /** First time each position showed the word it ends with in the final transcript. */
  readonly firstCorrectMs = new Map<number, number>();

  constructor(private readonly finalWords: readonly string[]) {}

  show(next: readonly string[], atMs: number): void {
    const old = this.#words;
    let p = 0;
    while (p < old.length && p < next.length && old[p] === next[p]) p++;
    const keep = kept(old, next);
    for (let i = p; i < old.length; i++) if (keep[i] !== true) this.churnChars += (old[i] as string).length + 1;
    for (let i = p; i < next.length; i++) {
      if (next[i] === this.finalWords[i] && !this.firstCorrectMs.has(i)) this.firstCorrectMs.set(i, atMs);
    }
    this.#words = next;
  }
}

export interface ReplayRow {
  readonly stableUpdates: number | null;
  readonly stableMs: number | null;
  readonly churnPerMin: number;
  readonly rawChurnPerMin: number;
  readonly removed: number;
  readonly delayP50Ms: number;
  readonly delayP95Ms: number;
  readonly cues: number;
  readonly readable: number;
  readonly exact: boolean;
}

/** The raw partial stream as an app that shows it would: the committed lines, then the partial. */
export function rawDisplay(trace: Trace): Display {
  const d = new Display(trace.finalWords);
  const committed: string[] = [];
  const texts = new Map<string, number>();
  let partial: string[] = [];
  for (const e of trace.events) {
    if (e.kind === 'partial') partial = words(e.text);
    else if (e.kind === 'line' && !texts.has(e.line.id)) {
      texts.set(e.line.id, committed.length);
      committed.push(...words(e.line.revisedText ?? e.line.text));
      partial = [];
    } else continue;
    d.show([...committed, ...partial], e.atMs);
  }
  return d;
}

/** Is a cue within the limits a reader needs (the engine promises all of them). */
export function readable(cue: Cue, previous: Cue | undefined, o: ResolvedCaptionOptions): boolean {
  const duration = cue.endMs - cue.startMs;
  const chars = cue.text.replace(/\n/gu, ' ').length;
  return cue.lines.length <= o.maxLines
    && cue.lines.every((l) => l.length <= o.maxLineChars || !l.includes(' '))
    && duration >= o.minDurationMs && duration <= o.maxDurationMs
    && chars / (duration / 1000) <= o.maxCharsPerSecond + 1e-9
    && (previous === undefined || cue.startMs >= previous.endMs);
}

/** The caption engine over the trace with one setting: churn, added delay per word, readability, exactness. */
export function replay(trace: Trace, options: CaptionOptions, raw: Display): ReplayRow {
  const engine = new CaptionEngine(options);
  const d = new Display(trace.finalWords);
  const show = (atMs: number): void => d.show([...engine.cues().flatMap((c) => words(c.text)), ...engine.liveWords()], atMs);
  for (const e of trace.events) {
    // Words turn stable by age between inputs: wake the engine when it asked to, as the binding's timer would.
    for (let wake = engine.nextWakeMs(); wake !== null && wake <= e.atMs; wake = engine.nextWakeMs()) {
      if (engine.tick(wake).length > 0) show(wake);
      else break;
    }
    if (e.kind === 'partial') engine.partial({ epoch: e.epoch, text: e.text }, e.atMs);
    else if (e.kind === 'line') engine.line(e.line);
    else engine.lineUpdated(e.line);
    show(e.atMs);
  }
  engine.end();
  const cues = engine.cues().filter((c) => c.text !== '');
  const delays: number[] = [];
  for (const [i, at] of d.firstCorrectMs) {
    const rawAt = raw.firstCorrectMs.get(i);
    if (rawAt !== undefined) delays.push(Math.max(0, at - rawAt));
  }
  delays.sort((a, b) => a - b);
  const minutes = trace.audioS / 60;
  const ok = cues.filter((c, i) => readable(c, cues[i - 1], engine.options)).length;
  const finalCueWords = cues.flatMap((c) => words(c.text));
  return {
    stableUpdates: options.stableUpdates ?? engine.options.stableUpdates,
    stableMs: options.stableMs ?? engine.options.stableMs,
    churnPerMin: d.churnChars / minutes,
    rawChurnPerMin: raw.churnChars / minutes,
    removed: raw.churnChars === 0 ? 1 : 1 - d.churnChars / raw.churnChars,
    delayP50Ms: percentile(delays, 50),
    delayP95Ms: percentile(delays, 95),
    cues: cues.length,
    readable: cues.length === 0 ? 1 : ok / cues.length,
    exact: finalCueWords.length === trace.finalWords.length && finalCueWords.every((w, i) => w === trace.finalWords[i]),
  };
}
