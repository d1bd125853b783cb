/**
 * Every assumption the client makes about what the spec leaves "not shown", in one file.
 *
 * The spec (shared/spec/service-interface.md) fixes the path prefix, the endpoint summary, the
 * envelope and the field names. Everything else below (uploads, downloads, realtime session creation,
 * header names, HTTP statuses, the error code list, the webhook signature scheme, several limits) is
 * the reference service's decision (packages/server/src/protocol.ts, docs/protocol.md), mirrored here
 * without importing it: the SDK must not depend on the server. A user adapting the SDK to the real
 * service edits only this file.
 */

/** Spec "Versioning": the version lives in the path prefix. */
export const API_PREFIX = '/sound_clone/api/v1';

/** Header names. */
export const HEADERS = {
  /** Spec "Authentication". */
  accessKey: 'accessKey',
  /** Spec "POST /stt/transcriptions"; ours on realtime session creation too. */
  idempotencyKey: 'Idempotency-Key',
  /** Ours: the request id of every response (also in the failure envelope). */
  requestId: 'X-Request-Id',
  /** Ours: "true" when a create was answered from the idempotency record. */
  idempotentReplayed: 'Idempotent-Replayed',
  /** Standard; ours on 429 and 503 in whole seconds (an HTTP-date is also understood). */
  retryAfter: 'Retry-After',
  /** Ours: webhook signature header, `t=<unix s>,v1=<hex>[,v1=<hex>...]`. */
  webhookSignature: 'SoundClone-Signature',
  /** Ours: webhook event id, identical on every delivery attempt of one event. */
  webhookEventId: 'SoundClone-Event-Id',
  webhookAttempt: 'SoundClone-Delivery-Attempt',
} as const;

/** Paths relative to API_PREFIX; `{name}` marks a path parameter. The second block is ours. */
export const PATHS = {
  voices: '/voices',
  voicesCreate: '/voices/tts',
  voicesDesignSave: '/voices/design/save',
  voicesRename: '/voices/rename/{id}',
  userInfo: '/user/info',
  ttsList: '/tts/list',
  cover: '/cover',
  sttCapabilities: '/stt/capabilities',
  transcriptions: '/stt/transcriptions',
  transcription: '/stt/transcriptions/{transcriptionId}',
  realtimeSession: '/stt/realtime/sessions/{sessionId}',
  realtimePause: '/stt/realtime/sessions/{sessionId}/pause',
  realtimeFinish: '/stt/realtime/sessions/{sessionId}/finish',
  // --- not shown in the spec ---
  uploads: '/uploads',
  transcriptionDownload: '/stt/transcriptions/{transcriptionId}/download/{format}',
  realtimeSessions: '/stt/realtime/sessions',
} as const;

/**
 * Ours: where GET /tts/list takes limit and startBeforeTTSId ("Placement ... not shown"). The reference
 * service accepts both; the query string is what a GET can carry through every proxy and browser.
 */
export const TTS_LIST_PARAMS_IN: 'query' | 'body' = 'query';

/** Spec "REST response envelope". */
export const ENVELOPE_CODE = { success: 1, failure: -1 } as const;

/**
 * Ours: error codes (`errorCode` of the failure envelope `{ code: -1, message, errorCode, requestId,
 * details? }`) and their HTTP statuses. The spec names only IDEMPOTENCY_CONFLICT and INPUT_INVALID.
 */
export const ERROR_STATUS = {
  INPUT_INVALID: 400,
  UNAUTHORIZED: 401,
  INSUFFICIENT_CHARACTERS: 402,
  QUOTA_EXCEEDED: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  IDEMPOTENCY_CONFLICT: 409,
  SESSION_CLOSED: 409,
  TRANSCRIPT_NOT_READY: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_TYPE: 415,
  MEDIA_FETCH_FAILED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  SERVICE_UNAVAILABLE: 503,
} as const;
export type ServiceErrorCode = keyof typeof ERROR_STATUS;

/** The code the client assumes when a failure carries no errorCode (a proxy's HTML page, say). */
export function errorCodeForStatus(status: number): string {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 429) return 'RATE_LIMITED';
  if (status === 503) return 'SERVICE_UNAVAILABLE';
  if (status >= 500) return 'INTERNAL';
  return `HTTP_${status}`;
}

/**
 * Retry semantics of statuses (ours). `retryable`: worth retrying a call that is safe to repeat.
 * `notProcessed`: the service refused before doing any work, so even a non-idempotent call (voice
 * create, upload) may be sent again. The reference service answers 429 and 503 before processing.
 */
export const RETRY_STATUSES = {
  retryable: [408, 429, 500, 502, 503, 504] as readonly number[],
  notProcessed: [429, 503] as readonly number[],
};

/** Spec "Errors" 4: details.reason of a media URL failure. */
export const MEDIA_FAILURE_REASONS = [
  'DESTINATION_NOT_ALLOWED',
  'SOURCE_REFUSED',
  'SOURCE_UNAVAILABLE',
  'SOURCE_UNREACHABLE',
  'TOO_MANY_REDIRECTS',
  'UNSUPPORTED_TYPE',
] as const;
export type MediaFailureReason = (typeof MEDIA_FAILURE_REASONS)[number];

/** Spec "Limits", plus ours where the spec says "not shown" (marked). Used for client-side checks. */
export const LIMITS = {
  voiceNameMaxChars: 32,
  voiceFileMaxBytes: 10 * 1024 * 1024,
  voiceFilesMax: 25,
  coverIdsMax: 500,
  ttsListLimitMin: 10,
  ttsListLimitMax: 1000,
  ttsListLimitDefault: 10,
  historyPageSizeDefault: 20,
  /** Ours. */
  historyPageSizeMax: 100,
  /** Ours: uploads. */
  uploadMaxBytes: 100 * 1024 * 1024,
  /** Ours. */
  titleMaxChars: 256,
  /** Ours: "Maximum and default of waitTimeoutMs: not shown". */
  waitTimeoutMsMax: 120_000,
  /** Ours. */
  idempotencyKeyMaxChars: 255,
  /** Ours. */
  mediaUrlMaxChars: 2048,
  rewriteInstructionMaxChars: 2000,
  maxSpeakerCountMin: 1,
  maxSpeakerCountMax: 32,
  speakerMergeSensitivityMin: 0.1,
  speakerMergeSensitivityMax: 0.4,
  samplingTemperatureMin: 0,
  samplingTemperatureMax: 2,
  categoriesMax: 32,
  vocabularyHintsMax: 1000,
  vocabularyHintMaxChars: 128,
  clientMetadataMaxBytes: 16 * 1024,
  clientMetadataMaxDepth: 2,
  /** Ours. */
  notificationSigningSecretMaxChars: 1024,
  exportSecondsMax: 3600,
  maxSegmentCharsMax: 100_000,
  maxCharactersPerLineMax: 16_384,
} as const;

/** Spec "options fields": accepted values. */
export const ALIGNMENT_LEVELS = ['none', 'word', 'character'] as const;
export const INPUT_ENCODINGS = ['other', 'pcm_s16le_16'] as const;
export const CHANNEL_RESULT_MODES = ['separate', 'combined'] as const;
export const REDACTION_STYLES = ['redact', 'replace', 'mask'] as const;

/** Spec "Capabilities": downloadFormats, and how the client returns each (ours). */
export const DOWNLOAD_FORMATS = ['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];
export const DOWNLOAD_KIND: Readonly<Record<DownloadFormat, 'text' | 'json' | 'bytes'>> = {
  txt: 'text',
  srt: 'text',
  html: 'text',
  json: 'json',
  segmented_json: 'json',
  docx: 'bytes',
  pdf: 'bytes',
};

export const MODELS = { batch: 'svc_stt_v1', realtime: 'svc_stt_realtime_v1' } as const;

/** Spec "States and transitions". */
export const TASK_STATUSES = ['QUEUED', 'PROCESSING', 'RECONCILING', 'COMPLETED', 'PARTIAL', 'FAILED'] as const;
export const TERMINAL_STATUSES = ['COMPLETED', 'PARTIAL', 'FAILED'] as const;

/**
 * Spec "GET /tts/list": hasMore is inverted. 1 means there is NO earlier item; 0 means earlier items
 * remain. A user whose service turns out to use the ordinary meaning flips these two values.
 */
export const TTS_HAS_MORE = { noEarlierItems: 1, earlierItemsRemain: 0 } as const;

/**
 * Ours: completion webhook signature. Header `SoundClone-Signature: t=<unix seconds>,v1=<hex>` where
 * hex = HMAC-SHA256(secret, `${t}.${rawBody}`); several v1 entries may appear. Body:
 * `{ id, type, createdAt, data: { transcriptionId, status, modelId, billing, error?, clientMetadata } }`.
 */
export const WEBHOOK = {
  scheme: 'v1',
  hash: 'SHA-256',
  defaultToleranceSec: 300,
  eventTypes: ['transcription.completed', 'transcription.failed'] as const,
} as const;

export function webhookSignedPayload(timestampSec: number, rawBody: string): string {
  return `${timestampSec}.${rawBody}`;
}

/**
 * Ours: decimal strings. The spec says counts and durations are JSON strings; the client refuses a JSON
 * number there (strict) unless this is true.
 */
export const DECIMALS = { acceptJsonNumbers: false } as const;
