import { NAMES, SOUND_EVENT_TEXT } from '../../recognition/words.js';
import type { RecognitionResult, RecognizedSegment, RecognizedWord } from '../../recognition/recognizer.js';
import type { CharacterAlignment, Segment, Token, Transcript } from '@soundclone/core/internal';
import type { TranscriptionOptions } from './request.js';

/**
 * The public transcript (spec "Transcription task": transcript fields) and how a recognition result
 * becomes one. The shapes are core's (types/transcription.ts), the ones the SDK reads; element
 * structures the spec leaves "not shown" are ours (docs/protocol.md):
 *   token      { text, type: word|sound_event, startMs, endMs, confidence }   (times null without alignment)
 *   speaker    { speakerId, label, role }                                      (role with identifyConversationRoles)
 *   entity     { id, category, text, segmentId, startMs, endMs, redacted }
 *   channel    { channelIndex, text, languageCode, languageConfidence }
 *   character  { char, startMs, endMs }                                        (alignmentLevel character)
 * Segment and token times are JSON numbers of milliseconds; audioDurationMs and billing are strings.
 */
export type { Token, Segment, Transcript } from '@soundclone/core/internal';

/** Entity categories that find the recogniser's name words. */
const NAME_CATEGORIES = new Set(['name', 'pii', 'all']);

export function speakerId(index: number): string {
  return `speaker_${index + 1}`;
}

const ROLES = ['agent', 'customer'];

export function buildTranscript(result: RecognitionResult, options: TranscriptionOptions): Transcript {
  const aligned = options.alignmentLevel !== 'none';
  const findNames = options.entityCategories.some((c) => NAME_CATEGORIES.has(c));
  const redactNames = options.redactCategories.some((c) => NAME_CATEGORIES.has(c));
  const entities: Record<string, unknown>[] = [];
  const speakerIndexes = new Set<number>();

  let ordered: Array<{ channelIndex: number; segment: RecognizedSegment }> = [];
  for (const channel of result.channels) for (const segment of channel.segments) ordered.push({ channelIndex: channel.channelIndex, segment });
  if (options.channelResultMode === 'combined') ordered = ordered.sort((a, b) => a.segment.startMs - b.segment.startMs || a.channelIndex - b.channelIndex);

  const segments: Segment[] = ordered.map(({ channelIndex, segment }, i) => {
    const id = `seg_${String(i + 1).padStart(4, '0')}`;
    const tokens = segment.words.map((w): Token => {
      const isName = findNames && NAMES.has(w.text);
      const text = isName && redactNames ? redact(w.text, options.redactionStyle) : w.text;
      if (isName) {
        entities.push({ id: `ent_${entities.length + 1}`, category: 'name', text, segmentId: id, startMs: aligned ? w.startMs : null, endMs: aligned ? w.endMs : null, redacted: redactNames });
      }
      return { text, type: w.text === SOUND_EVENT_TEXT ? 'sound_event' : 'word', startMs: aligned ? w.startMs : null, endMs: aligned ? w.endMs : null, confidence: w.confidence };
    });
    const text = tokens.map((t) => t.text).join(' ');
    const speaker = options.separateSpeakers ? segment.speakerIndex : undefined;
    if (speaker !== undefined) speakerIndexes.add(speaker);
    return {
      id,
      speakerId: speaker === undefined ? null : speakerId(speaker),
      channelIndex,
      startMs: aligned ? segment.startMs : null,
      endMs: aligned ? segment.endMs : null,
      text,
      timingStatus: aligned ? 'ALIGNED' : 'NOT_REQUESTED',
      tokens,
      characterAlignments: options.alignmentLevel === 'character' ? characterAlignments(segment.words, tokens) : [],
    };
  });

  const text = segments.map((s) => s.text).join(' ');
  const detected = result.channels.find((c) => c.languageCode !== null);
  const revision = revise(text, options.rewriteInstruction);
  return {
    text,
    languageCode: detected?.languageCode ?? null,
    languageConfidence: detected?.languageConfidence ?? null,
    speakers: [...speakerIndexes].sort((a, b) => a - b).map((i) => ({
      speakerId: speakerId(i),
      label: `Speaker ${i + 1}`,
      role: options.identifyConversationRoles ? (ROLES[i] ?? 'participant') : null,
    })),
    segments,
    channelResults: options.separateChannels
      ? result.channels.map((c) => ({
          channelIndex: c.channelIndex,
          text: segments.filter((s) => s.channelIndex === c.channelIndex).map((s) => s.text).join(' '),
          languageCode: c.languageCode,
          languageConfidence: c.languageConfidence,
        }))
      : [],
    entities,
    ...revision,
  };
}

function redact(word: string, style: TranscriptionOptions['redactionStyle']): string {
  if (style === 'mask') return '*'.repeat(word.length);
  if (style === 'replace') return '[NAME]';
  return '[REDACTED]';
}

/** Spreads each word's time evenly over its characters (alignmentLevel character). */
function characterAlignments(words: readonly RecognizedWord[], tokens: readonly Token[]): CharacterAlignment[] {
  const out: CharacterAlignment[] = [];
  words.forEach((w, i) => {
    const chars = [...(tokens[i]?.text ?? w.text)];
    const step = (w.endMs - w.startMs) / Math.max(1, chars.length);
    chars.forEach((char, k) => out.push({ char, startMs: Math.round(w.startMs + k * step), endMs: Math.round(w.startMs + (k + 1) * step) }));
  });
  return out;
}

/** The deterministic "rewrite": sentence case and a final period (revisionStatus APPLIED or EMPTY). */
function revise(text: string, instruction: string | undefined): Pick<Transcript, 'revisionStatus' | 'revisedText' | 'revisionErrorCode'> {
  if (instruction === undefined) return { revisionStatus: 'NOT_REQUESTED', revisedText: null, revisionErrorCode: null };
  if (text === '') return { revisionStatus: 'EMPTY', revisedText: null, revisionErrorCode: null };
  return { revisionStatus: 'APPLIED', revisedText: text.charAt(0).toUpperCase() + text.slice(1) + '.', revisionErrorCode: null };
}
