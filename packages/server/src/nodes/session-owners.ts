import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import { ApiError } from '../errors.js';
import { NODES } from '../protocol.js';
import type { NodeRow, RealtimeSessionRow, Store, TaskRow } from '../store/store.js';
import type { LiveStore } from '../live/live-store.js';
import { unavailable } from '../live/takeover.js';

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
  | { readonly kind: 'ended'; readonly row: RealtimeSessionRow; readonly task: TaskRow }
  /**
   * With the live state (Redis): nobody holds the session's lease (it lapsed, or was let go), or its
   * holder is known dead (`force`): this node takes it over (src/live/takeover.ts).
   */
  | { readonly kind: 'take'; readonly row: RealtimeSessionRow; readonly force: boolean };

export class SessionOwners {
  constructor(
    private readonly store: Store,
    private readonly nodeId: string,
    private readonly staleAfterMs: number,
    /** The live state: the lease holder, not the store's row, says who owns a session (see locateLive). */
    private readonly live?: LiveStore,
  ) {}

  /**
   * `accountId` undefined: the caller proved the session another way (a socket token). `hopped`: the
   * request carries the hop header. Throws the 503s above as ApiErrors; a store that cannot be reached
   * throws its StoreError (answered 503 STORE_UNAVAILABLE).
   */
  async locate(sessionId: string, accountId: string | undefined, hopped: boolean): Promise<Located> {
    const row = await this.store.nodes.session(sessionId);
    if (row === undefined || (accountId !== undefined && row.accountId !== accountId)) return { kind: 'not-found' };
    if (this.live !== undefined) return this.locateLive(this.live, row, hopped);
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

  /**
   * With the live state (the lease holder, read from Redis, owns a live session; the store's row names
   * the node that last took it, which keeps a finished session readable in its memory):
   *
   *   a lease held by another node that beats          --> forward (a forwarded request: 503 SESSION_OWNER_MOVED)
   *   the task ended: its last node beats             --> forward; else ended: answered from the store
   *   no lease (lapsed, or let go)                     --> take
   *   a lease held by a node that stopped beating, left
   *   the registry, or this node (it restarted)        --> take, force
   *   Redis cannot be reached                          --> 503 LIVE_STATE_UNAVAILABLE
   */
  /**
   * The node a request was forwarded to could not be reached: it is known dead. With the live state its
   * session is taken over (force), or answered from the store once it ended; without, the caller's 503
   * stands (undefined).
   */
  async unreachable(row: RealtimeSessionRow): Promise<Extract<Located, { kind: 'ended' | 'take' }> | undefined> {
    if (this.live === undefined) return undefined;
    const task = await this.store.tasks.get(row.taskId);
    if (task !== undefined && (TERMINAL_STATUSES as readonly TaskStatus[]).includes(task.status)) return { kind: 'ended', row, task };
    return { kind: 'take', row, force: true };
  }

  private async locateLive(live: LiveStore, row: RealtimeSessionRow, hopped: boolean): Promise<Located> {
    let holder: string | undefined;
    try {
      holder = await live.holder(row.id);
    } catch (error) {
      throw unavailable(error);
    }
    const beating = async (nodeId: string): Promise<NodeRow | undefined> => {
      if (nodeId === this.nodeId) return undefined;
      const node = row.nodeId === nodeId && row.node !== undefined ? row.node : (await this.store.nodes.list()).find((n) => n.id === nodeId);
      return node !== undefined && node.heartbeatAgeMs < this.staleAfterMs ? node : undefined;
    };
    const forward = (node: NodeRow): Located => {
      if (hopped) throw new ApiError('SERVICE_UNAVAILABLE', 'this realtime session is not on the server the request was forwarded to; try again', { reason: NODES.ownerMovedReason }, { retryAfterSec: 1 });
      return { kind: 'forward', url: node.internalUrl, row };
    };
    const holding = holder === undefined ? undefined : await beating(holder);
    if (holding !== undefined) return forward(holding);
    const task = await this.store.tasks.get(row.taskId);
    if (task !== undefined && (TERMINAL_STATUSES as readonly TaskStatus[]).includes(task.status)) {
      const last = hopped ? undefined : await beating(row.nodeId);
      return last !== undefined ? forward(last) : { kind: 'ended', row, task };
    }
    return { kind: 'take', row, force: holder !== undefined };
  }
}

/** Whether a request was forwarded by another node already. */
export function wasForwarded(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[NODES.hopHeader] !== undefined;
}

