import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import { ApiError } from '../errors.js';
import { NODES } from '../protocol.js';
import type { RealtimeSessionRow, Store, TaskRow } from '../store/store.js';

/**
 * Where a realtime session that this node does not hold lives, and so what a request about it gets
 * (docs/protocol.md "Several nodes"):
 *
 *   no such session, or another account's        --> not-found
 *   its node alive (beat within staleAfterMs)     --> forward to its internal URL
 *       ... but the request was forwarded already --> 503 SESSION_OWNER_MOVED (never a second hop)
 *   its node dead or gone, the task ended         --> ended: answered from the store
 *   its node dead or gone, the task still running --> 503 SESSION_OWNER_UNAVAILABLE, Retry-After
 *                                                      (until a sweeper fails it)
 *
 * locate() returns the decision; the REST routes and the socket endpoint act on it.
 */
export type Located =
  | { readonly kind: 'not-found' }
  | { readonly kind: 'forward'; readonly url: string; readonly row: RealtimeSessionRow }
  | { readonly kind: 'ended'; readonly row: RealtimeSessionRow; readonly task: TaskRow };

export class SessionOwners {
  constructor(
    private readonly store: Store,
    private readonly nodeId: string,
    private readonly staleAfterMs: number,
  ) {}

  /**
   * `accountId` undefined: the caller proved the session another way (a socket token). `hopped`: the
   * request carries the hop header. Throws the 503s above as ApiErrors; a store that cannot be reached
   * throws its StoreError (answered 503 STORE_UNAVAILABLE).
   */
  async locate(sessionId: string, accountId: string | undefined, hopped: boolean): Promise<Located> {
    const row = await this.store.nodes.session(sessionId);
    if (row === undefined || (accountId !== undefined && row.accountId !== accountId)) return { kind: 'not-found' };
    // Recorded as this node's but not held here: this node restarted under the same id and lost it.
    const alive = row.nodeId !== this.nodeId && row.node !== undefined && row.node.heartbeatAgeMs < this.staleAfterMs;
    if (alive && row.node !== undefined) {
      if (hopped) {
        throw new ApiError('SERVICE_UNAVAILABLE', 'this realtime session is not on the server the request was forwarded to; try again', { reason: NODES.ownerMovedReason }, { retryAfterSec: 1 });
      }
      return { kind: 'forward', url: row.node.internalUrl, row };
    }
    const task = await this.store.tasks.get(row.taskId);
    if (task !== undefined && (TERMINAL_STATUSES as readonly TaskStatus[]).includes(task.status)) return { kind: 'ended', row, task };
    throw new ApiError(
      'SERVICE_UNAVAILABLE',
      'the server holding this realtime session stopped answering; the session will be failed shortly (nothing charged)',
      { reason: NODES.ownerUnavailableReason },
      { retryAfterSec: Math.max(1, Math.ceil(this.staleAfterMs / 1000)) },
    );
  }
}

/** Whether a request was forwarded by another node already. */
export function wasForwarded(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[NODES.hopHeader] !== undefined;
}

