import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';
import { backoffWindowMs, fullJitterMs } from '../../util/backoff.js';

/**
 * When to try the socket again after it was lost. A policy is a pure function of
 * the context, so it can be swapped (fixed delays, give up offline, ...) and tested without sockets.
 */
export interface ReconnectContext {
  /**
   * Retries already made in this run (0 before the first retry). A run starts over only once a connection
   * has been stable (ready for the session's `stableWindowMs`): a connection that comes back and drops
   * again soon continues the count, so the delays keep growing.
   */
  readonly attempt: number;
  /** Milliseconds since the socket was lost (this outage: the time the server's recovery window counts). */
  readonly elapsedMs: number;
  /** Connections keep coming back and dropping before they are stable (two in a row): back off for real. */
  readonly flapping?: boolean | undefined;
  /** Close code of the lost socket, when one was seen. */
  readonly closeCode?: number | undefined;
  /** Why the last attempt failed (or why the socket was lost). */
  readonly reason: string;
}

export interface ReconnectPolicy {
  /** Milliseconds to wait before the next attempt, or null to give up. */
  nextRetryDelayMs(context: ReconnectContext): number | null;
}

export interface DefaultReconnectPolicyOptions {
  /** Ceiling of the first retry's delay. Default 250 ms. */
  readonly baseMs?: number;
  /** Cap of every delay. Default 5000 ms. */
  readonly maxMs?: number;
  /** Give up after this many retries. Default Infinity (the time budget decides). */
  readonly maxAttempts?: number;
  /**
   * Give up once this long has passed since the loss. Default 60 s, the reference server's recovery
   * window: after it the session no longer takes audio, so retrying the socket is pointless.
   */
  readonly maxElapsedMs?: number;
  /** Source of randomness in [0, 1); injectable for tests. */
  readonly random?: () => number;
}

/**
 * Capped exponential backoff with full jitter: delay = random() * min(maxMs, baseMs * 2^attempt).
 * Full jitter spreads a crowd of clients that lost the same proxy at once, instead of having them
 * return in lockstep. The first retry may be immediate, which is what a single dropped socket wants.
 * The formula is util/backoff.ts, shared with REST retries; attempts here count from 0. While the link
 * is flapping the delay is at least half the ceiling (equal jitter), so the spacing of attempts really
 * grows instead of sometimes landing near 0.
 */
export class DefaultReconnectPolicy implements ReconnectPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
  readonly maxAttempts: number;
  readonly maxElapsedMs: number;
  private readonly random: () => number;

  constructor(options: DefaultReconnectPolicyOptions = {}) {
    this.baseMs = options.baseMs ?? 250;
    this.maxMs = options.maxMs ?? 5000;
    this.maxAttempts = options.maxAttempts ?? Number.POSITIVE_INFINITY;
    this.maxElapsedMs = options.maxElapsedMs ?? 60_000;
    this.random = options.random ?? Math.random;
    // A typed error (VALIDATION_FAILED, every broken rule at once) like any other input the SDK refuses.
    const violations: Violation[] = [];
    if (!(this.baseMs >= 0)) violations.push({ field: 'baseMs', rule: `must be a number >= 0, got ${String(this.baseMs)}` });
    if (!(this.maxMs >= this.baseMs)) violations.push({ field: 'maxMs', rule: `must be a number >= baseMs (${String(this.baseMs)}), got ${String(this.maxMs)}` });
    if (!(this.maxAttempts >= 0)) violations.push({ field: 'maxAttempts', rule: `must be a number >= 0, got ${String(this.maxAttempts)}` });
    if (!(this.maxElapsedMs >= 0)) violations.push({ field: 'maxElapsedMs', rule: `must be a number >= 0, got ${String(this.maxElapsedMs)}` });
    if (typeof this.random !== 'function') violations.push({ field: 'random', rule: 'must be a function returning a number in [0, 1)' });
    if (violations.length > 0) throw new ValidationError(violations);
  }

  /** The jitter ceiling for an attempt: min(maxMs, baseMs * 2^attempt), without overflowing. */
  ceilingMs(attempt: number): number {
    return backoffWindowMs(attempt, this.baseMs, this.maxMs);
  }

  nextRetryDelayMs(context: ReconnectContext): number | null {
    if (context.attempt >= this.maxAttempts) return null;
    if (context.elapsedMs >= this.maxElapsedMs) return null;
    const ceiling = this.ceilingMs(context.attempt);
    const half = Math.floor(ceiling / 2);
    const delay = context.flapping === true ? half + fullJitterMs(ceiling - half, this.random) : fullJitterMs(ceiling, this.random);
    // Never sleep past the budget: one last attempt right at its end is still worth making.
    return Math.min(delay, Math.max(0, this.maxElapsedMs - context.elapsedMs));
  }
}
