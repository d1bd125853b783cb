import type { RealtimeSession } from '../../types/realtime.js';
import type { AckWatchOptions } from '../watch/ack-watch-options.js';
import type { ReconnectPolicy } from '../recovery/reconnect-policy.js';
import type { WebSocketConstructor } from '../socket/transport.js';
import type { CredentialsProvider } from '../socket/credentials.js';
import type { SessionLogger } from '../session-logger.js';
import type { GateOptions } from '../audio/session-gate.js';

/** The REST calls a session can fall back on (absent when it holds only a socket token). */
export interface RealtimeRest {
  get(sessionId: string, call?: { signal?: AbortSignal }): Promise<RealtimeSession>;
  finish(sessionId: string, capturedSamples: bigint | number | string, call?: { signal?: AbortSignal }): Promise<RealtimeSession>;
}

/**
 * Options shared by connect() and attach(). Each default is written once, in the session's option table
 * (`SESSION_OPTIONS`, realtime/options/defaults.ts): "Default: the table" below points there.
 */
export interface RealtimeSocketOptions {
  /** Aborting closes the session (a plain disconnect: the server keeps it until its recovery window ends). */
  readonly signal?: AbortSignal;
  /** Rate of the Float32 blocks given to write(). Default: the table (the service's rate). */
  readonly sampleRate?: number;
  /** Interleaved channels of write() blocks, averaged to mono. Default: the table (mono). */
  readonly channels?: number;
  /**
   * Reconnect timing. Default: capped exponential with full jitter (DefaultReconnectPolicy's own base
   * and cap), giving up the table's `reconnect` time after the server's recovery window (so the last attempt learns it expired and the session is
   * finished over REST). Also governs the first connection.
   */
  readonly reconnect?: ReconnectPolicy;
  /**
   * A connection that came back must stay ready this long before the reconnect budget starts over; one
   * lost sooner continues the same run of attempts (delays keep growing), and two in a row make the
   * session report `health` `flapping`. Default: the table.
   */
  readonly stableWindowMs?: number;
  /**
   * Called before every reconnect attempt for the credentials of the next socket (a browser asks its
   * backend for a fresh socket token). A refused credential (upgrade 401/403, close 4401) is then retried
   * with fresh ones instead of ending the session (up to 3 refusals in a row). Without it, a refused
   * credential ends the session with REALTIME_SOCKET_REFUSED as before.
   */
  readonly credentials?: CredentialsProvider;
  /** WebSocket implementation. Default: `ws` in Node (an optional peer dependency: `npm i ws`), globalThis.WebSocket elsewhere. */
  readonly WebSocket?: WebSocketConstructor;
  /**
   * A voice gate on the audio written (docs/protocol.md "Skipped time"): `true` for its defaults, or
   * `{ preRollMs, hangoverMs, commitAfterMs, detector }`. Off by default. While it hears silence the
   * session sends nothing and declares the time skipped (the server's timeline stays capture time, and
   * bills only audio); at an onset it sends the pre-roll and then everything until `hangoverMs` of
   * silence; `commitAfterMs` of silence ends the utterance (`speech.end`) and the server commits the
   * open line. `speech.start` / `speech.end` say where; `stats.skippedSamples` and `health.savedShare`
   * what was saved. With a server that takes no skip frames everything is sent as without the gate
   * (the events still fire). Invalid values throw a ValidationError (`gate.preRollMs`, …).
   */
  readonly gate?: boolean | GateOptions;
  /** Unacknowledged audio kept for resending, in ms. Default: the table (the recovery window). */
  readonly bufferMs?: number;
  /** Sent but unacknowledged samples before sending waits for an ack. Default: the table (2 s of audio). A finish whose drain wait ran out sends all that is owed past it. */
  readonly maxInFlightSamples?: number;
  /** Nothing heard for this long means the socket is dead or half-open. Default: the server's value. */
  readonly heartbeatTimeoutMs?: number;
  /**
   * Half-open detection while sending, from the acknowledgements (docs/protocol.md "Heartbeat and
   * half-open sockets"): acks silent for `degradedAfterMs` report `health` `degraded`; after
   * `probeAfterMs` a `ping` probes the socket, and one unanswered for `probeTimeoutMs` plus
   * the time the audio queued ahead of it needs at the throughput the acks showed (at most
   * `maxBacklogWaitMs` more) drops the socket and reconnects; an answered probe keeps it and
   * probes again every `probeEveryMs` while acks stay away. Fields left out keep their defaults (ACK_WATCH).
   * `false`: no ack-driven detection; the heartbeat (heartbeatTimeoutMs) alone notices a dead socket.
   * Invalid values throw a ValidationError (VALIDATION_FAILED) listing each field.
   */
  readonly ackWatch?: AckWatchOptions | false;
  /** One socket attempt (open + session.ready) may take this long. Default: the table. */
  readonly connectTimeoutMs?: number;
  /**
   * pause() and finish() wait this long (on each socket) for everything to be sent and acknowledged
   * before sending session.pause / session.finish anyway. Default: the table. A finish then sends every
   * remaining frame first (past the in-flight window), so a live socket delivers everything; a pause sends what the
   * server did not take after the resume. Audio a lost socket never delivered is declared as a gap.
   */
  readonly drainTimeoutMs?: number;
  /**
   * finish() with the socket down keeps reconnecting, and finishes over REST instead only when the
   * recovery window expired, the reconnect policy gave up, or finish()'s deadline (its timeoutMs) is this
   * close: a REST finish needs the time (the server may wait ~8 s for supplements). Default: the table.
   */
  readonly restFinishReserveMs?: number;
  /**
   * Structured records of what happens (connects, state changes, losses, reconnects, health changes,
   * gaps), API keys and tokens redacted: `console`, a pino/winston logger, or one function.
   */
  readonly logger?: SessionLogger;
  /** Clock for heartbeat and reconnect budgets (tests). */
  readonly now?: () => number;
}

export interface RealtimeSessionInit extends RealtimeSocketOptions {
  readonly sessionId: string;
  /** Absolute ws(s) URL of the socket endpoint, without query. */
  readonly socketUrl: string;
  /** The API key (sent as a header where the platform allows) and/or the creation's socket token. */
  readonly accessKey?: string;
  readonly token?: string;
  readonly rest?: RealtimeRest;
}

export interface OperationOptions {
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
}
