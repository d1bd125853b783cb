import { SoundCloneError } from './base.js';
import type { RealtimeSession } from '../types/realtime.js';

/** Stable codes of RealtimeError (docs/errors.md "RealtimeError"). */
export type RealtimeErrorCode =
  | 'REALTIME_NO_WEBSOCKET'
  | 'REALTIME_SOCKET_REFUSED'
  | 'REALTIME_SESSION_NOT_FOUND'
  | 'REALTIME_RECONNECT_EXHAUSTED'
  | 'REALTIME_RECOVERY_WINDOW_EXPIRED'
  | 'REALTIME_SESSION_REPLACED'
  | 'REALTIME_PROTOCOL_VIOLATION'
  | 'REALTIME_SLOW_CONSUMER'
  | 'REALTIME_SESSION_FAILED'
  | 'REALTIME_BALANCE_EXHAUSTED'
  | 'REALTIME_INVALID_STATE'
  | 'REALTIME_WRITE_TOO_LARGE'
  | 'REALTIME_TIMEOUT'
  | 'REALTIME_ABORTED'
  | 'REALTIME_CLOSED';

/**
 * A realtime session failed or refused a call. One class, several causes, each a static factory so
 * the message and the code stay together (style guide "Errors"). `closeCode` is the socket's close
 * code when one was involved.
 */
export class RealtimeError extends SoundCloneError {
  override name = 'RealtimeError' as const;
  declare readonly code: RealtimeErrorCode;
  readonly closeCode: number | undefined;
  /**
   * REALTIME_SESSION_FAILED: the final session view, with its `error` (retryable, action).
   * REALTIME_BALANCE_EXHAUSTED: the final view the server settled (status PARTIAL, the charge).
   */
  readonly session: RealtimeSession | undefined;
  /** REALTIME_BALANCE_EXHAUSTED: the server's sample position where the balance was used up. */
  readonly receivedSamples: number | undefined;
  /**
   * REALTIME_BALANCE_EXHAUSTED: the captured samples [from, to) the server refused (also declared as a
   * `gap` with cause `refused`); null when nothing was captured past the limit.
   */
  readonly notAccepted: { readonly from: number; readonly to: number } | null | undefined;

  constructor(
    code: RealtimeErrorCode,
    message: string,
    options: { cause?: unknown; closeCode?: number; session?: RealtimeSession; receivedSamples?: number; notAccepted?: { readonly from: number; readonly to: number } | null } = {},
  ) {
    super(code, message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.closeCode = options.closeCode;
    this.session = options.session;
    this.receivedSamples = options.receivedSamples;
    this.notAccepted = options.notAccepted;
  }

  /**
   * No WebSocket to open the socket with: none passed, `ws` (an optional peer dependency of core) not
   * installed, and no global one (Node 20). `cause` is the failed import of `ws`, when there was one.
   */
  static noWebSocket(cause?: unknown): RealtimeError {
    return new RealtimeError(
      'REALTIME_NO_WEBSOCKET',
      'no WebSocket implementation: this runtime has no global WebSocket and the `ws` package is not installed. In Node, install it next to @soundclone/core (`npm i ws`), or pass options.WebSocket',
      cause !== undefined ? { cause } : {},
    );
  }

  static socketRefused(reason: string, cause?: unknown): RealtimeError {
    return new RealtimeError('REALTIME_SOCKET_REFUSED', `the socket was refused: ${reason}`, { cause });
  }

  static sessionNotFound(closeCode?: number): RealtimeError {
    return new RealtimeError('REALTIME_SESSION_NOT_FOUND', 'the realtime session does not exist or belongs to another account', closeCode !== undefined ? { closeCode } : {});
  }

  static reconnectExhausted(reason: string, cause?: RealtimeError): RealtimeError {
    return new RealtimeError('REALTIME_RECONNECT_EXHAUSTED', `the reconnect policy gave up (${reason}); the session stays open on the server until its recovery window passes`, cause !== undefined ? { cause } : {});
  }

  /**
   * Close 4429: the server held more unread messages for this client than it allows
   * (capabilities `limits.socket.maxBufferedBytes`) and closed the socket. Not final: the session
   * reconnects and resumes from the server's cursor; a client that keeps hitting it reads too slowly
   * (a blocked event loop, a paused socket).
   */
  static slowConsumer(): RealtimeError {
    return new RealtimeError('REALTIME_SLOW_CONSUMER', 'the server closed the socket because this client did not read its messages (close 4429 SLOW_CONSUMER)', { closeCode: 4429 });
  }

  static recoveryWindowExpired(): RealtimeError {
    return new RealtimeError('REALTIME_RECOVERY_WINDOW_EXPIRED', 'the recovery window passed; the session no longer accepts audio (finish it over REST to save the result)');
  }

  static replaced(): RealtimeError {
    return new RealtimeError('REALTIME_SESSION_REPLACED', 'a newer socket attached to this session', { closeCode: 4001 });
  }

  static protocolViolation(closeCode: number, reason: string): RealtimeError {
    return new RealtimeError('REALTIME_PROTOCOL_VIOLATION', `the server closed the socket: ${reason}`, { closeCode });
  }

  static invalidState(call: string, state: string): RealtimeError {
    return new RealtimeError('REALTIME_INVALID_STATE', `${call}() is not possible in state ${state}`);
  }

  static timeout(call: string, ms: number): RealtimeError {
    return new RealtimeError('REALTIME_TIMEOUT', `${call}() did not complete within ${ms} ms`);
  }

  static aborted(call: string, reason: unknown): RealtimeError {
    return new RealtimeError('REALTIME_ABORTED', `${call}() was aborted`, { cause: reason });
  }

  /** The service ended the session FAILED before it was ready (e.g. it could not start recognition). */
  static sessionFailed(view: RealtimeSession): RealtimeError {
    const why = view.error === undefined ? 'no reason given' : `${view.error.errorCode}: ${view.error.message}`;
    return new RealtimeError('REALTIME_SESSION_FAILED', `the service failed the session ${view.sessionId} before it was ready (${why}); its view is in \`session\``, { session: view });
  }

  /**
   * The account's balance was used up: the server accepted `receivedSamples` samples, refused the rest
   * and ended the session itself (not a network fault: never retried). `session` is its final view.
   */
  static balanceExhausted(info: { readonly receivedSamples: number; readonly notAccepted: { readonly from: number; readonly to: number } | null; readonly sampleRate: number; readonly session?: RealtimeSession }): RealtimeError {
    const seconds = (info.receivedSamples / info.sampleRate).toFixed(2);
    const refused = info.notAccepted === null ? '' : `; captured samples ${info.notAccepted.from}..${info.notAccepted.to} were not accepted`;
    return new RealtimeError(
      'REALTIME_BALANCE_EXHAUSTED',
      `the account's balance was used up after ${info.receivedSamples} samples (${seconds} s) of audio: the service ended the session and charged only that${refused}; add Characters to the account to continue`,
      { receivedSamples: info.receivedSamples, notAccepted: info.notAccepted, ...(info.session !== undefined ? { session: info.session } : {}) },
    );
  }

  static closed(call: string): RealtimeError {
    return new RealtimeError('REALTIME_CLOSED', `${call}() cannot complete: the session was closed`);
  }

  /**
   * The session ended before `call` could complete: REALTIME_CLOSED when it was closed, otherwise
   * REALTIME_INVALID_STATE naming the end (a pause() overtaken by finish(), an attach() to a session
   * that was already finished: its result is read with GET).
   */
  static ended(call: string, state: string): RealtimeError {
    if (state === 'closed') return RealtimeError.closed(call);
    return new RealtimeError('REALTIME_INVALID_STATE', `${call}() cannot complete: the session is already ${state === 'finished' ? 'finished (read its result with client.stt.realtime.get())' : state}`);
  }
}
