import { NAMES } from '../../recognition/words.js';
import type { StreamEvent } from '../../recognition/recognizer.js';
import type { Line, SupplementKind } from './audio.js';
import type { RealtimeOptions } from './options.js';

/** Committed lines (audio.ts): their text, the supplements they wait for, and what each supplement adds. */

/** Spec "finish" 3: which supplements a line waits for. */
export function requestedKinds(options: RealtimeOptions): SupplementKind[] {
  const kinds: SupplementKind[] = [];
  if (options.includeAlignment) kinds.push('alignment');
  if (options.entityCategories.length > 0) kinds.push('entities');
  if (options.rewriteInstruction !== undefined) kinds.push('revision');
  if (options.includeDetectedLanguage) kinds.push('language');
  return kinds;
}

export function textOf(event: Extract<StreamEvent, { type: 'segment' }>): string {
  return event.segment.words.map((w) => w.text).join(' ');
}

export function mergeSegments(held: ReadonlyArray<Extract<StreamEvent, { type: 'segment' }>>): Extract<StreamEvent, { type: 'segment' }> | undefined {
  const first = held[0];
  const last = held[held.length - 1];
  if (first === undefined || last === undefined) return undefined;
  const words = held.flatMap((h) => h.segment.words);
  return { ...first, segment: { startMs: first.segment.startMs, endMs: last.segment.endMs, words, speakerIndex: first.segment.speakerIndex } };
}

/** Fills in one supplement of a line from what the recogniser produced (its words, its language), and marks it arrived. */
export function applySupplement(line: Line, kind: SupplementKind, options: RealtimeOptions): void {
  const words = line.source.segment.words;
  if (kind === 'alignment') {
    line.words = words.map((w) => ({ text: w.text, startMs: w.startMs, endMs: w.endMs, confidence: w.confidence }));
  } else if (kind === 'entities') {
    const wanted = options.entityCategories.some((c) => c === 'name' || c === 'pii' || c === 'all');
    line.entities = wanted ? words.filter((w) => NAMES.has(w.text)).map((w) => ({ category: 'name', text: w.text, startMs: w.startMs, endMs: w.endMs })) : [];
  } else if (kind === 'revision') {
    line.revisedText = line.text === '' ? '' : line.text.charAt(0).toUpperCase() + line.text.slice(1) + '.';
  } else {
    line.languageCode = line.source.languageCode;
    line.languageProbability = line.source.languageProbability;
  }
  line.pending.delete(kind);
}
