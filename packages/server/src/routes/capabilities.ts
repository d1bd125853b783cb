import {
  ALIGNMENT_LEVELS, CHANNEL_RESULT_MODES, DOWNLOAD_FORMATS, HEADERS, INPUT_ENCODINGS, LIMITS, MODELS, REDACTION_STYLES,
} from '@soundclone/core/internal';
import { MAX_REDIRECTS, RATE, SERVER_LIMITS } from '../protocol.js';
import { available } from '../domain/accounts/billing.js';
import { dec } from '../util/decimal.js';
import { SUPPORTED_ENTITY_CATEGORIES, SUPPORTED_LANGUAGES } from '../domain/transcriptions/request.js';
import type { Account } from '../domain/accounts/accounts.js';
import { MATROSKA_MAX_DEPTH, MATROSKA_MAX_ELEMENTS, MATROSKA_MAX_TRACKS } from '../media/matroska.js';
import { CHANNELS_MAX, RATE_MAX_HZ, RATE_MIN_HZ, WAV_MAX_CHUNKS } from '../media/wav.js';
import type { ConnectionLimits } from '../services.js';
import type { LedgerRow } from '../store/store.js';

/**
 * Spec "Capabilities": what the account may do and which values the write endpoints accept. Every
 * requestParameters entry the spec lists is here; the validators in domain/ enforce the same values.
 */
export function capabilities(
  account: Account,
  ledger: LedgerRow,
  usedVoices: number,
  storage: { usedBytes: string; quotaBytes: string },
  realtimeLimits: Record<string, unknown>,
  limits: ConnectionLimits,
): Record<string, unknown> {
  const c = ledger.chars;
  const exportControl = {
    format: { type: 'string', required: true, values: DOWNLOAD_FORMATS },
    includeSpeakers: { type: 'boolean', default: true },
    includeTimestamps: { type: 'boolean', default: true },
    segmentOnSilenceLongerThanS: { type: 'number', exclusiveMinimum: 0, maximum: LIMITS.exportSecondsMax },
    maxSegmentDurationS: { type: 'number', exclusiveMinimum: 0, maximum: LIMITS.exportSecondsMax },
    maxSegmentChars: { type: 'integer', minimum: 1, maximum: LIMITS.maxSegmentCharsMax, note: 'counts separators inserted when a segment is rebuilt' },
    maxCharactersPerLine: { type: 'integer', minimum: 1, maximum: LIMITS.maxCharactersPerLineMax, note: 'wraps at word boundaries (srt, txt)' },
  };
  return {
    modelId: MODELS.batch,
    modes: { batch: 'AVAILABLE', realtime: 'AVAILABLE' },
    models: [
      { modelId: MODELS.batch, mode: 'BATCH', state: 'AVAILABLE' },
      { modelId: MODELS.realtime, mode: 'REALTIME', state: 'AVAILABLE' },
    ],
    requestParameters: {
      source: { exactlyOneOf: ['uploadId', 'mediaUrl'], mediaUrl: { schemes: ['http', 'https'], maxLength: LIMITS.mediaUrlMaxChars, maxRedirects: MAX_REDIRECTS, refused: ['private', 'loopback', 'link-local', 'unique-local', 'cloud-metadata'] } },
      headers: { [HEADERS.idempotencyKey]: { required: true, maxLength: LIMITS.idempotencyKeyMaxChars } },
      audioTrackIndex: { type: 'integer', minimum: 0, note: 'required when the source has more than one audio track; use media.audioTracks[].index of the upload' },
      languageHint: { type: 'string', values: SUPPORTED_LANGUAGES, default: 'auto' },
      title: { type: 'string', maxLength: LIMITS.titleMaxChars },
      modelId: { type: 'string', values: [MODELS.batch], default: MODELS.batch },
      waitForCompletion: { type: 'boolean', default: false },
      waitTimeoutMs: { type: 'integer', minimum: 0, maximum: LIMITS.waitTimeoutMsMax, default: SERVER_LIMITS.waitTimeoutMsDefault, requires: 'waitForCompletion true' },
      options: {
        rewriteInstruction: { type: 'string', maxLength: LIMITS.rewriteInstructionMaxChars },
        includeSoundEvents: { type: 'boolean', default: false },
        separateSpeakers: { type: 'boolean', default: 'true for single-channel processing' },
        maxSpeakerCount: { type: 'integer', minimum: LIMITS.maxSpeakerCountMin, maximum: LIMITS.maxSpeakerCountMax },
        speakerMergeSensitivity: { type: 'number', minimum: LIMITS.speakerMergeSensitivityMin, maximum: LIMITS.speakerMergeSensitivityMax, requires: 'speaker separation and no maxSpeakerCount' },
        alignmentLevel: { type: 'string', values: ALIGNMENT_LEVELS, default: 'word' },
        inputEncoding: { type: 'string', values: INPUT_ENCODINGS, default: 'other' },
        samplingTemperature: { type: 'number', minimum: LIMITS.samplingTemperatureMin, maximum: LIMITS.samplingTemperatureMax },
        randomSeed: { type: 'integer', minimum: 0 },
        separateChannels: { type: 'boolean', default: false, maxChannels: SERVER_LIMITS.separateChannelsMaxChannels },
        channelResultMode: { type: 'string', values: CHANNEL_RESULT_MODES, default: 'separate', requires: 'separateChannels true' },
        entityCategories: { type: 'array', maxItems: LIMITS.categoriesMax, supportedAtRunTime: SUPPORTED_ENTITY_CATEGORIES, note: 'other categories are rejected when the task runs: FAILED with INPUT_INVALID' },
        redactCategories: { type: 'array', maxItems: LIMITS.categoriesMax, note: 'subset of entityCategories' },
        redactionStyle: { type: 'string', values: REDACTION_STYLES, requires: 'redactCategories' },
        removeDisfluencies: { type: 'boolean', default: false },
        identifyConversationRoles: { type: 'boolean', default: false, requires: 'speaker separation' },
        vocabularyHints: { type: 'array', maxItems: LIMITS.vocabularyHintsMax, maxItemLength: LIMITS.vocabularyHintMaxChars },
        processingContentStorage: { type: 'boolean', default: false, note: 'account eligibility is not verified' },
        exportFormats: { type: 'array', values: DOWNLOAD_FORMATS, note: 'pre-generation only; every format stays downloadable' },
        exportOptions: { type: 'array', items: exportControl },
        notifyOnCompletion: { type: 'boolean', note: 'a notification is sent when notifyUrl is present unless this is false; true requires notifyUrl' },
        notifyUrl: { type: 'string', schemes: ['http', 'https'], note: 'a public URL: a literal private, loopback, link-local, unique-local or cloud-metadata address is refused at submit (details.reason DESTINATION_NOT_ALLOWED); host names are checked when the notification connects' },
        clientMetadata: { type: 'object', maxDepth: LIMITS.clientMetadataMaxDepth, maxBytes: LIMITS.clientMetadataMaxBytes },
        notificationSigningSecret: { type: 'string', writeOnly: true, maxLength: LIMITS.notificationSigningSecretMaxChars },
        matchKnownSpeakers: { state: 'UNAVAILABLE', note: 'must not be requested' },
      },
      combinationRules: [
        'rewriteInstruction cannot be combined with entity detection, redaction or separateChannels',
        'separateChannels cannot be combined with separateSpeakers true, maxSpeakerCount, speakerMergeSensitivity, identifyConversationRoles or inputEncoding pcm_s16le_16',
        `the selected audio track can have at most ${SERVER_LIMITS.separateChannelsMaxChannels} channels for separateChannels`,
        'channelResultMode combined requires alignment and cannot be combined with entity detection or redaction',
        'matchKnownSpeakers is unavailable',
      ],
    },
    realtimeParameters: {
      headers: { [HEADERS.idempotencyKey]: { required: true, maxLength: LIMITS.idempotencyKeyMaxChars } },
      audio: { encoding: 'pcm_s16le', sampleRate: 16_000, channels: 1 },
      options: {
        inputEncoding: { type: 'string', values: ['pcm_s16le_16'], default: 'pcm_s16le_16' },
        segmentCommitMode: { type: 'string', values: ['auto', 'manual'], default: 'auto' },
        includeAlignment: { type: 'boolean', default: true },
        includeDetectedLanguage: { type: 'boolean', default: false },
        entityCategories: { type: 'array', maxItems: LIMITS.categoriesMax },
        rewriteInstruction: { type: 'string', maxLength: LIMITS.rewriteInstructionMaxChars },
        vocabularyHints: { type: 'array', maxItems: LIMITS.vocabularyHintsMax, maxItemLength: LIMITS.vocabularyHintMaxChars },
        processingContentStorage: { type: 'boolean', default: false },
      },
      finishSupplementWaitMs: SERVER_LIMITS.finishSupplementWaitMs,
      // Ours: what creation requires and per-account fairness (docs/protocol.md "Realtime spending",
      // "Per-account limits"); openSessions is this account's count now.
      limits: realtimeLimits,
    },
    downloadFormats: DOWNLOAD_FORMATS,
    // Ours: what a client must respect to keep its connections (docs/protocol.md "Connection limits").
    limits: {
      http: { ...limits.http, jsonBodyMaxBytes: SERVER_LIMITS.jsonBodyMaxBytes },
      socket: limits.socket,
    },
    account: {
      plan: account.plan.name,
      planKey: account.plan.key,
      status: account.cancelled ? 'cancellation upon expiration' : 'active',
      rate: { ratePerMinute: dec(RATE.ratePerMinute), rateVersion: RATE.rateVersion, unit: 'Characters' },
      balances: {
        monthlyCharacters: { total: dec(c.monthlyTotal), used: dec(c.monthlyUsed) },
        orderCharacters: { total: dec(c.orderTotal), used: dec(c.orderUsed) },
        reservedCharacters: dec(c.reserved),
        availableCharacters: dec(available(ledger) < 0n ? 0n : available(ledger)),
      },
      voices: { used: usedVoices, total: account.totalVoices },
      // Ours (docs/protocol.md "Uploads"): media bytes held (uploads, and fetched media while its task runs).
      storage: { usedBytes: storage.usedBytes, quotaBytes: storage.quotaBytes },
    },
    media: {
      maxBytes: dec(LIMITS.uploadMaxBytes),
      maxDurationMs: dec(SERVER_LIMITS.mediaMaxDurationMs),
      sampleRateHz: { minimum: RATE_MIN_HZ, maximum: RATE_MAX_HZ },
      maxChannels: CHANNELS_MAX,
      wav: { maxChunks: WAV_MAX_CHUNKS },
      matroska: { maxDepth: MATROSKA_MAX_DEPTH, maxElements: MATROSKA_MAX_ELEMENTS, maxTracks: MATROSKA_MAX_TRACKS },
    },
  };
}
