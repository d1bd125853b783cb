import type { ExportOptions } from '../domain/transcriptions/request.js';
import type { Segment, Transcript } from '../domain/transcriptions/transcript.js';

/** A segment as a download shows it (after exportOptions re-segmenting). */
export interface ExportSegment {
  readonly speakerId: string | null;
  readonly channelIndex: number;
  readonly startMs: number | null;
  readonly endMs: number | null;
  readonly text: string;
}

/**
 * Spec "exportOptions entry": when segmentOnSilenceLongerThanS, maxSegmentDurationS or maxSegmentChars
 * is given, segments are rebuilt from the tokens: a new segment starts at a speaker or channel change,
 * after a silence longer than the limit, when the duration would pass the limit, or when the text (with
 * the single-space separators inserted while rebuilding) would pass maxSegmentChars. A single token
 * longer than maxSegmentChars stands alone. Without timings only maxSegmentChars applies.
 * These options never change recognition or billing.
 */
export function exportSegments(transcript: Transcript, options: ExportOptions): ExportSegment[] {
  const rebuild = options.segmentOnSilenceLongerThanS !== undefined || options.maxSegmentDurationS !== undefined || options.maxSegmentChars !== undefined;
  if (!rebuild) return transcript.segments.map(plain);
  const silenceMs = options.segmentOnSilenceLongerThanS === undefined ? Infinity : options.segmentOnSilenceLongerThanS * 1000;
  const maxDurMs = options.maxSegmentDurationS === undefined ? Infinity : options.maxSegmentDurationS * 1000;
  const maxChars = options.maxSegmentChars ?? Infinity;

  const out: ExportSegment[] = [];
  let current: { speakerId: string | null; channelIndex: number; startMs: number | null; endMs: number | null; text: string } | undefined;
  for (const segment of transcript.segments) {
    for (const token of segment.tokens) {
      const startsNew =
        current === undefined ||
        current.speakerId !== segment.speakerId ||
        current.channelIndex !== segment.channelIndex ||
        (token.startMs !== null && current.endMs !== null && token.startMs - current.endMs > silenceMs) ||
        (token.endMs !== null && current.startMs !== null && token.endMs - current.startMs > maxDurMs) ||
        [...current.text].length + 1 + [...token.text].length > maxChars;
      if (startsNew) {
        if (current !== undefined) out.push(current);
        current = { speakerId: segment.speakerId, channelIndex: segment.channelIndex, startMs: token.startMs, endMs: token.endMs, text: token.text };
      } else if (current !== undefined) {
        current.text += ' ' + token.text;
        current.endMs = token.endMs ?? current.endMs;
      }
    }
  }
  if (current !== undefined) out.push(current);
  return out;
}

function plain(segment: Segment): ExportSegment {
  return { speakerId: segment.speakerId, channelIndex: segment.channelIndex, startMs: segment.startMs, endMs: segment.endMs, text: segment.text };
}

/**
 * Wraps text at word boundaries into lines of at most `max` characters (spec: maxCharactersPerLine,
 * srt and txt). A word longer than `max` gets a line of its own and is never cut.
 */
export function wrapText(text: string, max: number | undefined): string[] {
  if (max === undefined || text === '') return [text];
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line === '') line = word;
    else if ([...line].length + 1 + [...word].length <= max) line += ' ' + word;
    else {
      lines.push(line);
      line = word;
    }
  }
  if (line !== '') lines.push(line);
  return lines;
}

/** `HH:MM:SS<sep>mmm`. */
export function clock(ms: number, separator: '.' | ','): string {
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = Math.floor((ms % 60_000) / 1000);
  const frac = Math.floor(ms % 1000);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${two(h)}:${two(m)}:${two(s)}${separator}${String(frac).padStart(3, '0')}`;
}

/** The per-segment header line of txt, html, docx and pdf: `[start - end] speaker:` as enabled. */
export function segmentHeader(segment: ExportSegment, options: ExportOptions): string {
  const parts: string[] = [];
  if (options.includeTimestamps && segment.startMs !== null && segment.endMs !== null) parts.push(`[${clock(segment.startMs, '.')} - ${clock(segment.endMs, '.')}]`);
  if (options.includeSpeakers && segment.speakerId !== null) parts.push(`${segment.speakerId}:`);
  return parts.join(' ');
}
