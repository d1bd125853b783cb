import { SOCKET_TOKEN } from '../../protocol.js';

/**
 * TEST-ONLY (faults.socket.expireTokens): makes a session's socket tokens expire now, as if their ten
 * minutes had passed. A token says when it expires, to the second (socket-token.ts), so "the tokens
 * handed out so far expired, a fresh one is valid" cannot be told apart by the token alone within one
 * second. Instead the session's token time moves on: tokens for it are checked and dated by the
 * service's clock plus a shift that grows by a token's lifetime and a second at each expiry. Every
 * token issued before is then past its expiry; one issued after is dated from the moved time, valid
 * for its usual ten minutes (its `expiresAt` reads that much later than the service's clock).
 */
export class TokenAging {
  private readonly shiftMs = new Map<string, number>();

  /** Every socket token issued for this session so far is expired from now on. */
  expire(sessionId: string): void {
    this.shiftMs.set(sessionId, this.shift(sessionId) + (SOCKET_TOKEN.ttlSec + 1) * 1000);
  }

  /** The time tokens of this session are issued and checked at, for the service's `nowMs`. */
  tokenNow(sessionId: string, nowMs: number): number {
    return nowMs + this.shift(sessionId);
  }

  private shift(sessionId: string): number {
    return this.shiftMs.get(sessionId) ?? 0;
  }
}

/** The session id a socket token names (not checked: verifySocketToken does that), '' for no token of ours. */
export function tokenSessionId(token: string): string {
  if (!token.startsWith(SOCKET_TOKEN.prefix)) return '';
  return token.slice(SOCKET_TOKEN.prefix.length).split('.')[0] ?? '';
}
