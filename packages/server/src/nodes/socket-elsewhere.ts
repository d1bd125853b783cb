import type { SocketServerDeps } from '../realtime/socket/server.js';
import { storedSessionView } from '../realtime/session/view.js';
import { forwardUpgrade } from './forward.js';
import { wasForwarded, type SessionOwners } from './session-owners.js';

/**
 * The socket endpoint's answer for a session this node does not hold (SocketServerDeps.elsewhere):
 * the upgrade forwarded to its node, or its stored view when it ended on a node that is gone.
 */
export function upgradeElsewhere(owners: SessionOwners, nodeId: string, now: () => number): NonNullable<SocketServerDeps['elsewhere']> {
  return async (req, socket, head, target) => {
    const located = await owners.locate(target.sessionId, target.accountId, wasForwarded(req.headers));
    if (located.kind === 'not-found') return { kind: 'not-found' };
    if (located.kind === 'ended') return { kind: 'ended', view: storedSessionView(located.row.id, located.task, now()) };
    await forwardUpgrade(req, socket, head, located.url, nodeId);
    return { kind: 'forwarded' };
  };
}
