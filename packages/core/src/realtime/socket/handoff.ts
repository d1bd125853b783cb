import { CLOSE_CODES } from '../../protocol.js';

/**
 * Make-before-break across the server's socket recycling (docs/protocol.md "Socket lifetime"): a
 * server that limits how long one socket lives says `socket.recycle { closeInMs }` first, and the
 * session opens the next socket (the standby) at once while the current one keeps carrying audio.
 *
 *   current ready ──socket.recycle──► standby opens; the current one keeps sending
 *   standby: its session.ready (or session.finished) ────────► promote: the standby is current, the old
 *                                                             one is closed by us (1000)
 *   current: close 4001 (our standby replaced it: the server
 *            sent the standby's session.ready just before)
 *            or 4002 (the limit came first) ─────────────────► promote: current, not ready yet (frames wait)
 *   current: any other loss ─────────────────────────────────► standby dropped, recovered as any loss
 *   standby closes, says anything else first, or is not ready
 *   within the notice's closeInMs ───────────────────────────► forgotten: at the limit the current one
 *                                                             is closed 4002 and reconnects at once
 *   the current socket was replaced while the provider ran ──► no standby (the new socket is fresh)
 *
 * Frames in flight on the old socket are resent from the new socket's session.ready cursor, as after
 * any reconnect; the server attaches the new socket before it lets the old one go, so the session's
 * recovery window never starts. A promotion is a reconnect with cause `recycled` that takes nothing
 * from the reconnect budget and never counts toward flapping (SessionRecovery.handoff()).
 *
 * Decisions only: SessionConnection (connection.ts) asks them with the sockets it holds; the session acts.
 */
export interface HandoffView {
  readonly terminal: boolean;
  /** The current socket said session.ready. */
  readonly ready: boolean;
  /** A standby is connecting already. */
  readonly standby: boolean;
  /** A REST finish is under way: no socket is wanted any more. */
  readonly restFinishing: boolean;
}

/** socket.recycle arrived on the current socket: whether to open the standby now. */
export function opensStandby(v: HandoffView): boolean {
  return !v.terminal && v.ready && !v.standby && !v.restFinishing;
}

/**
 * A message on the standby: only its session.ready, or the news that the session ended
 * (session.finished), makes it the current socket. Anything else (an `error` before a refusing close)
 * is not the session's: the current socket carries on, and the standby's close forgets it.
 */
export function promotesStandby(type: string | undefined): boolean {
  return type === 'session.ready' || type === 'session.finished';
}

/**
 * How long a standby may take to say session.ready: the time the notice gave, then it is dropped (a
 * standby stuck connecting would otherwise be promoted at the cut and stall the audio for a whole
 * connect timeout). At least a second, so a notice given late still leaves it a chance.
 */
export function standbyDeadlineMs(closeInMs: number | undefined, connectTimeoutMs: number): number {
  return Math.min(connectTimeoutMs, Math.max(1000, closeInMs ?? connectTimeoutMs));
}

/**
 * The current socket closed while a standby was connecting: `promote` when the close is the handoff
 * itself (4001 caused by our standby, or the recycling limit 4002), `lost` for anything else.
 */
export function closeDuringHandoff(code: number): 'promote' | 'lost' {
  return code === CLOSE_CODES.REPLACED || code === CLOSE_CODES.SOCKET_RECYCLED ? 'promote' : 'lost';
}
