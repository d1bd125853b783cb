import { createHmac, timingSafeEqual } from 'node:crypto';
import { SOCKET_TOKEN } from '../../protocol.js';

/**
 * Socket tokens for browsers (protocol.ts SOCKET_TOKEN): `rtt_<session id>.<expiry s>.<HMAC>`, signed
 * with the secret every node shares (Store.nodes.socketTokenSecret), so any node verifies any node's.
 */
export function issueSocketToken(secret: Buffer, sessionId: string, nowMs: number): { token: string; expiresAt: string } {
  const expires = Math.floor(nowMs / 1000) + SOCKET_TOKEN.ttlSec;
  const sig = createHmac('sha256', secret).update(`${sessionId}.${expires}`).digest('base64url');
  return { token: `${SOCKET_TOKEN.prefix}${sessionId}.${expires}.${sig}`, expiresAt: new Date(expires * 1000).toISOString() };
}

/** The session id a valid, unexpired token names; undefined for one not signed with `secret`, or expired. */
export function verifySocketToken(secret: Buffer, token: string, nowMs: number): string | undefined {
  if (!token.startsWith(SOCKET_TOKEN.prefix)) return undefined;
  const [id, expires, sig] = token.slice(SOCKET_TOKEN.prefix.length).split('.');
  if (id === undefined || expires === undefined || sig === undefined || Number(expires) * 1000 < nowMs) return undefined;
  const want = createHmac('sha256', secret).update(`${id}.${expires}`).digest();
  const got = Buffer.from(sig, 'base64url');
  if (got.length !== want.length || !timingSafeEqual(got, want)) return undefined;
  return id;
}
