import { CLOSE_CODES } from '../../protocol.js';

/**
 * What a lost socket means for the session, by its close code or the HTTP status of its refused upgrade:
 *
 *   retry    the network or the server had a moment: reconnect under the reconnect policy
 *   refresh  the credential was refused (expired token): reconnect with fresh credentials from the
 *            session's `credentials` provider; without one it is final (another attempt meets the same answer)
 *   recycle  the server recycled the socket at its lifetime limit (4002): routine, not a fault of the link;
 *            reconnect at once, outside the reconnect policy: no delay, no attempt of the budget, no flapping
 *   fatal    the session is over, refused or owned by a newer socket: never reconnect (4409 and 4410 still
 *            read or save the result; recovery.ts decides how it ends)
 */
export type LossClass = 'retry' | 'refresh' | 'recycle' | 'fatal';

/**
 * The one table of close codes. Codes not listed (1006, proxies' 1001/1011, unknown 4xxx) are retried, so
 * a reconnectable close a newer server adds is survived; FINAL_CLOSE_CODES of protocol.ts are its fatal
 * and refresh rows (a unit test keeps them equal).
 */
export const CLOSE_CLASSES: Readonly<Record<number, LossClass>> = {
  [CLOSE_CODES.REPLACED]: 'fatal',
  [CLOSE_CODES.SOCKET_RECYCLED]: 'recycle',
  [CLOSE_CODES.PROTOCOL_VIOLATION]: 'fatal',
  [CLOSE_CODES.AUTH_FAILED]: 'refresh',
  [CLOSE_CODES.SESSION_NOT_FOUND]: 'fatal',
  [CLOSE_CODES.HEARTBEAT_TIMEOUT]: 'retry',
  [CLOSE_CODES.SESSION_FINISHED]: 'fatal',
  [CLOSE_CODES.RECOVERY_WINDOW_EXPIRED]: 'fatal',
  [CLOSE_CODES.SLOW_CONSUMER]: 'retry',
  [CLOSE_CODES.SERVER_GOING_AWAY]: 'retry',
};

/**
 * Refused upgrades (docs/protocol.md "URL and authentication"): a bad request or an unknown session is
 * refused again; 401 (no, unknown or expired credential) and 403 (refused credential) may pass with a fresh
 * one. Other statuses (429, 5xx) are retried. A browser never sees the status: its refusal is a 1006 loss.
 */
export const UPGRADE_CLASSES: Readonly<Record<number, LossClass>> = {
  400: 'fatal',
  401: 'refresh',
  403: 'refresh',
  404: 'fatal',
};

/** The class of a loss; `refresh` becomes `fatal` when the session has no way to get fresh credentials. */
export function classifyLoss(code: number | undefined, refusedStatus: number | undefined, canRefresh: boolean): LossClass {
  const found = (refusedStatus !== undefined ? UPGRADE_CLASSES[refusedStatus] : undefined) ?? (code !== undefined ? CLOSE_CLASSES[code] : undefined) ?? 'retry';
  return found === 'refresh' && !canRefresh ? 'fatal' : found;
}
