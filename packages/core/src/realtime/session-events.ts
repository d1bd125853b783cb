import type { PartialMessage, ServerMessage } from './messages/server-messages.js';
import type { RealtimeNotice, RealtimeSession, RealtimeUsage } from '../types/realtime.js';
import type { AudioStats, Gap } from './audio/outbox.js';
import type { LineUpdate, SessionLine } from './transcript/line-store.js';
import type { StateChange } from './session-state.js';
import type { RealtimeError } from '../errors/realtime-error.js';
import type { SessionHealth } from './health/health-meter.js';

/**
 * What the session says. Each kind of result has one event with one rule (packages/core/README.md
 * "Hearing results: one rule"): render from these. Payloads are objects so fields can be added later.
 */
export interface RealtimeSessionEvents {
  state: (change: StateChange) => void;
  /** A committed line, once per line id for the life of the session (reconnects included). */
  line: (line: SessionLine) => void;
  /**
   * A supplement arrived for a line already emitted (alignment, entities, revision, language), or a
   * reconnect's view filled it in. Supplements that arrive before their line wait for it.
   */
  'line.updated': (update: LineUpdate) => void;
  /** The text still being recognised, of the current epoch only: partials of an epoch already left are dropped. */
  partial: (partial: PartialMessage) => void;
  /** A notice, once (same code, message, lines and supplements), whether live or in a session view. */
  notice: (notice: RealtimeNotice) => void;
  /** The session's running usage, as each usage.updated reports it. */
  usage: (usage: RealtimeUsage) => void;
  /**
   * Captured audio [from, to) the server will never get (ring overflow during a long outage, or unsent
   * when finished over REST). Nothing is sent in its place; the stream continues at `serverSample`
   * and the server marks the difference between captured and received as TRANSPORT_GAP.
   */
  gap: (gap: Gap & { readonly epoch: number }) => void;
  /**
   * With the `gate` option: an utterance began (the first speech frame the gate heard) or ended
   * (`commitAfterMs` of silence after its last speech frame, or pause() / finish()), at a captured
   * 16 kHz position (the positions of `gap` and capturedSamples). At `speech.end` the skipped time
   * after it goes out at once, and the server commits the open line there.
   */
  'speech.start': (edge: { readonly sample: number }) => void;
  'speech.end': (edge: { readonly sample: number }) => void;
  /** The first frame went on the socket. */
  'first.frame': (info: { readonly startSample: number; readonly epoch: number }) => void;
  /**
   * The session's health, one stream (packages/core/README.md "Health"): every report is a full
   * snapshot (`session.health` reads one at any time) and `kind` says why it went out. `connection`:
   * `degraded` within a second of the acknowledgements stopping with audio in flight (the socket is being
   * probed; replaced if it does not answer), `healthy` once they move again; `flapping` when connections
   * keep coming back and dropping before they are stable (reconnects back off further each time),
   * `healthy` again once one has stayed ready for the session's `stableWindowMs`; `lost` /
   * `reconnected`: a reconnect with its cause and, once over, its duration; `interval`: every second
   * while a socket is up.
   */
  health: (health: SessionHealth) => void;
  /** Buffer fill and sent vs acknowledged lag, after each acknowledgement. */
  backpressure: (stats: AudioStats) => void;
  /**
   * The socket was lost and another attempt is scheduled. `error` types why when the server said so
   * with a reconnectable close code (4429: REALTIME_SLOW_CONSUMER). `recycled`: the server closed the
   * socket at its lifetime limit (4002); the attempt (`attempt: 0`, no delay) is not one of the budget's.
   * `reconnected` with `attempt: 0` is a recycle too (docs/protocol.md "Socket lifetime").
   */
  reconnecting: (info: { readonly attempt: number; readonly delayMs: number; readonly reason: string; readonly closeCode?: number | undefined; readonly error?: RealtimeError | undefined; readonly flapping?: boolean | undefined; readonly recycled?: boolean | undefined }) => void;
  reconnected: (info: { readonly attempt: number; readonly receivedSamples: number; readonly resendSamples: number }) => void;
  /** A rotation completed: audio continues in `toEpoch` from `atSample`. */
  rotated: (info: { readonly fromEpoch: number; readonly toEpoch: number; readonly atSample: number }) => void;
  /**
   * The account's balance was used up (session.notice BALANCE_EXHAUSTED): the server took audio up to
   * `receivedSamples`, refused captured [notAccepted.from, notAccepted.to) (also a `gap`, cause
   * `refused`) and ends the session itself. write() takes no more audio; the session then ends
   * `failed` with `error` (REALTIME_BALANCE_EXHAUSTED, with the final view), never reconnecting for it.
   */
  'balance.exhausted': (info: { readonly receivedSamples: number; readonly notAccepted: { readonly from: number; readonly to: number } | null; readonly notice: RealtimeNotice; readonly error: RealtimeError }) => void;
  /** The recovery window passed; `finishedOverRest` says whether the result was saved anyway. */
  'recovery.expired': (info: { readonly finishedOverRest: boolean }) => void;
  /** Things worth a debug log: unknown or malformed messages, expected refusals around rotation. */
  debug: (info: { readonly kind: string; readonly detail?: Readonly<Record<string, unknown>> }) => void;
  /**
   * Every server message of the current socket as received, after the session applied it: for
   * protocol logging only. Not deduplicated (a line can come again in a view); render from the events above.
   */
  message: (message: ServerMessage) => void;
}

/**
 * An event a helper decided on, for the session to emit (helpers never hold the emitter): one of the
 * events above with its payload. K narrows it to the events a helper may decide.
 */
export type EmitAction<K extends keyof RealtimeSessionEvents = keyof RealtimeSessionEvents> = {
  [E in K]: { readonly do: 'emit'; readonly event: E; readonly payload: Parameters<RealtimeSessionEvents[E]>[0] };
}[K];

export type { SessionHealth, HealthReportKind, ReconnectRecord, WindowStats } from './health/health-meter.js';

/** What `finish()` resolves with: the final view, every notice, and the final lines. */
export interface RealtimeFinishResult {
  readonly session: RealtimeSession;
  readonly notices: readonly RealtimeNotice[];
  readonly lines: readonly SessionLine[];
  /** Why the session ended this way (e.g. "finished", "recovery window expired: finished over REST"). */
  readonly reason: string;
}
