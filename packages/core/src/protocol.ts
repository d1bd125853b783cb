/**
 * The wire protocol, written once: every fact client and service must agree on, in one file.
 *
 * The spec (docs/service-interface.md) fixes the path prefix, the endpoint summary, the
 * envelope and the field names. Everything else below (uploads, downloads, realtime session creation,
 * header names, HTTP statuses, the error code list, the webhook signature scheme, the socket, several
 * limits) is our decision for what the spec leaves "not shown" (docs/protocol.md). The reference
 * service imports these from `@soundclone/core/internal` and keeps only its own decisions (ids, rate,
 * delivery, connection limits) in packages/server/src/protocol.ts, so the two sides cannot drift
 * apart. A user adapting the SDK to the real service edits only this file.
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
  upload: '/uploads/{uploadId}',
  transcriptionDownload: '/stt/transcriptions/{transcriptionId}/download/{format}',
  realtimeSessions: '/stt/realtime/sessions',
  /** A fresh socket token for a session (a browser's backend calls it when the page's token expired). */
  realtimeSocketToken: '/stt/realtime/sessions/{sessionId}/socket-token',
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
  STORAGE_QUOTA_EXCEEDED: 413,
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
/**
 * The reason of a media URL failure (MediaFetchError.reason).
 * @useDeclaredType
 */
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

/**
 * Ours: the languages languageHint accepts (batch and realtime), each in both ISO 639 forms. Batch
 * tasks report detectedLanguage in the three-letter form and realtime lines in the two-letter form
 * (spec "Transcription task"), so a caller may pass back either; the hint is echoed as sent.
 */
export const LANGUAGES = [
  { iso639_1: 'en', iso639_3: 'eng', name: 'English' },
  { iso639_1: 'es', iso639_3: 'spa', name: 'Spanish' },
  { iso639_1: 'fr', iso639_3: 'fra', name: 'French' },
  { iso639_1: 'de', iso639_3: 'deu', name: 'German' },
  { iso639_1: 'it', iso639_3: 'ita', name: 'Italian' },
  { iso639_1: 'pt', iso639_3: 'por', name: 'Portuguese' },
  { iso639_1: 'nl', iso639_3: 'nld', name: 'Dutch' },
  { iso639_1: 'ja', iso639_3: 'jpn', name: 'Japanese' },
  { iso639_1: 'zh', iso639_3: 'zho', name: 'Chinese' },
  { iso639_1: 'ko', iso639_3: 'kor', name: 'Korean' },
  { iso639_1: 'ru', iso639_3: 'rus', name: 'Russian' },
  { iso639_1: 'ar', iso639_3: 'ara', name: 'Arabic' },
  { iso639_1: 'hi', iso639_3: 'hin', name: 'Hindi' },
] as const;

/** Every accepted languageHint value: "auto" (the same as omitting it), then both forms of each language. */
export const LANGUAGE_HINTS: readonly string[] = ['auto', ...LANGUAGES.flatMap((l) => [l.iso639_1, l.iso639_3])];

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

// ---------------------------------------------------------------------------------------------------
// Realtime socket. docs/protocol.md "Realtime socket" is the prose version of this block; the
// reference server imports it. A user adapting the SDK to another socket protocol edits this block.
// ---------------------------------------------------------------------------------------------------

/** Ours: realtime paths relative to API_PREFIX (kept apart so PATHS above stays the REST surface). */
export const REALTIME_PATHS = {
  /** The WebSocket endpoint; session creation also returns its absolute URL as `socket.url`. */
  socket: '/stt/realtime/socket',
  /** TEST-ONLY on the reference server (option retainRealtimeAudioSamples): stored PCM16 LE of a session. */
  debugAudio: '/stt/realtime/sessions/{sessionId}/audio',
} as const;

/**
 * Ours: realtime spending stays within the balance (docs/protocol.md "Realtime spending"). Creation
 * needs the charge of `minimumMs` available (else 402 INSUFFICIENT_CHARACTERS); once the session's
 * audio uses the balance up the server sends `session.notice` with code `exhaustedNotice` and
 * `receivedSamples` (where it stopped), refuses later frames (socket error BALANCE_EXHAUSTED), settles
 * and ends the session PARTIAL. The session ends with RealtimeError REALTIME_BALANCE_EXHAUSTED. When
 * the server's store cannot answer the spending check (a database unreachable), the frame is refused with
 * the non-fatal socket error SERVICE_UNAVAILABLE, `details.reason` `storeUnavailableReason`: nothing was
 * stored, resend from `details.receivedSamples`.
 */
export const REALTIME_SPENDING = { minimumMs: 1000, exhaustedNotice: 'BALANCE_EXHAUSTED', storeUnavailableReason: 'STORE_UNAVAILABLE' } as const;

/**
 * Ours: `details.reason` of a 429 RATE_LIMITED realtime creation: the account has its most sessions
 * open, or holds its share of the recogniser's decoders (docs/protocol.md "Per-account limits").
 */
export const ACCOUNT_LIMIT_REASONS = ['ACCOUNT_SESSION_LIMIT', 'ACCOUNT_DECODER_LIMIT'] as const;

/** Ours: realtime constants. The recovery window is the reference server's default ("not shown"). */
export const REALTIME = { sampleRate: 16_000, recoveryWindowMs: 60_000, firstEpoch: 1 } as const;

/**
 * Query parameters of the socket URL `ws(s)://{host}{API_PREFIX}{REALTIME_PATHS.socket}`:
 *   sessionId  required with the accessKey header (Node); optional with a token (must then match it)
 *   token      the creation's socket.token (browsers: they cannot set headers); bound to one session
 * A query parameter rather than a Sec-WebSocket-Protocol entry: the token is short-lived and bound to
 * one session, and a subprotocol entry would have to be echoed back and is mangled by some proxies.
 */
export const SOCKET_QUERY = { sessionId: 'sessionId', token: 'token' } as const;

/** Ours: socket timing and size defaults; `session.ready` carries the values in force. */
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
   * Memory held for a client's outbound messages (socket write queue plus the server's own queue, 32
   * bytes counted per queued message beyond its characters) above which it is closed with SLOW_CONSUMER.
   */
  maxBufferedBytes: 16 << 20,
  /**
   * After the SLOW_CONSUMER close frame is queued (behind at most 64 KiB), the client has this long to
   * read it before the TCP connection is dropped.
   */
  slowConsumerGraceMs: 5000,
} as const;

/**
 * Binary audio frame (client -> server), little-endian:
 *
 *   offset  size  field
 *   0       2     magic 0x53 0x43 ("SC")
 *   2       1     version (1)
 *   3       1     flags (0)
 *   4       4     epoch, uint32
 *   8       4     startSample low 32 bits
 *   12      4     startSample high 32 bits (< 2^21: a safe integer)
 *   16      2n    n PCM16 LE samples, 16 kHz mono, 1 <= n <= maxFrameSamples
 *
 * A skip frame (flags FRAME_FLAGS.skip, only to a server whose session.ready lists
 * SOCKET_FEATURES.skipFrames) carries no audio: its payload is 4 bytes, a uint32 n >= 1, and it says
 * "samples [startSample, startSample + n) were captured and are not sent" (a voice gate's silence). It
 * travels in the same ordered stream as audio, with the same epoch, cursor, duplicate and trim rules,
 * and is acknowledged by the same cursor: the server's received position moves over it, nothing is
 * recognised or charged for it, and it is no transport gap (docs/protocol.md "Skipped time").
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
  maxHighWord: 1 << 21,
  /** Payload of a skip frame: the skipped sample count, uint32 LE. */
  skipPayloadBytes: 4,
  /** Most samples one skip frame declares (a longer stretch is several frames). */
  maxSkipSamples: 0xffff_ffff,
  /**
   * Ours: skipped time starts and ends on multiples of this many samples (20 ms) of the capture
   * timeline (our client rounds towards sending more). Any range is accepted; on the grid, a
   * frame-based recogniser (20 ms frames: the reference one) sees its frames where they fall in the
   * whole stream, so a gated stream gives the very words and times of the ungated one.
   */
  skipGridSamples: 320,
} as const;

/** Bits of the frame header's flags byte; every other bit must be 0 (else BAD_FLAGS). */
export const FRAME_FLAGS = { skip: 0x01 } as const;

/**
 * Ours: what a server supports beyond the base protocol, listed in session.ready `features` (absent
 * or empty on a server that supports nothing more). A client uses a feature only on a socket whose
 * session.ready listed it.
 */
export const SOCKET_FEATURES = {
  /** Skip frames (FRAME_FLAGS.skip): captured time declared without audio. */
  skipFrames: 'skip-frames',
} as const;

export interface FrameHeader {
  readonly epoch: number;
  readonly startSample: number;
  /** Audio samples in the payload; for a skip frame, the samples it skips. */
  readonly sampleCount: number;
  /** Present (true) only on a skip frame: no audio, `sampleCount` samples of skipped time. */
  readonly skip?: true;
}

export type FrameDecodeResult =
  | ({ readonly ok: true } & FrameHeader)
  | { readonly ok: false; readonly reason: 'TOO_SHORT' | 'BAD_MAGIC' | 'BAD_VERSION' | 'BAD_FLAGS' | 'ODD_LENGTH' | 'EMPTY' | 'START_TOO_LARGE' | 'BAD_SKIP' };

const TWO_POW_32 = 0x1_0000_0000;

/**
 * Writes the 16-byte header at `offset`. Two setUint32 halves instead of setBigUint64: no BigInt per
 * frame on the audio path. Misuse (an epoch or start that does not fit) throws: it would corrupt the stream.
 */
export function encodeFrameHeader(view: DataView, offset: number, epoch: number, startSample: number): void {
  if (!Number.isInteger(epoch) || epoch < 0 || epoch >= TWO_POW_32) throw new RangeError(`epoch ${epoch} is not a uint32`);
  if (!Number.isSafeInteger(startSample) || startSample < 0 || startSample >= FRAME.maxHighWord * TWO_POW_32) {
    throw new RangeError(`startSample ${startSample} is outside [0, 2^53)`);
  }
  view.setUint8(offset, FRAME.magic0);
  view.setUint8(offset + 1, FRAME.magic1);
  view.setUint8(offset + 2, FRAME.version);
  view.setUint8(offset + 3, 0);
  view.setUint32(offset + 4, epoch, true);
  view.setUint32(offset + 8, startSample % TWO_POW_32, true);
  view.setUint32(offset + 12, Math.floor(startSample / TWO_POW_32), true);
}

/**
 * Writes a whole skip frame (header and count, 20 bytes) at `offset`: captured samples
 * [startSample, startSample + count) are declared skipped. Misuse throws, as for encodeFrameHeader.
 */
export function encodeSkipFrame(view: DataView, offset: number, epoch: number, startSample: number, count: number): void {
  if (!Number.isInteger(count) || count < 1 || count > FRAME.maxSkipSamples) throw new RangeError(`skip count ${count} is outside [1, 2^32)`);
  encodeFrameHeader(view, offset, epoch, startSample);
  view.setUint8(offset + 3, FRAME_FLAGS.skip);
  view.setUint32(offset + FRAME.headerBytes, count, true);
}

/** Reads a frame header; the sample count follows from `byteLength` (tests, proxies, debugging tools). */
export function decodeFrameHeader(view: DataView, offset: number, byteLength: number): FrameDecodeResult {
  if (byteLength < FRAME.headerBytes) return { ok: false, reason: 'TOO_SHORT' };
  if (view.getUint8(offset) !== FRAME.magic0 || view.getUint8(offset + 1) !== FRAME.magic1) return { ok: false, reason: 'BAD_MAGIC' };
  if (view.getUint8(offset + 2) !== FRAME.version) return { ok: false, reason: 'BAD_VERSION' };
  const flags = view.getUint8(offset + 3);
  if (flags !== 0 && flags !== FRAME_FLAGS.skip) return { ok: false, reason: 'BAD_FLAGS' };
  const payload = byteLength - FRAME.headerBytes;
  if (flags === FRAME_FLAGS.skip) {
    if (payload !== FRAME.skipPayloadBytes) return { ok: false, reason: 'BAD_SKIP' };
    const count = view.getUint32(offset + FRAME.headerBytes, true);
    if (count === 0) return { ok: false, reason: 'BAD_SKIP' };
    const highWord = view.getUint32(offset + 12, true);
    if (highWord >= FRAME.maxHighWord) return { ok: false, reason: 'START_TOO_LARGE' };
    return { ok: true, epoch: view.getUint32(offset + 4, true), startSample: highWord * TWO_POW_32 + view.getUint32(offset + 8, true), sampleCount: count, skip: true };
  }
  if (payload % FRAME.bytesPerSample !== 0) return { ok: false, reason: 'ODD_LENGTH' };
  if (payload === 0) return { ok: false, reason: 'EMPTY' };
  const high = view.getUint32(offset + 12, true);
  if (high >= FRAME.maxHighWord) return { ok: false, reason: 'START_TOO_LARGE' };
  return {
    ok: true,
    epoch: view.getUint32(offset + 4, true),
    startSample: high * TWO_POW_32 + view.getUint32(offset + 8, true),
    sampleCount: payload / FRAME.bytesPerSample,
  };
}

/** Server -> client JSON message types (`{ type, ... }`); anything else is ignored with a debug event. */
export const SERVER_MESSAGES = [
  'session.ready', 'audio.ack', 'transcript.partial', 'transcript.line', 'transcript.alignment', 'transcript.entities',
  'transcript.revision', 'transcript.language', 'usage.updated', 'session.notice', 'session.paused', 'session.resumed',
  'session.finished', 'error', 'ping', 'pong', 'socket.recycle',
] as const;
/**
 * The `type` of a server message the session understands.
 * @useDeclaredType
 */
export type ServerMessageType = (typeof SERVER_MESSAGES)[number];

/** Client -> server JSON message types. */
export const CLIENT_MESSAGES = ['session.pause', 'session.resume', 'session.finish', 'session.captured', 'ping', 'pong'] as const;
export type ClientMessageType = (typeof CLIENT_MESSAGES)[number];

/**
 * Codes of the socket `error` message; `fatal: true` ones are followed by a close (CLOSE_CODES), the rest
 * leave the socket open (the frame or message is dropped). docs/protocol.md "Realtime socket" says when
 * each is sent: BAD_FRAME carries details.reason (a FrameDecodeResult reason), FRAME_TOO_LARGE
 * details.maxFrameSamples, WRONG_EPOCH the current details.epoch, BEYOND_CURSOR details.receivedSamples
 * to resend from, BAD_MESSAGE details.violations as in INPUT_INVALID. SERVICE_UNAVAILABLE: the server could not
 * take a frame now (its store did not answer the spending check, details.reason STORE_UNAVAILABLE); nothing
 * was stored, resend from details.receivedSamples as for BEYOND_CURSOR.
 */
export const SOCKET_ERRORS = [
  'BAD_FRAME', 'FRAME_TOO_LARGE', 'WRONG_EPOCH', 'BEYOND_CURSOR', 'NOT_ACCEPTING', 'BALANCE_EXHAUSTED', 'BAD_JSON', 'BAD_MESSAGE', 'SESSION_CLOSED',
  'SESSION_NOT_FOUND', 'SESSION_FINISHED', 'RECOVERY_WINDOW_EXPIRED', 'PROTOCOL_VIOLATION', 'SLOW_CONSUMER', 'INTERNAL',
  'SERVICE_UNAVAILABLE',
] as const;
export type SocketErrorCode = (typeof SOCKET_ERRORS)[number];

/** Close codes. The client reconnects after 1006, HEARTBEAT_TIMEOUT, SLOW_CONSUMER (and any other 1xxx abnormal close). */
export const CLOSE_CODES = {
  /** A normal close by the client. */
  normal: 1000,
  /** No close frame (the connection dropped); never sent, only seen. */
  abnormal: 1006,
  /** A newer connection attached to the same session; do not reconnect from this one. */
  REPLACED: 4001,
  /**
   * The socket reached the server's lifetime limit (`socket.recycle` said so beforehand; the exact
   * `audio.ack` came right before the close): reconnect at once. Routine: not a loss of the link.
   */
  SOCKET_RECYCLED: 4002,
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

/**
 * Socket lifetime (docs/protocol.md "Socket lifetime"): a server that limits how long one socket lives
 * sends `socket.recycle { closeInMs }` this long before the limit, min(noticeMaxMs, lifetime ×
 * noticeFraction), and at the limit the exact `audio.ack` and close 4002 SOCKET_RECYCLED.
 */
export const SOCKET_RECYCLE = Object.freeze({ noticeMaxMs: 10_000, noticeFraction: 0.25 });

/** Milliseconds between `socket.recycle` and the close 4002, for a socket that lives `lifetimeMs`. */
export function recycleNoticeMs(lifetimeMs: number): number {
  return Math.floor(Math.min(SOCKET_RECYCLE.noticeMaxMs, lifetimeMs * SOCKET_RECYCLE.noticeFraction));
}

/**
 * Close codes after which the client never reconnects: the session is over, refused or owned by a newer
 * socket. The server documents an allow-list (1006, HEARTBEAT_TIMEOUT, SLOW_CONSUMER); the client uses
 * this deny-list instead, so that proxies' 1001/1011 closes and unknown 4xxx codes are survived too.
 */
export const FINAL_CLOSE_CODES: readonly number[] = [
  CLOSE_CODES.REPLACED, CLOSE_CODES.PROTOCOL_VIOLATION, CLOSE_CODES.AUTH_FAILED, CLOSE_CODES.SESSION_NOT_FOUND,
  CLOSE_CODES.SESSION_FINISHED, CLOSE_CODES.RECOVERY_WINDOW_EXPIRED,
];
