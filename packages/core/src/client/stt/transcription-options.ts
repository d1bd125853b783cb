import {
  ALIGNMENT_LEVELS, CHANNEL_RESULT_MODES, DOWNLOAD_FORMATS, INPUT_ENCODINGS, LANGUAGE_HINTS, LIMITS, REDACTION_STYLES,
} from '../../protocol.js';
import { literalHostRefusal } from '../../http/address-policy.js';
import type { Violation } from '../../errors/api-errors.js';
import type { CreateTranscriptionParams } from '../../types/transcription.js';
import { Checks, isPlainObject, jsonDepth } from '../validation/checks.js';

/**
 * Client-side validation of POST /stt/transcriptions (spec "create a transcription", "options fields",
 * "Option combination rules", "exportOptions entry", "Limits"). Every documented limit and rule is
 * checked before sending and every violation is reported at once (ValidationError). The service stays
 * the authority: it checks again (INPUT_INVALID -> InputInvalidError), and it alone can check:
 *   - rule 3 (at most five channels in the selected track): needs the source's media;
 *   - rule 6 (an entity category the model rejects): only known when the task runs;
 *   - option names beyond the spec's list: passed through unchecked (spec: "Other option names exist").
 * Rules the reference service adds beyond the spec are not repeated here, so the SDK never refuses a
 * request the real service might accept, with two exceptions written up in docs/protocol.md and shared
 * with the service: languageHint is one of protocol.LANGUAGE_HINTS, and a notifyUrl whose host is a
 * literal refused address (loopback, private, link-local, metadata...) is refused before sending.
 * Returns every violation found, none when the request passes; create() throws them as one ValidationError.
 */
export function checkCreateTranscription(params: CreateTranscriptionParams): { readonly violations: readonly Violation[] } {
  return { violations: transcriptionChecks(params).violations };
}

/** The same checks, still open: create() adds its idempotency key's before throwing them all at once. */
export function transcriptionChecks(params: CreateTranscriptionParams): Checks {
  const c = new Checks();
  const body = params as Record<string, unknown>;

  // Source selection: exactly one of uploadId or mediaUrl (spec "Limits").
  const hasUpload = body['uploadId'] !== undefined;
  const hasUrl = body['mediaUrl'] !== undefined;
  if (hasUpload === hasUrl) c.add('uploadId', 'exactly one of uploadId or mediaUrl is required');
  c.string('uploadId', body['uploadId'], 128);
  c.httpUrl('mediaUrl', body['mediaUrl'], LIMITS.mediaUrlMaxChars);
  c.integer('audioTrackIndex', body['audioTrackIndex'], 0);
  c.oneOf('languageHint', body['languageHint'], LANGUAGE_HINTS);
  c.string('title', body['title'], LIMITS.titleMaxChars, { allowEmpty: true });
  c.string('modelId', body['modelId'], 64);
  c.boolean('waitForCompletion', body['waitForCompletion']);
  // waitTimeoutMs: maximum ours (protocol.ts LIMITS.waitTimeoutMsMax); it is a wait budget for the wait.
  c.integer('waitTimeoutMs', body['waitTimeoutMs'], 0, LIMITS.waitTimeoutMsMax);
  if (body['waitTimeoutMs'] !== undefined && body['waitForCompletion'] !== true) c.add('waitTimeoutMs', 'requires waitForCompletion true');

  const options = body['options'];
  if (options !== undefined) {
    if (!isPlainObject(options)) c.add('options', 'must be an object');
    else checkOptions(c, options);
  }
  return c;
}

function checkOptions(c: Checks, o: Record<string, unknown>): void {
  const p = 'options.';
  // Per-field types and limits (spec "options fields", "Limits").
  c.string(`${p}rewriteInstruction`, o['rewriteInstruction'], LIMITS.rewriteInstructionMaxChars);
  c.boolean(`${p}includeSoundEvents`, o['includeSoundEvents']);
  c.boolean(`${p}separateSpeakers`, o['separateSpeakers']);
  c.integer(`${p}maxSpeakerCount`, o['maxSpeakerCount'], LIMITS.maxSpeakerCountMin, LIMITS.maxSpeakerCountMax);
  c.number(`${p}speakerMergeSensitivity`, o['speakerMergeSensitivity'], LIMITS.speakerMergeSensitivityMin, LIMITS.speakerMergeSensitivityMax);
  c.oneOf(`${p}alignmentLevel`, o['alignmentLevel'], ALIGNMENT_LEVELS);
  c.oneOf(`${p}inputEncoding`, o['inputEncoding'], INPUT_ENCODINGS);
  c.number(`${p}samplingTemperature`, o['samplingTemperature'], LIMITS.samplingTemperatureMin, LIMITS.samplingTemperatureMax);
  c.integer(`${p}randomSeed`, o['randomSeed'], 0);
  c.boolean(`${p}separateChannels`, o['separateChannels']);
  c.oneOf(`${p}channelResultMode`, o['channelResultMode'], CHANNEL_RESULT_MODES);
  c.stringArray(`${p}entityCategories`, o['entityCategories'], LIMITS.categoriesMax);
  c.stringArray(`${p}redactCategories`, o['redactCategories'], LIMITS.categoriesMax);
  c.oneOf(`${p}redactionStyle`, o['redactionStyle'], REDACTION_STYLES);
  c.boolean(`${p}removeDisfluencies`, o['removeDisfluencies']);
  c.boolean(`${p}identifyConversationRoles`, o['identifyConversationRoles']);
  c.stringArray(`${p}vocabularyHints`, o['vocabularyHints'], LIMITS.vocabularyHintsMax, LIMITS.vocabularyHintMaxChars);
  c.boolean(`${p}processingContentStorage`, o['processingContentStorage']);
  checkExportFormats(c, o['exportFormats']);
  checkExportOptions(c, o['exportOptions']);
  c.boolean(`${p}notifyOnCompletion`, o['notifyOnCompletion']);
  if (c.httpUrl(`${p}notifyUrl`, o['notifyUrl'], LIMITS.mediaUrlMaxChars) && typeof o['notifyUrl'] === 'string') {
    // notifyUrl is a public URL; the service refuses a literal refused address at submit with
    // details.reason DESTINATION_NOT_ALLOWED (docs/protocol.md "Destinations"). Host names are judged
    // by the service when it connects.
    const refusal = literalHostRefusal(o['notifyUrl']);
    if (refusal !== undefined) c.add(`${p}notifyUrl`, notifyUrlRefusalRule(refusal));
  }
  c.string(`${p}notificationSigningSecret`, o['notificationSigningSecret'], LIMITS.notificationSigningSecretMaxChars);
  checkClientMetadata(c, o['clientMetadata']);

  const separateChannels = o['separateChannels'] === true;
  const separateSpeakers = o['separateSpeakers'] ?? !separateChannels; // default true for single-channel
  const entities = nonEmpty(o['entityCategories']);
  const redaction = nonEmpty(o['redactCategories']) || o['redactionStyle'] !== undefined;

  // Field dependencies (spec "options fields").
  if (o['speakerMergeSensitivity'] !== undefined) {
    if (!separateChannels && separateSpeakers === false) c.add(`${p}speakerMergeSensitivity`, 'requires speaker separation');
    if (o['maxSpeakerCount'] !== undefined) c.add(`${p}speakerMergeSensitivity`, 'cannot be combined with maxSpeakerCount');
  }
  if (o['identifyConversationRoles'] === true && !separateChannels && separateSpeakers === false) {
    c.add(`${p}identifyConversationRoles`, 'requires speaker separation');
  }
  if (Array.isArray(o['redactCategories'])) {
    const detected = Array.isArray(o['entityCategories']) ? (o['entityCategories'] as unknown[]) : [];
    (o['redactCategories'] as unknown[]).forEach((category, i) => {
      if (typeof category === 'string' && !detected.includes(category)) c.add(`${p}redactCategories[${i}]`, 'must also be listed in entityCategories');
    });
  }
  if (o['redactionStyle'] !== undefined && !nonEmpty(o['redactCategories'])) c.add(`${p}redactionStyle`, 'requires redactCategories');
  if (o['notifyOnCompletion'] === true && o['notifyUrl'] === undefined) c.add(`${p}notifyOnCompletion`, 'true requires notifyUrl');

  // Rule 1: rewriteInstruction cannot be combined with entity detection, redaction or separateChannels.
  if (o['rewriteInstruction'] !== undefined) {
    if (entities || redaction) c.add(`${p}rewriteInstruction`, 'cannot be combined with entity detection or redaction (rule 1)');
    if (separateChannels) c.add(`${p}rewriteInstruction`, 'cannot be combined with separateChannels (rule 1)');
  }
  // Rule 2: multi-channel processing does not separate speakers; separateChannels excludes
  // maxSpeakerCount, speakerMergeSensitivity, identifyConversationRoles and pcm_s16le_16 input.
  if (separateChannels) {
    if (o['separateSpeakers'] === true) c.add(`${p}separateSpeakers`, 'multi-channel processing does not separate speakers (rule 2)');
    if (o['maxSpeakerCount'] !== undefined) c.add(`${p}maxSpeakerCount`, 'cannot be combined with separateChannels (rule 2)');
    if (o['speakerMergeSensitivity'] !== undefined) c.add(`${p}speakerMergeSensitivity`, 'cannot be combined with separateChannels (rule 2)');
    if (o['identifyConversationRoles'] === true) c.add(`${p}identifyConversationRoles`, 'cannot be combined with separateChannels (rule 2)');
    if (o['inputEncoding'] === 'pcm_s16le_16') c.add(`${p}inputEncoding`, 'pcm_s16le_16 cannot be combined with separateChannels (rule 2)');
  }
  // Rule 4: multi-channel combined results require alignment and exclude entity detection and redaction.
  if (separateChannels && o['channelResultMode'] === 'combined') {
    if (o['alignmentLevel'] === 'none') c.add(`${p}channelResultMode`, 'combined requires alignment (alignmentLevel word or character) (rule 4)');
    if (entities || redaction) c.add(`${p}channelResultMode`, 'combined cannot be combined with entity detection or redaction (rule 4)');
  }
  // Rule 5: matchKnownSpeakers is unavailable and must not be requested, whatever its value.
  if ('matchKnownSpeakers' in o) c.add(`${p}matchKnownSpeakers`, 'is unavailable and must not be requested (rule 5)');
}

/** The rule text of a refused notifyUrl host, the same words the service uses. */
export function notifyUrlRefusalRule(kind: string): string {
  return `must be a public URL; its host is a ${kind} address (DESTINATION_NOT_ALLOWED)`;
}

function nonEmpty(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function checkExportFormats(c: Checks, value: unknown): void {
  const field = 'options.exportFormats';
  if (value === undefined) return;
  if (!Array.isArray(value)) return c.add(field, 'must be an array of download formats');
  value.forEach((format, i) => c.oneOf(`${field}[${i}]`, format, DOWNLOAD_FORMATS));
}

/** Spec "exportOptions entry". */
function checkExportOptions(c: Checks, value: unknown): void {
  const field = 'options.exportOptions';
  if (value === undefined) return;
  if (!Array.isArray(value)) return c.add(field, 'must be an array of per-format objects');
  value.forEach((entry, i) => {
    const p = `${field}[${i}].`;
    if (!isPlainObject(entry)) return c.add(`${field}[${i}]`, 'must be an object');
    if (entry['format'] === undefined) c.add(`${p}format`, 'is required');
    else c.oneOf(`${p}format`, entry['format'], DOWNLOAD_FORMATS);
    c.boolean(`${p}includeSpeakers`, entry['includeSpeakers']);
    c.boolean(`${p}includeTimestamps`, entry['includeTimestamps']);
    c.number(`${p}segmentOnSilenceLongerThanS`, entry['segmentOnSilenceLongerThanS'], 0, LIMITS.exportSecondsMax, true);
    c.number(`${p}maxSegmentDurationS`, entry['maxSegmentDurationS'], 0, LIMITS.exportSecondsMax, true);
    c.integer(`${p}maxSegmentChars`, entry['maxSegmentChars'], 1, LIMITS.maxSegmentCharsMax);
    c.integer(`${p}maxCharactersPerLine`, entry['maxCharactersPerLine'], 1, LIMITS.maxCharactersPerLineMax);
  });
}

/** Spec "Limits": clientMetadata at most two levels deep and at most 16 KB (as UTF-8 JSON). */
function checkClientMetadata(c: Checks, value: unknown): void {
  const field = 'options.clientMetadata';
  if (value === undefined) return;
  if (!isPlainObject(value)) return c.add(field, 'must be an object');
  if (jsonDepth(value) > LIMITS.clientMetadataMaxDepth) c.add(field, `must be at most ${LIMITS.clientMetadataMaxDepth} levels deep`);
  let json: string | undefined;
  try {
    json = JSON.stringify(value);
  } catch {
    return c.add(field, 'must be serialisable as JSON');
  }
  if (new TextEncoder().encode(json).length > LIMITS.clientMetadataMaxBytes) c.add(field, `must be at most ${LIMITS.clientMetadataMaxBytes} bytes as JSON`);
}
