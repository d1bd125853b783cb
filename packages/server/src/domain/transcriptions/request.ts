import {
  ALIGNMENT_LEVELS, CHANNEL_RESULT_MODES, INPUT_ENCODINGS, LIMITS, MODELS, REDACTION_STYLES, literalHostRefusal, protocol,
  type TranscriptionOptions as WireTranscriptionOptions,
} from '@soundclone/core/internal';
import { ApiError, Violations } from '../../errors.js';
import { hostKey } from '../../media/guarded-fetch.js';
import { SERVER_LIMITS } from '../../protocol.js';
import { validateExportFormats, validateExportOptions, type ExportOptions } from './export-options.js';
import { bool, int, jsonDepth, num, oneOf, plainObject, str, strArray, unknownKeys } from '../validate.js';

/**
 * Validation of POST /stt/transcriptions (spec "options fields", "Option combination rules",
 * "exportOptions entry", "Limits"). Every broken rule is collected and reported at once as INPUT_INVALID
 * with details.violations [{ field, rule }]; unknown fields are refused, never dropped.
 */

/**
 * Languages the hint accepts: "auto" plus the ISO 639-1 and ISO 639-3 form of each listed language. The
 * table is core's (protocol.LANGUAGES), so the SDK checks exactly what the service accepts; the hint
 * is echoed as sent.
 */
export const SUPPORTED_LANGUAGES: readonly string[] = protocol.LANGUAGE_HINTS;

/**
 * Ours: entity categories the model accepts at run time. Submit accepts any string (spec rule 6: a
 * rejected category is detected only when the task runs); a task asking for any other category ends
 * FAILED with INPUT_INVALID and its reservation released.
 */
export const SUPPORTED_ENTITY_CATEGORIES = ['all', 'pii', 'phi', 'pci', 'name', 'email', 'phone_number', 'address', 'date', 'organization', 'location'] as const;

const TOP_LEVEL = ['uploadId', 'mediaUrl', 'audioTrackIndex', 'languageHint', 'title', 'modelId', 'options', 'waitForCompletion', 'waitTimeoutMs'];
export const OPTION_FIELDS = [
  'rewriteInstruction', 'includeSoundEvents', 'separateSpeakers', 'maxSpeakerCount', 'speakerMergeSensitivity', 'alignmentLevel',
  'inputEncoding', 'samplingTemperature', 'randomSeed', 'separateChannels', 'channelResultMode', 'entityCategories', 'redactCategories',
  'redactionStyle', 'removeDisfluencies', 'identifyConversationRoles', 'vocabularyHints', 'processingContentStorage', 'exportFormats',
  'exportOptions', 'notifyOnCompletion', 'notifyUrl', 'clientMetadata', 'notificationSigningSecret',
];

export type { ExportOptions } from './export-options.js';

/** Options a create may leave out and the service then resolves a default for. */
type Defaulted =
  | 'includeSoundEvents' | 'separateSpeakers' | 'alignmentLevel' | 'inputEncoding' | 'separateChannels' | 'channelResultMode' | 'entityCategories'
  | 'redactCategories' | 'removeDisfluencies' | 'identifyConversationRoles' | 'vocabularyHints' | 'processingContentStorage' | 'exportFormats';
/** Options that stay absent when a create leaves them out. */
type Optional = 'rewriteInstruction' | 'maxSpeakerCount' | 'speakerMergeSensitivity' | 'samplingTemperature' | 'randomSeed' | 'redactionStyle' | 'notifyUrl' | 'notificationSigningSecret';

/**
 * A create's options as validated: core's TranscriptionOptions (the shape the SDK sends) with the
 * defaults resolved (separateSpeakers: true for single-channel processing, false with separateChannels).
 */
export interface TranscriptionOptions extends Required<Pick<WireTranscriptionOptions, Defaulted>>, Pick<WireTranscriptionOptions, Optional> {
  readonly exportOptions: readonly ExportOptions[];
  /** Ours, resolved from notifyUrl and notifyOnCompletion: true when notifyUrl is present unless notifyOnCompletion is false. */
  readonly notify: boolean;
  /** Echoed as sent (a plain object, checked for depth and size). */
  readonly clientMetadata?: unknown;
}

export interface TranscriptionRequest {
  readonly source: { readonly kind: 'upload'; readonly uploadId: string } | { readonly kind: 'url'; readonly mediaUrl: string };
  readonly audioTrackIndex?: number;
  readonly languageHint: string;
  readonly title?: string;
  readonly modelId: string;
  readonly options: TranscriptionOptions;
  readonly waitForCompletion: boolean;
  readonly waitTimeoutMs: number;
}

export function parseHttpUrl(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

function url(v: Violations, field: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value.length > LIMITS.mediaUrlMaxChars || parseHttpUrl(value) === undefined) {
    v.add(field, `must be an absolute http or https URL of at most ${LIMITS.mediaUrlMaxChars} characters`);
    return undefined;
  }
  return value;
}

export function validateTranscriptionRequest(body: Record<string, unknown>): TranscriptionRequest {
  const v = new Violations();
  unknownKeys(v, '', body, TOP_LEVEL);

  const uploadId = str(v, 'uploadId', body['uploadId'], 128);
  const mediaUrl = url(v, 'mediaUrl', body['mediaUrl']);
  const hasUpload = body['uploadId'] !== undefined;
  const hasUrl = body['mediaUrl'] !== undefined;
  if (hasUpload === hasUrl) v.add('uploadId', 'exactly one of uploadId or mediaUrl is required');

  const audioTrackIndex = int(v, 'audioTrackIndex', body['audioTrackIndex'], 0, 1023);
  const languageHint = oneOf(v, 'languageHint', body['languageHint'], SUPPORTED_LANGUAGES) ?? 'auto';
  const title = str(v, 'title', body['title'], LIMITS.titleMaxChars, { nonEmpty: false });
  const modelId = body['modelId'] === undefined ? MODELS.batch : oneOf(v, 'modelId', body['modelId'], [MODELS.batch]) ?? MODELS.batch;
  const waitForCompletion = bool(v, 'waitForCompletion', body['waitForCompletion']) ?? false;
  const waitTimeoutMs = int(v, 'waitTimeoutMs', body['waitTimeoutMs'], 0, LIMITS.waitTimeoutMsMax);
  if (body['waitTimeoutMs'] !== undefined && body['waitForCompletion'] !== true) v.add('waitTimeoutMs', 'requires waitForCompletion true');

  let options: TranscriptionOptions | undefined;
  if (body['options'] !== undefined && !plainObject(body['options'])) v.add('options', 'must be an object');
  else options = validateOptions(v, (body['options'] as Record<string, unknown> | undefined) ?? {});

  v.throwIfAny();
  return {
    source: hasUpload ? { kind: 'upload', uploadId: uploadId as string } : { kind: 'url', mediaUrl: mediaUrl as string },
    ...(audioTrackIndex !== undefined ? { audioTrackIndex } : {}),
    languageHint,
    ...(title !== undefined ? { title } : {}),
    modelId,
    options: options as TranscriptionOptions,
    waitForCompletion,
    waitTimeoutMs: waitTimeoutMs ?? SERVER_LIMITS.waitTimeoutMsDefault,
  };
}

/**
 * notifyUrl is a public URL (spec "options fields"): a literal refused address (http://10.1.2.3/,
 * http://[::1]/, http://169.254.169.254/) is refused at submit as INPUT_INVALID with the violation and
 * details.reason DESTINATION_NOT_ALLOWED, mediaUrl's reason. Host names are judged when the webhook
 * connects (guarded-fetch.ts). `allowHosts` (test-only) exempts exactly those host:port pairs, as it
 * does for delivery.
 */
export function checkNotifyDestination(request: TranscriptionRequest, allowHosts: ReadonlySet<string>): void {
  const notifyUrl = request.options.notifyUrl;
  if (notifyUrl === undefined) return;
  const url = new URL(notifyUrl);
  if (allowHosts.has(hostKey(url))) return;
  const refusal = literalHostRefusal(url);
  if (refusal === undefined) return;
  const violation = { field: 'options.notifyUrl', rule: `must be a public URL; its host is a ${refusal} address (DESTINATION_NOT_ALLOWED)` };
  throw new ApiError('INPUT_INVALID', `${violation.field}: ${violation.rule}`, {
    violations: [violation], reason: 'DESTINATION_NOT_ALLOWED', refusal, host: url.hostname,
  });
}

function validateOptions(v: Violations, o: Record<string, unknown>): TranscriptionOptions {
  const p = 'options.';
  // Rule 5: matchKnownSpeakers is unavailable, whatever its value.
  if ('matchKnownSpeakers' in o) v.add(`${p}matchKnownSpeakers`, 'is unavailable and must not be requested (rule 5)');
  unknownKeys(v, p, o, [...OPTION_FIELDS, 'matchKnownSpeakers']);

  const rewriteInstruction = str(v, `${p}rewriteInstruction`, o['rewriteInstruction'], LIMITS.rewriteInstructionMaxChars);
  const includeSoundEvents = bool(v, `${p}includeSoundEvents`, o['includeSoundEvents']);
  const separateSpeakersRaw = bool(v, `${p}separateSpeakers`, o['separateSpeakers']);
  const maxSpeakerCount = int(v, `${p}maxSpeakerCount`, o['maxSpeakerCount'], LIMITS.maxSpeakerCountMin, LIMITS.maxSpeakerCountMax);
  const speakerMergeSensitivity = num(v, `${p}speakerMergeSensitivity`, o['speakerMergeSensitivity'], LIMITS.speakerMergeSensitivityMin, LIMITS.speakerMergeSensitivityMax);
  const alignmentLevel = oneOf(v, `${p}alignmentLevel`, o['alignmentLevel'], ALIGNMENT_LEVELS) ?? 'word';
  const inputEncoding = oneOf(v, `${p}inputEncoding`, o['inputEncoding'], INPUT_ENCODINGS) ?? 'other';
  const samplingTemperature = num(v, `${p}samplingTemperature`, o['samplingTemperature'], LIMITS.samplingTemperatureMin, LIMITS.samplingTemperatureMax);
  const randomSeed = int(v, `${p}randomSeed`, o['randomSeed'], 0, Number.MAX_SAFE_INTEGER);
  const separateChannels = bool(v, `${p}separateChannels`, o['separateChannels']) ?? false;
  const channelResultModeRaw = oneOf(v, `${p}channelResultMode`, o['channelResultMode'], CHANNEL_RESULT_MODES);
  const entityCategories = strArray(v, `${p}entityCategories`, o['entityCategories'], LIMITS.categoriesMax, 64) ?? [];
  const redactCategories = strArray(v, `${p}redactCategories`, o['redactCategories'], LIMITS.categoriesMax, 64) ?? [];
  const redactionStyle = oneOf(v, `${p}redactionStyle`, o['redactionStyle'], REDACTION_STYLES);
  const removeDisfluencies = bool(v, `${p}removeDisfluencies`, o['removeDisfluencies']) ?? false;
  const identifyConversationRoles = bool(v, `${p}identifyConversationRoles`, o['identifyConversationRoles']) ?? false;
  const vocabularyHints = strArray(v, `${p}vocabularyHints`, o['vocabularyHints'], LIMITS.vocabularyHintsMax, LIMITS.vocabularyHintMaxChars) ?? [];
  const processingContentStorage = bool(v, `${p}processingContentStorage`, o['processingContentStorage']) ?? false;
  const exportFormats = validateExportFormats(v, o['exportFormats']);
  const exportOptions = validateExportOptions(v, o['exportOptions']);
  const notifyOnCompletion = bool(v, `${p}notifyOnCompletion`, o['notifyOnCompletion']);
  const notifyUrl = url(v, `${p}notifyUrl`, o['notifyUrl']);
  const secret = str(v, `${p}notificationSigningSecret`, o['notificationSigningSecret'], LIMITS.notificationSigningSecretMaxChars);
  const clientMetadata = o['clientMetadata'];
  if (clientMetadata !== undefined) {
    if (!plainObject(clientMetadata)) v.add(`${p}clientMetadata`, 'must be an object');
    else {
      if (jsonDepth(clientMetadata) > LIMITS.clientMetadataMaxDepth) v.add(`${p}clientMetadata`, `must be at most ${LIMITS.clientMetadataMaxDepth} levels deep`);
      if (Buffer.byteLength(JSON.stringify(clientMetadata)) > LIMITS.clientMetadataMaxBytes) v.add(`${p}clientMetadata`, `must be at most ${LIMITS.clientMetadataMaxBytes} bytes as JSON`);
    }
  }

  // Speaker separation is on by default for single-channel processing (spec "separateSpeakers").
  const separateSpeakers = separateSpeakersRaw ?? !separateChannels;
  const hasEntities = entityCategories.length > 0 || redactCategories.length > 0;

  // Field dependencies.
  // (With separateChannels, rule 2 below reports these instead.)
  if (!separateChannels) {
    if (speakerMergeSensitivity !== undefined && !separateSpeakers) v.add(`${p}speakerMergeSensitivity`, 'requires speaker separation');
    if (identifyConversationRoles && !separateSpeakers) v.add(`${p}identifyConversationRoles`, 'requires speaker separation');
    if (maxSpeakerCount !== undefined && !separateSpeakers) v.add(`${p}maxSpeakerCount`, 'requires speaker separation');
  }
  if (speakerMergeSensitivity !== undefined && maxSpeakerCount !== undefined) v.add(`${p}speakerMergeSensitivity`, 'cannot be combined with maxSpeakerCount');
  for (const [i, c] of redactCategories.entries()) if (!entityCategories.includes(c)) v.add(`${p}redactCategories[${i}]`, 'must also be listed in entityCategories');
  if (redactionStyle !== undefined && redactCategories.length === 0) v.add(`${p}redactionStyle`, 'requires redactCategories');
  if (channelResultModeRaw !== undefined && !separateChannels) v.add(`${p}channelResultMode`, 'requires separateChannels true');
  if (notifyOnCompletion === true && notifyUrl === undefined && o['notifyUrl'] === undefined) v.add(`${p}notifyOnCompletion`, 'true requires notifyUrl');
  if (secret !== undefined && o['notifyUrl'] === undefined) v.add(`${p}notificationSigningSecret`, 'requires notifyUrl');

  // Rule 1.
  if (rewriteInstruction !== undefined) {
    if (hasEntities) v.add(`${p}rewriteInstruction`, 'cannot be combined with entity detection or redaction (rule 1)');
    if (separateChannels) v.add(`${p}rewriteInstruction`, 'cannot be combined with separateChannels (rule 1)');
  }
  // Rule 2.
  if (separateChannels) {
    if (separateSpeakersRaw === true) v.add(`${p}separateSpeakers`, 'multi-channel processing does not separate speakers (rule 2)');
    if (o['maxSpeakerCount'] !== undefined) v.add(`${p}maxSpeakerCount`, 'cannot be combined with separateChannels (rule 2)');
    if (o['speakerMergeSensitivity'] !== undefined) v.add(`${p}speakerMergeSensitivity`, 'cannot be combined with separateChannels (rule 2)');
    if (o['identifyConversationRoles'] !== undefined) v.add(`${p}identifyConversationRoles`, 'cannot be combined with separateChannels (rule 2)');
    if (inputEncoding === 'pcm_s16le_16') v.add(`${p}inputEncoding`, 'pcm_s16le_16 cannot be combined with separateChannels (rule 2)');
  }
  // Rule 4.
  if (separateChannels && channelResultModeRaw === 'combined') {
    if (alignmentLevel === 'none') v.add(`${p}channelResultMode`, 'combined requires alignment (alignmentLevel word or character) (rule 4)');
    if (hasEntities) v.add(`${p}channelResultMode`, 'combined cannot be combined with entity detection or redaction (rule 4)');
  }

  return {
    ...(rewriteInstruction !== undefined ? { rewriteInstruction } : {}),
    includeSoundEvents: includeSoundEvents ?? false,
    separateSpeakers,
    ...(maxSpeakerCount !== undefined ? { maxSpeakerCount } : {}),
    ...(speakerMergeSensitivity !== undefined ? { speakerMergeSensitivity } : {}),
    alignmentLevel,
    inputEncoding,
    ...(samplingTemperature !== undefined ? { samplingTemperature } : {}),
    ...(randomSeed !== undefined ? { randomSeed } : {}),
    separateChannels,
    channelResultMode: channelResultModeRaw ?? 'separate',
    entityCategories,
    redactCategories,
    ...(redactionStyle !== undefined ? { redactionStyle } : {}),
    removeDisfluencies,
    identifyConversationRoles,
    vocabularyHints,
    processingContentStorage,
    exportFormats,
    exportOptions,
    notify: notifyUrl !== undefined && notifyOnCompletion !== false,
    ...(notifyUrl !== undefined ? { notifyUrl } : {}),
    ...(clientMetadata !== undefined ? { clientMetadata } : {}),
    ...(secret !== undefined ? { notificationSigningSecret: secret } : {}),
  };
}
