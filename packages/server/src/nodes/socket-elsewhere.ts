import { isApiError } from '../errors.js';
import { NODES } from '../protocol.js';
import type { ElsewhereOutcome, SocketServerDeps } from '../realtime/socket/server.js';
import { storedSessionView } from '../realtime/session/view.js';
import type { Adopted, Takeover } from '../live/takeover.js';
import { forwardUpgrade } from './forward.js';
import { wasForwarded, type SessionOwners } from './session-owners.js';

/**
 * The socket endpoint's answer for a session this node does not hold (SocketServerDeps.elsewhere):
 * the upgrade forwarded to its node, or its stored view when it ended on a node that is gone. With the
 * live state (`takeover`): taken over here when nobody holds its lease, or when its holder is known
 * dead (it stopped beating, or the forward could not reach it: the fence keeps it from writing more).
 */
export function upgradeElsewhere(owners: SessionOwners, nodeId: string, now: () => number, takeover?: Takeover): NonNullable<SocketServerDeps['elsewhere']> {
  return async (req, socket, head, target) => {
    const located = await owners.locate(target.sessionId, target.accountId, wasForwarded(req.headers));
    if (located.kind === 'not-found') return { kind: 'not-found' };
    if (located.kind === 'ended') return { kind: 'ended', view: storedSessionView(located.row.id, located.task, now()) };
    if (located.kind === 'take') {
      if (takeover === undefined) throw new Error('a session to take over without the live state');
      return adopted(await takeover.adopt(located.row, located.force), located.row.id);
    }
    try {
      await forwardUpgrade(req, socket, head, located.url, nodeId);
    } catch (error) {
      const next = takeover !== undefined && ownerUnreachable(error) ? await owners.unreachable(located.row) : undefined;
      if (next === undefined || takeover === undefined) throw error;
      if (next.kind === 'ended') return { kind: 'ended', view: storedSessionView(next.row.id, next.task, now()) };
      return adopted(await takeover.adopt(located.row, true), located.row.id);
    }
    return { kind: 'forwarded' };
  };

  function adopted(outcome: Adopted, sessionId: string): ElsewhereOutcome {
    return outcome.kind === 'session' ? { kind: 'adopted', session: outcome.session } : { kind: 'ended', view: storedSessionView(sessionId, outcome.task, now()) };
  }
}

/** forward.ts's refusal when the owner could not be reached (nothing was written to the client). */
export function ownerUnreachable(error: unknown): boolean {
  return isApiError(error) && error.details?.['reason'] === NODES.ownerUnavailableReason;
}
