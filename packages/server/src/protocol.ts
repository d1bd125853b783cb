/**
 * Everything the spec leaves "not shown" that this reference service had to decide, in one place.
 *
 * The spec (shared/spec/service-interface.md) fixes the paths of its endpoint summary, the envelope
 * and the field names. It does not show: the uploads endpoint, transcript downloads, realtime session
 * creation and the socket, HTTP statuses, the error code list, the failure envelope's extra fields, the
 * webhook payload, signature header and retry policy, the socket token, or several limits. Each decision
 * is a constant below and is written up in docs/protocol.md. The SDK mirrors this module on the client
 * side, so it imports nothing and holds no behaviour beyond tiny pure helpers.
 */

/** Spec "Versioning": the version lives in the path prefix. */
export const API_PREFIX = '/sound_clone/api/v1';

/** Request and response headers. Node lowercases incoming names; these are the canonical spellings. */
export const HEADERS = {
  /** Spec "Authentication": every call carries the account's key in this header. */
  accessKey: 'accessKey',
  /** Spec "POST /stt/transcriptions": required on create; ours also requires it on realtime session create. */
  idempotencyKey: 'Idempotency-Key',
  /** Ours: every response carries the request id, also in the failure envelope and in create responses. */
  requestId: 'X-Request-Id',
  /** Ours: set to "true" when a create answered from the idempotency record instead of creating. */
  idempotentReplayed: 'Idempotent-Replayed',
  /** Ours: on 429 and 503, whole seconds the client should wait. */
  retryAfter: 'Retry-After',
  /** Ours: webhook signature, see WEBHOOK below. */
  webhookSignature: 'SoundClone-Signature',
  /** Ours: webhook event id, identical on every retry of one event (replay detection). */
  webhookEventId: 'SoundClone-Event-Id',
  /** Ours: 1-based delivery attempt number of a webhook POST. */
  webhookAttempt: 'SoundClone-Delivery-Attempt',
} as const;

/**
 * Paths relative to API_PREFIX. The first block is the spec's endpoint summary; the second is ours.
 * `{name}` marks a path parameter.
 */
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
  // --- not shown in the spec: ours ---
  /** POST raw media bytes as the body (Content-Type says what it is). */
  uploads: '/uploads',
  /** GET one transcript download; {format} is one of DOWNLOAD_FORMATS. */
  transcriptionDownload: '/stt/transcriptions/{transcriptionId}/download/{format}',
  /** POST creates a realtime session (Idempotency-Key required). */
  realtimeSessions: '/stt/realtime/sessions',
  /** The realtime socket (issue 4). Reserved here so creation can return its URL. */
  realtimeSocket: '/stt/realtime/socket',
} as const;

/** Fills `{name}` placeholders, percent-encoding each value. */
export function buildPath(template: string, params: Record<string, string> = {}): string {
  return API_PREFIX + template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new TypeError(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** Spec "REST response envelope". */
export const ENVELOPE_CODE = { success: 1, failure: -1 } as const;

/**
 * Error codes and their HTTP statuses. The spec names IDEMPOTENCY_CONFLICT and INPUT_INVALID and the
 * media URL reasons; the rest and every status are ours. A failure envelope is
 * `{ code: -1, message, errorCode, requestId, details? }` (no `data`, as the spec says data is present
 * on success).
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
export type ErrorCode = keyof typeof ERROR_STATUS;

/** Spec "Errors" 4: `details.reason` of MEDIA_FETCH_FAILED (and of a refused notifyUrl). */
export const MEDIA_FAILURE_REASONS = [
  'DESTINATION_NOT_ALLOWED',
  'SOURCE_REFUSED',
  'SOURCE_UNAVAILABLE',
  'SOURCE_UNREACHABLE',
  'TOO_MANY_REDIRECTS',
  'UNSUPPORTED_TYPE',
] as const;
export type MediaFailureReason = (typeof MEDIA_FAILURE_REASONS)[number];

/** Ours: how many redirects a media fetch follows; the next one is TOO_MANY_REDIRECTS. */
export const MAX_REDIRECTS = 5;

/** Spec "Limits" plus ours where the spec says "not shown". */
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
  /** Ours: uploads and fetched media. */
  uploadMaxBytes: 100 * 1024 * 1024,
  /** Ours. */
  titleMaxChars: 256,
  /** Ours: "Maximum and default of waitTimeoutMs: not shown". */
  waitTimeoutMsMax: 120_000,
  waitTimeoutMsDefault: 30_000,
  /** Ours: JSON request bodies. */
  jsonBodyMaxBytes: 1024 * 1024,
  /** Ours. */
  idempotencyKeyMaxChars: 255,
  /** Ours. */
  mediaUrlMaxChars: 2048,
  /** Spec rule 3. */
  separateChannelsMaxChannels: 5,
  /** Spec "Limits": clientMetadata. */
  clientMetadataMaxBytes: 16 * 1024,
  clientMetadataMaxDepth: 2,
  /** Ours. */
  notificationSigningSecretMaxChars: 1024,
  /** Spec "finish" 3: supplement wait. */
  finishSupplementWaitMs: 8000,
} as const;

/** Spec "Capabilities": downloadFormats. */
export const DOWNLOAD_FORMATS = ['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf'] as const;
export type DownloadFormat = (typeof DOWNLOAD_FORMATS)[number];

export const DOWNLOAD_CONTENT_TYPES: Record<DownloadFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  segmented_json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pdf: 'application/pdf',
};

export const MODELS = { batch: 'svc_stt_v1', realtime: 'svc_stt_realtime_v1' } as const;

/** Spec "States and transitions". */
export const TASK_STATUSES = ['QUEUED', 'PROCESSING', 'RECONCILING', 'COMPLETED', 'PARTIAL', 'FAILED'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TERMINAL_STATUSES: readonly TaskStatus[] = ['COMPLETED', 'PARTIAL', 'FAILED'];

/** Ours: the realtime session status while open ("Values of the session status while open: not shown"). */
export const SESSION_OPEN_STATUSES = ['ACTIVE', 'PAUSED', 'FINISHING'] as const;

/**
 * Ours: billing.state values ("Allowed values of billing.state: not shown").
 *   RESERVED  quoted and reserved, task not settled yet
 *   SETTLED   charged; settledCharacters = billableCharacters, the rest of the reservation released
 *   RELEASED  nothing charged; the whole reservation released (FAILED tasks)
 *   ACCRUING  realtime session still open: estimatedCharacters grows, nothing reserved yet
 */
export const BILLING_STATES = ['RESERVED', 'SETTLED', 'RELEASED', 'ACCRUING'] as const;

/**
 * Ours: the rate. Characters per started second of audio = ratePerMinute / 60.
 * Batch reserves for the duration rounded up to whole minutes and settles the duration rounded up
 * to whole seconds, so reserved = settled + released shows real numbers.
 */
export const RATE = { ratePerMinute: 600, rateVersion: '2026-01.v1' } as const;

/** Spec "hasMore" of GET /tts/list is inverted: 1 means NO earlier item, 0 means earlier items remain. */
export const TTS_HAS_MORE = { noEarlierItems: 1, earlierItemsRemain: 0 } as const;

/**
 * Ours: completion webhook. POST JSON to notifyUrl:
 *   { id: "evt_…", type: "transcription.completed" | "transcription.failed", createdAt: ISO,
 *     data: { transcriptionId, status, modelId, billing, error?, clientMetadata } }
 * Signed when options.notificationSigningSecret was given:
 *   SoundClone-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, `${t}.${rawBody}`)>
 * Retried on network errors and non-2xx answers after each delay of retryDelaysMs (a new t and v1 per
 * attempt, the same event id and body). Receivers should refuse |now - t| > toleranceSec.
 */
export const WEBHOOK = {
  signatureVersion: 'v1',
  defaultRetryDelaysMs: [1000, 5000, 30_000, 120_000, 600_000],
  recommendedToleranceSec: 300,
  timeoutMs: 10_000,
  eventTypes: ['transcription.completed', 'transcription.failed'] as const,
} as const;

/** Builds the signed payload string: spec leaves the scheme to us (see WEBHOOK). */
export function webhookSignedPayload(timestampSec: number, rawBody: string): string {
  return `${timestampSec}.${rawBody}`;
}

/** Formats the signature header value from a timestamp and hex digests (several during secret rotation). */
export function formatWebhookSignature(timestampSec: number, hexDigests: readonly string[]): string {
  return [`t=${timestampSec}`, ...hexDigests.map((d) => `v1=${d}`)].join(',');
}

/**
 * Ours: realtime socket token for browsers (issue 4 uses it): `rtt_<sessionId>.<expiresUnixSec>.<sig>`
 * where sig = base64url(HMAC-SHA256(serverSecret, `${sessionId}.${expiresUnixSec}`)). Only the server can
 * check it; clients treat it as opaque.
 */
export const SOCKET_TOKEN = { prefix: 'rtt_', ttlSec: 600 } as const;

/** Ours: realtime defaults. */
export const REALTIME = {
  sampleRate: 16_000,
  /** Duration of the recovery window (spec: "not shown"). */
  recoveryWindowMs: 60_000,
  firstEpoch: 1,
} as const;

/** Ours: id prefixes, so a stray id is recognisable in logs. Voice ids are decimal (spec: "Long"). */
export const ID_PREFIXES = {
  transcription: 'tr_',
  session: 'rs_',
  upload: 'up_',
  request: 'req_',
  event: 'evt_',
} as const;
