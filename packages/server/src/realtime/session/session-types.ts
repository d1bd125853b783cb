import type { Account } from '../../domain/accounts/accounts.js';
import type { Task } from '../../domain/transcriptions/tasks.js';
import type { LiveSession } from '../../live/live-session.js';
import type { LiveStore } from '../../live/live-store.js';
import type { SessionAudio, SessionNotice } from './audio.js';
import type { RealtimeCreateRequest } from './options.js';
import type { RecoveryWindow } from './recovery-window.js';

/** What a realtime session is and what RealtimeSessions (sessions.ts) is configured with. */
export interface RealtimeTiming {
  /** Spec "finish" 3: wait for supplements at most this long (about 8 s), never past the recovery window. */
  readonly supplementWaitMs: number;
  readonly recoveryWindowMs: number;
  /**
   * A session with no socket and no finish this long after its recovery window passed is finished by
   * the service, PARTIAL (abandoned.ts; default ABANDONED_SESSIONS.afterWindowMs, five minutes).
   */
  readonly abandonAfterMs?: number;
  /** Rotate (usage.updated with rotate true) after this much wall time in one epoch. */
  readonly rotateEveryMs?: number;
  /** Rotate after this many samples received in one epoch. */
  readonly rotateEverySamples?: number;
  /**
   * How long one socket may live, from its session.ready (off by default): the socket is told
   * (`socket.recycle`) and then closed with 4002 SOCKET_RECYCLED (docs/protocol.md "Socket lifetime").
   */
  readonly socketLifetimeMs?: number;
  /** TEST-ONLY: keep up to this many received samples per session for the debug audio read. */
  readonly retainAudioMaxSamples?: number;
}

/**
 * One realtime session (`rs_…`, spec "Real-time session"): the one thing the server calls a session.
 * Its audio, cursors and lines are `audio` (audio.ts); sockets attach to it (../socket/connection.ts).
 */
export interface Session {
  readonly id: string;
  readonly ownerId: string;
  readonly account: Account;
  /** The History task as this session last wrote it (rows are replaced, never changed). */
  task: Task;
  readonly audio: SessionAudio;
  readonly request: RealtimeCreateRequest;
  readonly createdAt: number;
  readonly notices: SessionNotice[];
  readonly recovery: RecoveryWindow;
  /** Sockets attached now (a replacing socket attaches before the replaced one detaches). */
  attachedSockets: number;
  finishing?: Promise<void>;
  /**
   * The finish's settlement could not be written (the database did not answer): writes it again, once;
   * a later finish calls it. Cleared once the settlement is stored (by it, or the background retry).
   */
  unsettled?: () => Promise<void>;
  /** With the live state (src/live): the session's durable side while this node owns it. */
  live?: LiveSession;
}

export type AttachOutcome = 'attached' | 'finished' | 'expired';

/** Per-account fairness (docs/protocol.md "Per-account limits"). */
export interface RealtimeLimits {
  /**
   * Sessions of one account that can still take audio: created, not finished or finishing, recovery
   * window not passed (an expired session holds no decoder and takes no audio; it is only waiting to be
   * finished over REST, and must not lock its account out).
   */
  readonly maxOpenSessionsPerAccount: number;
  /**
   * Sessions this node keeps live at once, every account's (counted as above); past it creation is
   * 503 NODE_FULL, retryable on another node (docs/protocol.md "Node admission"; default
   * NODE_ADMISSION.defaultMaxLiveSessions).
   */
  readonly maxLiveSessionsPerNode?: number;
}

/**
 * This node among the nodes sharing the store: sessions are recorded as living on `nodeId`, and socket
 * tokens are signed with the secret every node shares (Store.nodes.socketTokenSecret), so a token one
 * node issued verifies on another (which forwards the socket to this one).
 */
export interface RealtimeNode {
  readonly nodeId: string;
  readonly tokenSecret: Buffer;
  /**
   * The live state in Redis (startServer redisUrl): sessions are leased and their state made durable
   * there, so another node can take one over (src/live). Absent: a session lives and dies with this node.
   */
  readonly live?: LiveStore;
}

/**
 * What a create answers (docs/protocol.md "Several nodes"):
 *   here       the session lives on this node: made now, or replayed (same key, same body);
 *   elsewhere  the key is kept in the store for a session this node does not hold (made by another
 *              node, or before a restart): the caller forwards the create to its owner, whose replay
 *              answers, or answers from the store once it ended.
 */
export type CreateOutcome =
  | { readonly kind: 'here'; readonly session: Session; readonly replayed: boolean }
  | { readonly kind: 'elsewhere'; readonly sessionId: string; readonly taskId: string };
