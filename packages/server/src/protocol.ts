/**
 * Everything the spec leaves "not shown" that this reference service had to decide, in one place.
 *
 * The spec (docs/service-interface.md) fixes the paths of its endpoint summary, the envelope
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
  /** DELETE an upload: frees its bytes from the account's storage quota. */
  upload: '/uploads/{uploadId}',
  /** GET one transcript download; {format} is one of DOWNLOAD_FORMATS. */
  transcriptionDownload: '/stt/transcriptions/{transcriptionId}/download/{format}',
  /** POST creates a realtime session (Idempotency-Key required). */
  realtimeSessions: '/stt/realtime/sessions',
  /** The realtime socket: WebSocket upgrade, see SOCKET_QUERY and docs/protocol.md. */
  realtimeSocket: '/stt/realtime/socket',
  /** TEST-ONLY (server option retainRealtimeAudioSamples): GET the stored PCM16 LE of a session. */
  realtimeDebugAudio: '/stt/realtime/sessions/{sessionId}/audio',
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
  STORAGE_QUOTA_EXCEEDED: 413,
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
  /**
   * Ours: the longest media accepted (uploads and fetched media), 4 hours; longer is 413
   * PAYLOAD_TOO_LARGE with details.problem DURATION_TOO_LONG. Bounds a task's work and its reservation.
   */
  mediaMaxDurationMs: 4 * 60 * 60 * 1000,
  /** Ours: bytes of uploads one account may hold at once (startServer uploadQuotaBytes overrides it). */
  uploadQuotaBytesDefault: 512 * 1024 * 1024,
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

/**
 * Ours: HTTP connection limits of the reference server (docs/protocol.md "Connection limits"), against
 * clients that send slowly (slowloris) or never read what they asked for.
 */
export const HTTP_LIMITS = {
  /** The request line and headers must arrive within this time (else 408 and close). */
  headersTimeoutMs: 10_000,
  /** The whole request, body included, must arrive within this time (else 408 and close). */
  requestTimeoutMs: 120_000,
  /** An idle keep-alive connection is closed after this time. */
  keepAliveTimeoutMs: 5_000,
  /** How often the two timeouts above are checked. */
  timeoutCheckIntervalMs: 1_000,
  /** Response bytes held for one connection above which its next (pipelined) request waits. */
  responseMaxHeldBytes: 1 << 20,
  /** A connection holding more than responseStallBytes unread for this long is closed. */
  responseStallMs: 10_000,
  responseStallBytes: 64 << 10,
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
 * Ours: realtime socket token for browsers (the socket checks it): `rtt_<sessionId>.<expiresUnixSec>.<sig>`
 * where sig = base64url(HMAC-SHA256(serverSecret, `${sessionId}.${expiresUnixSec}`)). Only the server can
 * check it; clients treat it as opaque.
 */
export const SOCKET_TOKEN = { prefix: 'rtt_', ttlSec: 600 } as const;

/**
 * Ours: realtime spending stays within the account's balance (docs/protocol.md "Realtime spending").
 *   create   refused with 402 INSUFFICIENT_CHARACTERS unless the available balance covers the charge
 *            of minimumMs of audio (one started second: 10 Characters at the RATE below)
 *   open     each session holds a reservation equal to what its received audio would settle at now
 *            (whole samples -> ms rounded up -> whole seconds rounded up -> Characters); a frame is
 *            accepted only as far as the reservation can grow within available(), so every open
 *            session of the account draws on the one balance
 *   limit    the sample where the balance is used up: the frame is trimmed there, the session sends
 *            `session.notice` with notice code BALANCE_EXHAUSTED, stops accepting, commits its lines,
 *            settles (never more than the balance) and ends PARTIAL (session.finished, close 4409)
 */
export const REALTIME_SPENDING = {
  minimumMs: 1000,
  /** session.notice `notice.code` when the balance is used up; also listed in the final view's notices. */
  exhaustedNotice: 'BALANCE_EXHAUSTED',
} as const;

/**
 * Ours: per-account fairness, so one account cannot keep realtime unavailable for every other
 * (docs/protocol.md "Per-account limits"). Past either limit realtime creation answers 429 RATE_LIMITED
 * with `details.reason` one of these, `details.limit`, and Retry-After.
 */
export const ACCOUNT_LIMITS = {
  /** Realtime sessions of one account that can still take audio: not finished, window not passed (startServer maxRealtimeSessionsPerAccount). */
  defaultMaxOpenSessions: 8,
  sessionLimitReason: 'ACCOUNT_SESSION_LIMIT',
  /** PocketSphinx decoder slots one account may hold (realtime sessions plus batch channels). */
  decoderLimitReason: 'ACCOUNT_DECODER_LIMIT',
  retryAfterSec: 5,
} as const;

/** Ours: realtime defaults. */
export const REALTIME = {
  sampleRate: 16_000,
  /** Duration of the recovery window (spec: "not shown"). */
  recoveryWindowMs: 60_000,
  firstEpoch: 1,
} as const;

/**
 * Ours: the recognizer cannot serve now. Realtime creation answers 503 SERVICE_UNAVAILABLE with
 * `details.reason` one of these and Retry-After; a task or session whose recognizer failed later ends
 * FAILED with `error.errorCode` RECOGNIZER_UNAVAILABLE (retryable, action RETRY), nothing charged.
 */
export const RECOGNIZER_REFUSALS = {
  /** Every decoder slot is taken (PocketSphinxOptions.maxDecoders). */
  busy: 'RECOGNIZER_BUSY',
  /** A decoder cannot load (model files gone or broken, memory). */
  unavailable: 'RECOGNIZER_UNAVAILABLE',
  /** The server is shutting down. */
  closed: 'RECOGNIZER_CLOSED',
  retryAfterSec: 5,
  /** `error.errorCode` of a task or session that failed because its recognizer did. */
  taskErrorCode: 'RECOGNIZER_UNAVAILABLE',
} as const;

// ---------------------------------------------------------------------------------------------------
// Realtime socket. docs/protocol.md "Realtime socket" is the prose version of this block.
// ---------------------------------------------------------------------------------------------------

/**
 * Query parameters of the socket URL `ws(s)://{host}{API_PREFIX}{PATHS.realtimeSocket}`:
 *   sessionId  required with the accessKey header (Node); optional with a token (must then match it)
 *   token      the creation's socket.token (browsers: they cannot set headers); bound to one session
 * A query parameter rather than a Sec-WebSocket-Protocol entry: the token is short-lived and bound to
 * one session, and a subprotocol entry would have to be echoed back and is mangled by some proxies.
 */
export const SOCKET_QUERY = { sessionId: 'sessionId', token: 'token' } as const;

/** Ours: socket timing and size defaults; session.ready tells the client the values in force. */
export const SOCKET_DEFAULTS = {
  /** The server sends an app-level `ping` this often (browsers cannot see WebSocket pings). */
  heartbeatIntervalMs: 10_000,
  /** Nothing received for this long: the peer is gone (half-open); the side that notices closes. */
  heartbeatTimeoutMs: 25_000,
  /** `audio.ack` at most this often (leading and trailing edge: the last cursor is always acked). */
  ackIntervalMs: 50,
  /** `usage.updated` (rotate false) at most this often while audio arrives. */
  usageIntervalMs: 1000,
  /** Largest PCM payload of one binary frame: 1 s of audio (32,000 bytes). */
  maxFrameSamples: 16_000,
  /** Consecutive refused frames or messages after which the server closes with PROTOCOL_VIOLATION. */
  maxConsecutiveErrors: 256,
  /** Outbound bytes queued for a client above which partials are skipped (superseded anyway). */
  partialSkipBufferedBytes: 1 << 20,
  /**
   * Memory held for a client's outbound messages (socket write queue plus our own queue, 32 bytes
   * counted per queued message beyond its characters) above which it is closed with SLOW_CONSUMER.
   */
  maxBufferedBytes: 16 << 20,
  /**
   * After the SLOW_CONSUMER close frame is queued (behind at most 64 KiB), the client has this long to
   * read it before the TCP connection is dropped.
   */
  slowConsumerGraceMs: 5000,
} as const;

/**
 * Binary audio frame (client -> server), all integers little-endian:
 *
 *   offset  size  field
 *   0       2     magic 0x53 0x43 ("SC")
 *   2       1     version (1)
 *   3       1     flags (0; reserved, must be 0)
 *   4       4     epoch, uint32
 *   8       4     startSample low 32 bits, uint32
 *   12      4     startSample high 32 bits, uint32 (< 2^21, so the value is a safe integer)
 *   16      2n    n PCM16 LE samples, 16 kHz mono; n = (length - 16) / 2, 1 <= n <= maxFrameSamples
 *
 * The 64-bit start sample travels as two uint32 halves so a browser client encodes it with two
 * DataView.setUint32 calls and no BigInt allocation per frame. The header is 16 bytes so the payload
 * stays 2-byte (in fact 16-byte) aligned for an Int16Array view.
 */
export const FRAME = {
  magic0: 0x53,
  magic1: 0x43,
  version: 1,
  headerBytes: 16,
  bytesPerSample: 2,
  /** startSample must stay below 2^53 (safe integer): the high half is below this. */
  maxHighWord: 1 << 21,
} as const;

export interface FrameHeader {
  readonly epoch: number;
  /** Absolute sample position of the first payload sample since the session began. */
  readonly startSample: number;
  readonly sampleCount: number;
}

export type FrameDecodeResult =
  | ({ readonly ok: true } & FrameHeader)
  | { readonly ok: false; readonly reason: 'TOO_SHORT' | 'BAD_MAGIC' | 'BAD_VERSION' | 'BAD_FLAGS' | 'ODD_LENGTH' | 'EMPTY' | 'START_TOO_LARGE' };

/** Writes the 16-byte header into `view` at `offset` (the caller owns the buffer; nothing allocates). */
export function encodeFrameHeader(view: DataView, offset: number, epoch: number, startSample: number): void {
  view.setUint8(offset, FRAME.magic0);
  view.setUint8(offset + 1, FRAME.magic1);
  view.setUint8(offset + 2, FRAME.version);
  view.setUint8(offset + 3, 0);
  view.setUint32(offset + 4, epoch >>> 0, true);
  view.setUint32(offset + 8, startSample % 0x1_0000_0000, true);
  view.setUint32(offset + 12, Math.floor(startSample / 0x1_0000_0000), true);
}

/** Reads the header of a frame of `byteLength` bytes; the sample count follows from the length. */
export function decodeFrameHeader(view: DataView, offset: number, byteLength: number): FrameDecodeResult {
  if (byteLength < FRAME.headerBytes) return { ok: false, reason: 'TOO_SHORT' };
  if (view.getUint8(offset) !== FRAME.magic0 || view.getUint8(offset + 1) !== FRAME.magic1) return { ok: false, reason: 'BAD_MAGIC' };
  if (view.getUint8(offset + 2) !== FRAME.version) return { ok: false, reason: 'BAD_VERSION' };
  if (view.getUint8(offset + 3) !== 0) return { ok: false, reason: 'BAD_FLAGS' };
  const payload = byteLength - FRAME.headerBytes;
  if (payload % FRAME.bytesPerSample !== 0) return { ok: false, reason: 'ODD_LENGTH' };
  if (payload === 0) return { ok: false, reason: 'EMPTY' };
  const high = view.getUint32(offset + 12, true);
  if (high >= FRAME.maxHighWord) return { ok: false, reason: 'START_TOO_LARGE' };
  return {
    ok: true,
    epoch: view.getUint32(offset + 4, true),
    startSample: high * 0x1_0000_0000 + view.getUint32(offset + 8, true),
    sampleCount: payload / FRAME.bytesPerSample,
  };
}

/** Server -> client JSON message types (each message is `{ type, ... }`). */
export const SERVER_MESSAGES = [
  'session.ready',
  'audio.ack',
  'transcript.partial',
  'transcript.line',
  'transcript.alignment',
  'transcript.entities',
  'transcript.revision',
  'transcript.language',
  'usage.updated',
  'session.notice',
  'session.paused',
  'session.resumed',
  'session.finished',
  'error',
  'ping',
  'pong',
] as const;
export type ServerMessageType = (typeof SERVER_MESSAGES)[number];

/** Client -> server JSON message types; any other type is ignored (debug event server-side). */
export const CLIENT_MESSAGES = ['session.pause', 'session.resume', 'session.finish', 'session.captured', 'ping', 'pong'] as const;
export type ClientMessageType = (typeof CLIENT_MESSAGES)[number];

/**
 * Codes of the socket `error` message. `fatal: true` errors are followed by a close with the code in
 * CLOSE_CODES; the rest leave the socket open (the frame or message is dropped).
 */
export const SOCKET_ERRORS = {
  /** Binary frame malformed (details.reason: a FrameDecodeResult reason). */
  BAD_FRAME: 'BAD_FRAME',
  /** More than maxFrameSamples samples in one frame (details.maxFrameSamples). */
  FRAME_TOO_LARGE: 'FRAME_TOO_LARGE',
  /** Frame epoch is not the current epoch (details.epoch is the current one). */
  WRONG_EPOCH: 'WRONG_EPOCH',
  /** Frame starts past receivedSamples: a gap. Resend from details.receivedSamples. */
  BEYOND_CURSOR: 'BEYOND_CURSOR',
  /** Audio while paused, rotated awaiting session.resume, finishing or finished. */
  NOT_ACCEPTING: 'NOT_ACCEPTING',
  /** Audio past the sample where the account's balance was used up (REALTIME_SPENDING); never stored. */
  BALANCE_EXHAUSTED: 'BALANCE_EXHAUSTED',
  /** Text frame that is not a JSON object with a string `type`. */
  BAD_JSON: 'BAD_JSON',
  /** Known message type with invalid fields (details.violations as in INPUT_INVALID). */
  BAD_MESSAGE: 'BAD_MESSAGE',
  /** Pause or resume of a finishing or finished session. */
  SESSION_CLOSED: 'SESSION_CLOSED',
  /** Fatal, followed by close 4404. */
  SESSION_NOT_FOUND: 'SESSION_NOT_FOUND',
  /** Fatal, followed by close 4410: finish over REST. */
  RECOVERY_WINDOW_EXPIRED: 'RECOVERY_WINDOW_EXPIRED',
  /** Fatal, followed by close 4400. */
  PROTOCOL_VIOLATION: 'PROTOCOL_VIOLATION',
  /** Not fatal: an unexpected failure handling one message (report it). */
  INTERNAL: 'INTERNAL',
} as const;
export type SocketErrorCode = keyof typeof SOCKET_ERRORS;

/**
 * Close codes. 1000 is a normal close by the client. A client reconnects (same session, resend from the
 * cursor) after 1006, HEARTBEAT_TIMEOUT and SLOW_CONSUMER; never after the others.
 */
export const CLOSE_CODES = {
  /** A newer connection attached to the same session; do not reconnect from this one. */
  REPLACED: 4001,
  /** Too many consecutive refused frames or messages. */
  PROTOCOL_VIOLATION: 4400,
  /**
   * Authentication failed. The reference server refuses unauthenticated upgrades with HTTP 401 before
   * the socket opens, so it never sends this code; a client treats either the same way (a browser sees
   * the refused upgrade as close 1006 before `open`: get a new token).
   */
  AUTH_FAILED: 4401,
  /** Unknown sessionId, or another account's session. */
  SESSION_NOT_FOUND: 4404,
  /** Nothing received within heartbeatTimeoutMs (the peer rarely sees this: it is usually gone). */
  HEARTBEAT_TIMEOUT: 4408,
  /** The session is finished (after session.finished, or when attaching to a finished session). */
  SESSION_FINISHED: 4409,
  /** The recovery window passed while no socket was attached; finish over REST to save the result. */
  RECOVERY_WINDOW_EXPIRED: 4410,
  /** The client did not read: more than maxBufferedBytes queued for it. */
  SLOW_CONSUMER: 4429,
  /** The server shuts down; reconnect later (the session is gone with an in-memory server). */
  SERVER_GOING_AWAY: 4503,
} as const;

/** Ours: id prefixes, so a stray id is recognisable in logs. Voice ids are decimal (spec: "Long"). */
export const ID_PREFIXES = {
  transcription: 'tr_',
  session: 'rs_',
  upload: 'up_',
  request: 'req_',
  event: 'evt_',
} as const;
