import type { SupplementDecision, SupplementKind } from '../session/audio.js';
import { TokenAging } from '../session/token-aging.js';

/**
 * Socket fault injection, for our tests and for users testing their own apps against the
 * reference server: `server.faults.socket`. Rules last until removed (or `clear()`); actions act once.
 *
 *   rules    withholdAcks, delayAcks, withholdSupplements, delaySupplements, slowReads, hideFeatures
 *   actions  rotateNow, closeSocket, halfOpen, expireTokens
 *
 * A rule without sessionId applies to every session. Withheld acks are not lost: when the rule goes,
 * the next ack carries the cursor reached meanwhile. A withheld supplement arrives only through
 * `services.realtime` (deliverSupplement) or never; a delayed one arrives after `ms`.
 */
export type SocketFaultRule =
  | { readonly kind: 'withholdAcks'; readonly sessionId?: string }
  | { readonly kind: 'delayAcks'; readonly ms: number; readonly sessionId?: string }
  | { readonly kind: 'withholdSupplements'; readonly kinds?: readonly SupplementKind[]; readonly sessionId?: string }
  | { readonly kind: 'delaySupplements'; readonly ms: number; readonly kinds?: readonly SupplementKind[]; readonly sessionId?: string }
  /** Slow consumer: after each inbound message the server stops reading the socket for `ms`. */
  | { readonly kind: 'slowReads'; readonly ms: number; readonly sessionId?: string }
  /**
   * An older server: session.ready lists no `features` on the sockets opened while the rule holds, so a
   * client sends none of them (docs/protocol.md "Skipped time": no skip frames, the silence as audio).
   */
  | { readonly kind: 'hideFeatures'; readonly sessionId?: string };

export interface SocketFaultHandle {
  remove(): void;
}

/** What the socket server does for the one-shot actions (bound when the server starts). */
export interface SocketFaultTarget {
  rotateNow(sessionId: string): boolean;
  closeSocket(sessionId: string, code: number, reason: string): boolean;
  halfOpen(sessionId: string): boolean;
  /** Rules changed: connections re-check withheld acks. */
  rulesChanged(): void;
}

export type AckMode = { readonly kind: 'now' } | { readonly kind: 'withhold' } | { readonly kind: 'delay'; readonly ms: number };

export class SocketFaults {
  private rules: SocketFaultRule[] = [];
  private target: SocketFaultTarget | undefined;
  /** Sessions whose tokens were expired early (expireTokens). */
  readonly tokens = new TokenAging();

  /** Called by the socket server; the actions below do nothing before. */
  bind(target: SocketFaultTarget | undefined): void {
    this.target = target;
  }

  inject(rule: SocketFaultRule): SocketFaultHandle {
    this.rules.push(rule);
    return {
      remove: () => {
        this.rules = this.rules.filter((r) => r !== rule);
        this.target?.rulesChanged();
      },
    };
  }

  clear(): void {
    this.rules = [];
    this.target?.rulesChanged();
  }

  /** Sends usage.updated with rotate true now (false when the session cannot rotate now). */
  rotateNow(sessionId: string): boolean {
    return this.target?.rotateNow(sessionId) ?? false;
  }

  /** Closes the session's socket with this code (any 1000 or 3000..4999 code). */
  closeSocket(sessionId: string, code = 4000, reason = 'injected close'): boolean {
    return this.target?.closeSocket(sessionId, code, reason) ?? false;
  }

  /**
   * Half-opens the session's socket: the server stops reading and writing it but keeps the TCP
   * connection, as a dead NAT mapping or a frozen proxy does. The client notices by heartbeat; the
   * server side ends it when its own heartbeat timeout passes.
   */
  halfOpen(sessionId: string): boolean {
    return this.target?.halfOpen(sessionId) ?? false;
  }

  /**
   * Every socket token issued for the session so far expires now (token-aging.ts): an open socket
   * goes on (a token is checked only when a socket opens), the next upgrade with such a token is
   * refused 401 UNAUTHORIZED, and a token issued from now on (POST …/socket-token) is valid.
   */
  expireTokens(sessionId: string): void {
    this.tokens.expire(sessionId);
  }

  ackMode(sessionId: string): AckMode {
    let mode: AckMode = { kind: 'now' };
    for (const rule of this.applicable(sessionId)) {
      if (rule.kind === 'withholdAcks') return { kind: 'withhold' };
      if (rule.kind === 'delayAcks') mode = { kind: 'delay', ms: rule.ms };
    }
    return mode;
  }

  /** undefined when no rule decides (the configured supplement policy then does). */
  supplementDecision(sessionId: string, kind: SupplementKind): SupplementDecision | undefined {
    let decision: SupplementDecision | undefined;
    for (const rule of this.applicable(sessionId)) {
      if (rule.kind !== 'withholdSupplements' && rule.kind !== 'delaySupplements') continue;
      if (rule.kinds !== undefined && !rule.kinds.includes(kind)) continue;
      if (rule.kind === 'withholdSupplements') return 'withhold';
      decision = { delayMs: rule.ms };
    }
    return decision;
  }

  /** Whether session.ready hides this server's features from the session's next socket. */
  featuresHidden(sessionId: string): boolean {
    return this.applicable(sessionId).some((rule) => rule.kind === 'hideFeatures');
  }

  readDelayMs(sessionId: string): number {
    let ms = 0;
    for (const rule of this.applicable(sessionId)) if (rule.kind === 'slowReads') ms = Math.max(ms, rule.ms);
    return ms;
  }

  private applicable(sessionId: string): SocketFaultRule[] {
    return this.rules.filter((r) => r.sessionId === undefined || r.sessionId === sessionId);
  }
}
