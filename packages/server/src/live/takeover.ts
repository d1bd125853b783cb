import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import { ApiError } from '../errors.js';
import { LIVE_STATE, LIVE_STATE_LOST_ERROR, NODES } from '../protocol.js';
import type { Account } from '../domain/accounts/accounts.js';
import { NODE_DRAINING_REASON, type RealtimeSessions, type Session } from '../realtime/session/sessions.js';
import type { RealtimeSessionRow, Store, TaskRow } from '../store/store.js';
import { snapshotOf } from './live-session.js';
import type { LiveStore } from './live-store.js';

/**
 * Taking a session over from the node that owned it (docs/protocol.md "Several nodes"):
 *
 *   lease taken (new fencing token; `force` when the owner is known dead, else only a lapsed lease)
 *     --> durable state read --> the session rebuilt here (RealtimeSessions.restore: the lease renewed
 *         from now on, the recogniser prepared, the open segment's audio fed to it in pieces within the
 *         node's work budget, committed lines kept, not announced again)
 *     --> the store's session row names this node (others forward to it from now on)
 *
 * Concurrent takeovers of one session on this node share one attempt. adopt() answers the Session,
 * or `ended` with its task (it ended meanwhile, or Redis lost its live state: see lost()), or throws
 * 503 SESSION_OWNER_UNAVAILABLE (another node holds it now: try again, the balancer finds it) or 503
 * LIVE_STATE_UNAVAILABLE (Redis cannot be reached).
 */
export type Adopted = { readonly kind: 'session'; readonly session: Session } | { readonly kind: 'ended'; readonly task: TaskRow };

export class Takeover {
  private readonly running = new Map<string, Promise<Adopted>>();

  constructor(
    private readonly live: LiveStore,
    private readonly store: Store,
    private readonly realtime: RealtimeSessions,
    private readonly accountById: (id: string) => Account | undefined,
    private readonly now: () => number,
  ) {}

  /**
   * The session, taken over here; or, when its live state is gone (Redis lost it) and it did not end,
   * its task failed as a session whose node died is without Redis (nothing charged) and `ended`.
   */
  adopt(row: RealtimeSessionRow, force: boolean): Promise<Adopted> {
    const held = this.realtime.byId(row.id);
    if (held !== undefined) return Promise.resolve({ kind: 'session', session: held });
    let attempt = this.running.get(row.id);
    if (attempt === undefined) {
      attempt = this.take(row, force).finally(() => this.running.delete(row.id));
      this.running.set(row.id, attempt);
    }
    return attempt;
  }

  /**
   * The dead-node sweep's adoption (nodes/membership.ts OrphanAdopter): a session no socket asked
   * for since its node died is taken over here only once its lease lapsed (never forced: of several
   * sweeping nodes the one whose take Redis runs first adopts it, the others find it held). Its recovery
   * window then runs here, and the abandoned rule ends it if nobody comes back. A session whose live
   * state is missing is failed as lost() says (nothing charged).
   */
  async adoptOrphan(row: RealtimeSessionRow): Promise<'adopted' | 'ended' | 'held' | 'here'> {
    if (this.realtime.byId(row.id) !== undefined) return 'here';
    try {
      const outcome = await this.adopt(row, false);
      return outcome.kind === 'session' ? 'adopted' : 'ended';
    } catch (error) {
      if (error instanceof ApiError && error.details?.['reason'] === NODES.ownerUnavailableReason) return 'held';
      throw error;
    }
  }

  private async take(row: RealtimeSessionRow, force: boolean): Promise<Adopted> {
    const sessionId = row.id;
    // A draining node hands its sessions over: taking one would only move it again.
    if (this.realtime.isDraining) throw draining();
    let taken;
    const takenAt = this.live.clock();
    try {
      taken = await this.live.take(sessionId, force);
    } catch (error) {
      throw unavailable(error);
    }
    if (taken.kind === 'held') throw ownerBusy();
    if (taken.kind === 'missing') return this.lost(row);
    try {
      const record = await this.live.read(sessionId);
      if (record === undefined) return await this.lost(row);
      const snapshot = snapshotOf(record);
      const task = await this.store.tasks.get(snapshot.identity.taskId);
      if (task === undefined) throw new Error(`realtime session ${sessionId} has no task ${snapshot.identity.taskId}`);
      if ((TERMINAL_STATUSES as readonly TaskStatus[]).includes(task.status)) {
        await this.live.end(sessionId, taken.token).catch(() => undefined);
        return { kind: 'ended', task };
      }
      const account = this.accountById(snapshot.identity.ownerId);
      if (account === undefined) throw new Error(`realtime session ${sessionId} belongs to an account this node does not know`);
      const session = await this.realtime.restore(account, task, snapshot, taken.token, takenAt);
      await this.store.nodes.moveSession(sessionId, this.live.nodeId);
      return { kind: 'session', session };
    } catch (error) {
      // Not taken after all: let the lease go so the next attempt (here or elsewhere) may take it.
      await this.live.release(sessionId, taken.token).catch(() => undefined);
      throw error;
    }
  }

  /**
   * No live state for a session (Redis lost it: restarted empty, or failed over without it). A session
   * younger than LiveTiming.lostAfterMs may still be being made by another node (its live state follows
   * its database row by a moment): try again. An older one that did not end cannot go on anywhere: its
   * task is failed (nothing charged), as a session whose node died is without Redis.
   */
  private async lost(row: RealtimeSessionRow): Promise<Adopted> {
    const task = await this.store.tasks.get(row.taskId);
    if (task === undefined) throw new Error(`realtime session ${row.id} has no task ${row.taskId}`);
    if ((TERMINAL_STATUSES as readonly TaskStatus[]).includes(task.status)) return { kind: 'ended', task };
    const now = this.now();
    if (now - task.createdAt < this.live.timing.lostAfterMs) throw ownerBusy();
    const failed = await this.store.failTask(task.id, { ...LIVE_STATE_LOST_ERROR, requestId: task.requestId }, now);
    return { kind: 'ended', task: failed === 'already' ? ((await this.store.tasks.get(task.id)) ?? task) : failed };
  }
}

function draining(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'this server is shutting down and takes no realtime session over; try again (another server takes it)', { reason: NODE_DRAINING_REASON }, { retryAfterSec: 1 });
}

function ownerBusy(): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'another server holds this realtime session now; try again', { reason: NODES.ownerUnavailableReason }, { retryAfterSec: 1 });
}

export function unavailable(cause: unknown): ApiError {
  return new ApiError('SERVICE_UNAVAILABLE', 'the live session state cannot be reached now; try again', { reason: LIVE_STATE.unavailableReason }, { cause, retryAfterSec: 1 });
}
