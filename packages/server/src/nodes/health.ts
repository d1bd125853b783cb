import type { IncomingMessage, ServerResponse } from 'node:http';
import { NODES } from '../protocol.js';
import type { NodeHealth, NodeMembership } from './membership.js';

/** Whether a request is the internal health check (GET or HEAD /health, outside the API prefix). */
export function isHealthCheck(req: IncomingMessage): boolean {
  const path = (req.url ?? '/').split('?')[0];
  return path === NODES.healthPath && (req.method === 'GET' || req.method === 'HEAD');
}

/**
 * GET /health, for a balancer's health check (docs/protocol.md "Several nodes"): unauthenticated, no
 * envelope. 200 `{ status: 'ok', nodeId }`; 503 `{ status: 'starting' | 'draining' | 'unavailable', nodeId, reason }`
 * while the node starts or drains or its store does not answer, so the balancer stops sending it traffic.
 */
export async function answerHealth(req: IncomingMessage, res: ServerResponse, membership: NodeMembership | undefined): Promise<void> {
  req.resume();
  const health: NodeHealth | { ok: false; reason: 'STARTING' } = membership === undefined ? { ok: false, reason: 'STARTING' } : await membership.health();
  const nodeId = membership?.node.id ?? null;
  const body = JSON.stringify(health.ok
    ? { status: 'ok', nodeId }
    : { status: health.reason === 'DRAINING' ? 'draining' : health.reason === 'STARTING' ? 'starting' : 'unavailable', nodeId, reason: health.reason });
  res.writeHead(health.ok ? 200 : 503, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': String(Buffer.byteLength(body)),
    'Cache-Control': 'no-store',
    ...(health.ok ? {} : { 'Retry-After': '1' }),
  });
  res.end(req.method === 'HEAD' ? undefined : body);
}
