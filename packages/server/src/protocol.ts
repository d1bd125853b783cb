/**
 * The reference service's own decisions: the parts the spec leaves "not shown" that only the service
 * decides (its id prefixes, billing rate, webhook delivery, socket token, connection limits, fairness
 * limits and the defaults it chooses), written up in docs/protocol.md.
 *
 * The wire facts both sides must agree on (paths, headers, statuses, error codes, limits a client checks,
 * the socket's frame codec, messages and close codes, the webhook signature scheme) are not here: they
 * are written once in @soundclone/core's protocol module and imported from `@soundclone/core/internal`.
 * packages/server/test/protocol-agreement.test.ts fails if a name is declared in both again.
 */

import { ACCOUNT_LIMIT_REASONS, WEBHOOK, type DownloadFormat } from '@soundclone/core/internal';

/** Ours: how many redirects a media fetch follows; the next one is TOO_MANY_REDIRECTS. */
export const MAX_REDIRECTS = 5;

/**
 * Ours: limits and defaults only the service applies (the limits a client checks too are core's LIMITS).
 */
export const SERVER_LIMITS = {
  /**
   * The longest media accepted (uploads and fetched media), 4 hours; longer is 413
   * PAYLOAD_TOO_LARGE with details.problem DURATION_TOO_LONG. Bounds a task's work and its reservation.
   */
  mediaMaxDurationMs: 4 * 60 * 60 * 1000,
  /** Bytes of uploads one account may hold at once (startServer uploadQuotaBytes overrides it). */
  uploadQuotaBytesDefault: 512 * 1024 * 1024,
  /** waitTimeoutMs when a create does not give one (the maximum is core's LIMITS.waitTimeoutMsMax). */
  waitTimeoutMsDefault: 30_000,
  /** JSON request bodies. */
  jsonBodyMaxBytes: 1024 * 1024,
  /** Spec rule 3. */
  separateChannelsMaxChannels: 5,
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

/** Ours: the Content-Type of each transcript download. */
export const DOWNLOAD_CONTENT_TYPES: Record<DownloadFormat, string> = {
  txt: 'text/plain; charset=utf-8',
  json: 'application/json; charset=utf-8',
  srt: 'application/x-subrip; charset=utf-8',
  segmented_json: 'application/json; charset=utf-8',
  html: 'text/html; charset=utf-8',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pdf: 'application/pdf',
};

/**
 * Ours: the rate. Characters per started second of audio = ratePerMinute / 60.
 * Batch reserves for the duration rounded up to whole minutes and settles the duration rounded up
 * to whole seconds, so reserved = settled + released shows real numbers.
 */
export const RATE = { ratePerMinute: 600, rateVersion: '2026-01.v1' } as const;

/**
 * Ours: completion webhook delivery. POST JSON to notifyUrl:
 *   { id: "evt_…", type: "transcription.completed" | "transcription.failed", createdAt: ISO,
 *     data: { transcriptionId, status, modelId, billing, error?, clientMetadata } }
 * Signed when options.notificationSigningSecret was given:
 *   SoundClone-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, `${t}.${rawBody}`)>
 * Retried on network errors and non-2xx answers after each delay of retryDelaysMs (a new t and v1 per
 * attempt, the same event id and body). The scheme, event types and tolerance are core's WEBHOOK.
 */
/**
 * Batch leases on a store several nodes share (docs/protocol.md "Batch leases"): a node holds the lease
 * of each batch task it runs for leaseMs, extends it every heartbeatMs, and looks for tasks whose lease
 * is free or has passed every pollMs. A node that dies leaves its tasks to another node within about
 * leaseMs + pollMs. A store only this process uses takes none of these timers.
 */
export const BATCH_LEASES = {
  leaseMs: 4000,
  heartbeatMs: 1000,
  pollMs: 1000,
  /** Tasks one poll claims at most. */
  claimBatch: 4,
  /**
   * How long a new task is left to the node that created it, which claims it in its next step; only a
   * creator that died in between leaves it to claimDue, once this has passed.
   */
  creatorGraceMs: 5000,
  /**
   * Claims of one task before the next claim fails it (INTERNAL, retryable, nothing charged) instead of
   * running it: a task whose run ends its node every time must not take down one node after another.
   */
  maxClaims: 8,
} as const;

export const WEBHOOK_DELIVERY = {
  defaultRetryDelaysMs: [1000, 5000, 30_000, 120_000, 600_000],
  timeoutMs: 10_000,
  /** With a shared store: how often a node looks for deliveries no sender holds (added elsewhere, or left by a node that died). */
  sharedStorePollMs: 1000,
} as const;

/** Formats the signature header value from a timestamp and hex digests (several during secret rotation). */
export function formatWebhookSignature(timestampSec: number, hexDigests: readonly string[]): string {
  return [`t=${timestampSec}`, ...hexDigests.map((d) => `${WEBHOOK.scheme}=${d}`)].join(',');
}

/**
 * Ours: realtime socket token for browsers (the socket checks it): `rtt_<sessionId>.<expiresUnixSec>.<sig>`
 * where sig = base64url(HMAC-SHA256(serverSecret, `${sessionId}.${expiresUnixSec}`)). Only the server can
 * check it; clients treat it as opaque.
 */
export const SOCKET_TOKEN = { prefix: 'rtt_', ttlSec: 600 } as const;

/**
 * Ours: per-account fairness, so one account cannot keep realtime unavailable for every other
 * (docs/protocol.md "Per-account limits"). Past either limit realtime creation answers 429 RATE_LIMITED
 * with `details.reason` one of these, `details.limit`, and Retry-After.
 */
export const ACCOUNT_LIMITS = {
  /** Realtime sessions of one account that can still take audio: not finished, window not passed (startServer maxRealtimeSessionsPerAccount). */
  defaultMaxOpenSessions: 8,
  sessionLimitReason: ACCOUNT_LIMIT_REASONS[0],
  /** PocketSphinx decoder slots one account may hold (realtime sessions plus batch channels). */
  decoderLimitReason: ACCOUNT_LIMIT_REASONS[1],
  retryAfterSec: 5,
} as const;

/**
 * Ours: a realtime session nobody ends (docs/protocol.md "Abandoned sessions"). One with no socket and
 * no finish for `afterWindowMs` after its recovery window passed is finished by the service as a finish
 * would (the audio received charged once, the reservation released) and ends PARTIAL with the notice
 * `notice`. Its node looks for such sessions every `sweepEveryMs` (less with a short afterWindowMs:
 * a quarter of it, at least `minSweepEveryMs`). startServer realtimeTiming.abandonAfterMs, CLI
 * --abandon-after-ms.
 */
export const ABANDONED_SESSIONS = {
  /** Five minutes: time for a client that lost its socket for good to finish over REST itself. */
  afterWindowMs: 300_000,
  sweepEveryMs: 1000,
  minSweepEveryMs: 10,
  /** A settlement the store could not take (unreachable) is tried again, the wait doubling up to this. */
  maxSettleRetryMs: 30_000,
  notice: 'SESSION_ABANDONED',
} as const;

/**
 * Ours: how many realtime sessions one node keeps live at once (created, not finished or finishing,
 * recovery window not passed), whatever their accounts (docs/protocol.md "Node admission"). Past it a
 * creation answers 503 SERVICE_UNAVAILABLE, `details.reason` `fullReason`, `details.limit`, Retry-After:
 * the creation is retryable, and behind a balancer the retry reaches another node. startServer
 * maxRealtimeSessionsPerNode, CLI --max-sessions-per-node. The default is about what a 2-core node
 * streams at 1x with the deterministic recogniser (bench "realtime capacity": 400-580 sessions per core);
 * PocketSphinx nodes are bounded sooner by their decoders (RECOGNIZER_BUSY).
 */
export const NODE_ADMISSION = {
  defaultMaxLiveSessions: 1000,
  fullReason: 'NODE_FULL',
  retryAfterSec: 1,
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

/** Ours: id prefixes, so a stray id is recognisable in logs. Voice ids are decimal (spec: "Long"). */
export const ID_PREFIXES = {
  transcription: 'tr_',
  session: 'rs_',
  upload: 'up_',
  request: 'req_',
  event: 'evt_',
} as const;

/**
 * Ours: several nodes on one database behind a balancer (docs/protocol.md "Several nodes"). A request
 * about a realtime session that reaches a node not holding it is forwarded to the node that does, once:
 * the forwarded request carries `hopHeader`, and a node that does not hold the session either answers
 * 503 SERVICE_UNAVAILABLE with `details.reason` `ownerMovedReason` instead of forwarding again.
 */
/**
 * The live state of realtime sessions in Redis (startServer redisUrl; docs/protocol.md "Several nodes"):
 * a session's owner holds a lease it renews; a lease not renewed for leaseTtlMs lapses and another node
 * may take the session over. renewEveryMs leaves room for two missed renewals before that.
 */
export const LIVE_STATE = {
  leaseTtlMs: 1500,
  renewEveryMs: 400,
  /**
   * A session's audio is written to Redis at most this often (ms): one write carries every frame taken
   * since the last. An audio.ack waits for the write, so it trails by at most this (acks go out at most
   * every 50 ms anyway); a change of state (pause, rotation, a line) is written at once.
   */
  writeEveryMs: 100,
  /** details.reason of a 503 when the live state cannot be reached (a create, or a takeover). */
  unavailableReason: 'LIVE_STATE_UNAVAILABLE',
  /** The node holding the session lets it go (it moved, or the live state cannot be reached): close reason. */
  movedCloseReason: 'session moved',
  /**
   * A session found without live state (Redis lost it) is failed once its task is this old (ms): younger,
   * its live state may still be being written by the node making it.
   */
  lostAfterMs: 10_000,
} as const;

/** The task error of a realtime session whose live state Redis lost (failed, nothing charged). */
export const LIVE_STATE_LOST_ERROR = {
  errorCode: 'INTERNAL',
  message: 'the live state of this realtime session was lost; its audio is gone and nothing was charged; start a new session',
  retryable: true,
  action: 'RETRY',
} as const;

export const NODES = {
  hopHeader: 'x-soundclone-forwarded-by',
  /** The session's node stopped beating (died) and its session is not failed yet (the sweeper will). */
  ownerUnavailableReason: 'SESSION_OWNER_UNAVAILABLE',
  /** A forwarded request reached a node that does not hold the session: not forwarded again. */
  ownerMovedReason: 'SESSION_OWNER_MOVED',
  /** A node beats this often (ms). */
  heartbeatMs: 1000,
  /** A node whose last beat is older than this (ms) is dead: its realtime sessions are failed. */
  staleAfterMs: 5000,
  /** Every node looks for dead nodes' sessions this often (ms). */
  sweepEveryMs: 1000,
  /**
   * A forwarded request whose owner sends nothing for this long (ms) is given up (503
   * SESSION_OWNER_UNAVAILABLE if nothing was answered yet): longer than a finish waits for supplements.
   */
  forwardIdleTimeoutMs: 30_000,
  /** A forwarded socket upgrade the owner does not answer within this (ms) is refused the same way. */
  forwardUpgradeTimeoutMs: 10_000,
  /** The internal health check, outside the API prefix, unauthenticated. */
  healthPath: '/health',
  /** How long GET /health may wait for the database before it answers 503 (ms). */
  healthStoreTimeoutMs: 2000,
  /** Drain: how long /health answers 503 while the node still serves, before it closes (ms). */
  drainGraceMs: 2000,
  /** Drain: past this (ms) the process exits anyway. */
  drainTimeoutMs: 15_000,
} as const;

/**
 * `error` of a realtime session whose node died (Store.nodes.failOrphanedSessions): its audio and
 * recogniser were in that node's memory; nothing is charged, a new session may be started.
 */
export const ORPHANED_SESSION_ERROR = {
  errorCode: 'INTERNAL',
  message: 'the server holding this realtime session stopped; its audio is gone and nothing was charged; start a new session',
  retryable: true,
  action: 'RETRY',
} as const;
