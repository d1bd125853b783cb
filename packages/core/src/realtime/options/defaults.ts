import { REALTIME } from '../../protocol.js';
import { ACK_WATCH } from '../watch/ack-watch-options.js';

/**
 * How an option is checked when a session is built (checks.ts): a number of milliseconds of at least
 * `min`, whole samples of at least `min`, a function, a reconnect policy, or `part`: by the part that
 * takes it (the outbox checks sampleRate, channels and bufferMs; ack-watch-options.ts checks ackWatch),
 * or taken as it is.
 */
export type OptionCheck =
  | { readonly rule: 'ms'; readonly min: number }
  | { readonly rule: 'samples'; readonly min: number; readonly why: string }
  | { readonly rule: 'function'; readonly what: string }
  | { readonly rule: 'policy' }
  | { readonly rule: 'part' };

const PART: OptionCheck = { rule: 'part' };

/**
 * Every option a session reads, its default and its check: the one table. The docs of each option
 * (options.ts) point here for the default, the parts read it (parts.ts), the checks use it (checks.ts:
 * an option not listed is refused, so a misspelt `sampelRate` is not ignored). An option without
 * `default` has none of its own (its doc says what stands in).
 */
export const SESSION_OPTIONS = Object.freeze({
  signal: { check: PART },
  /** Rate of write() blocks: the service's rate, so 16 kHz audio is taken as it is. */
  sampleRate: { default: REALTIME.sampleRate, check: PART },
  /** Interleaved channels of write() blocks. */
  channels: { default: 1, check: PART },
  /** Unacknowledged audio kept for resending: the server's recovery window. */
  bufferMs: { default: REALTIME.recoveryWindowMs, check: PART },
  /** The ack watch's timings (watch/ack-watch-options.ts ACK_WATCH); fields left out keep these. */
  ackWatch: { default: ACK_WATCH, check: PART },
  logger: { check: PART },
  /** The voice gate: off (audio/session-gate.ts checks it). */
  gate: { default: false, check: PART },
  sessionId: { check: PART },
  socketUrl: { check: PART },
  accessKey: { check: PART },
  token: { check: PART },
  rest: { check: PART },
  /** A connection that came back must stay ready this long before the reconnect budget starts over. */
  stableWindowMs: { default: 30_000, check: { rule: 'ms', min: 0 } },
  /** pause() and finish() wait this long for the acknowledgement before going ahead. */
  drainTimeoutMs: { default: 5000, check: { rule: 'ms', min: 0 } },
  /** finish() with the socket down finishes over REST this long before its deadline. */
  restFinishReserveMs: { default: 10_000, check: { rule: 'ms', min: 0 } },
  /** One socket attempt (open + session.ready). */
  connectTimeoutMs: { default: 10_000, check: { rule: 'ms', min: 1 } },
  /** No default of its own: the server's value (session.ready). Below ~100 ms the heartbeat would drop healthy sockets between two acks: a reconnect storm. */
  heartbeatTimeoutMs: { check: { rule: 'ms', min: 100 } },
  /** Sent but unacknowledged samples before sending waits for an ack: 2 s of 16 kHz audio. At least one 20 ms frame, or no frame ever goes out. */
  maxInFlightSamples: { default: 32_000, check: { rule: 'samples', min: 320, why: 'one 20 ms frame' } },
  credentials: { check: { rule: 'function', what: 'a function returning a promise of { token?, apiKey? }' } },
  WebSocket: { check: { rule: 'function', what: 'a WebSocket constructor' } },
  now: { check: { rule: 'function', what: 'a function returning milliseconds' } },
  /** The default policy (recovery/recovery.ts) gives up this long after the server's recovery window: its last attempt learns the window expired, so the session is finished over REST. */
  reconnect: { default: { pastWindowMs: 5000 }, check: { rule: 'policy' } },
} satisfies Record<string, { readonly default?: unknown; readonly check: OptionCheck }>);
