import { Violations } from '../../errors.js';
import { LIMITS, type RealtimeSessionOptions } from '@soundclone/core/internal';
import { bool, oneOf, plainObject, str, strArray, unknownKeys } from '../../domain/validate.js';
import { SUPPORTED_LANGUAGES } from '../../domain/transcriptions/request.js';

/**
 * Realtime session options as validated: core's RealtimeSessionOptions with every default resolved
 * (only rewriteInstruction stays optional). Spec "Capabilities" realtimeParameters: options.inputEncoding,
 * options.segmentCommitMode; "finish" 3: includeAlignment, includeDetectedLanguage, entityCategories,
 * rewriteInstruction. Audio is always PCM16 little-endian mono at 16 kHz.
 *   segmentCommitMode  auto   a segment commits on silence, pause, rotation and finish
 *                      manual a segment commits only on pause, rotation and finish
 */
export interface RealtimeOptions
  extends Required<Pick<RealtimeSessionOptions, Exclude<(typeof REALTIME_OPTION_FIELDS)[number], 'rewriteInstruction'>>>,
    Pick<RealtimeSessionOptions, 'rewriteInstruction'> {}

export interface RealtimeCreateRequest {
  readonly title?: string;
  readonly languageHint: string;
  readonly options: RealtimeOptions;
}

export const REALTIME_OPTION_FIELDS = ['inputEncoding', 'segmentCommitMode', 'includeAlignment', 'includeDetectedLanguage', 'entityCategories', 'rewriteInstruction', 'vocabularyHints', 'processingContentStorage'] as const;

export function validateRealtimeCreate(body: Record<string, unknown>): RealtimeCreateRequest {
  const v = new Violations();
  unknownKeys(v, '', body, ['title', 'languageHint', 'options']);
  const title = str(v, 'title', body['title'], LIMITS.titleMaxChars, { nonEmpty: false });
  const languageHint = oneOf(v, 'languageHint', body['languageHint'], SUPPORTED_LANGUAGES) ?? 'auto';
  const raw = body['options'] ?? {};
  if (!plainObject(raw)) {
    v.add('options', 'must be an object');
    v.throwIfAny();
  }
  const o = raw as Record<string, unknown>;
  const p = 'options.';
  if ('matchKnownSpeakers' in o) v.add(`${p}matchKnownSpeakers`, 'is unavailable and must not be requested (rule 5)');
  unknownKeys(v, p, o, [...REALTIME_OPTION_FIELDS, 'matchKnownSpeakers']);
  const inputEncoding = oneOf(v, `${p}inputEncoding`, o['inputEncoding'], ['pcm_s16le_16'] as const) ?? 'pcm_s16le_16';
  const segmentCommitMode = oneOf(v, `${p}segmentCommitMode`, o['segmentCommitMode'], ['auto', 'manual'] as const) ?? 'auto';
  const includeAlignment = bool(v, `${p}includeAlignment`, o['includeAlignment']) ?? true;
  const includeDetectedLanguage = bool(v, `${p}includeDetectedLanguage`, o['includeDetectedLanguage']) ?? false;
  const entityCategories = strArray(v, `${p}entityCategories`, o['entityCategories'], LIMITS.categoriesMax, 64) ?? [];
  const rewriteInstruction = str(v, `${p}rewriteInstruction`, o['rewriteInstruction'], LIMITS.rewriteInstructionMaxChars);
  const vocabularyHints = strArray(v, `${p}vocabularyHints`, o['vocabularyHints'], LIMITS.vocabularyHintsMax, LIMITS.vocabularyHintMaxChars) ?? [];
  const processingContentStorage = bool(v, `${p}processingContentStorage`, o['processingContentStorage']) ?? false;
  if (rewriteInstruction !== undefined && entityCategories.length > 0) v.add(`${p}rewriteInstruction`, 'cannot be combined with entity detection (rule 1)');
  v.throwIfAny();
  return {
    ...(title !== undefined ? { title } : {}),
    languageHint,
    options: {
      inputEncoding,
      segmentCommitMode,
      includeAlignment,
      includeDetectedLanguage,
      entityCategories,
      ...(rewriteInstruction !== undefined ? { rewriteInstruction } : {}),
      vocabularyHints,
      processingContentStorage,
    },
  };
}
