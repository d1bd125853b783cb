/**
 * Capped exponential backoff with full jitter, the one formula behind REST retries (http/retry-timing.ts)
 * and socket reconnects (realtime/recovery/reconnect-policy.ts). Pure: callers bring the attempt numbering, the
 * policy and the random source, so tests pin all three.
 *
 * Full jitter (delay drawn uniformly from the whole window, not a band around its mean) spreads a crowd
 * of clients that failed together, so they do not come back in lockstep.
 */

/**
 * The window after `doublings` doublings: min(maxMs, baseMs * 2^doublings). The exponent stops at 52:
 * past it any finite base has long reached a sane cap, and 0 * 2^1024 (= 0 * Infinity) would be NaN.
 */
export function backoffWindowMs(doublings: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.min(doublings, 52));
}

/** A whole-millisecond delay drawn from [0, windowMs); a random source outside [0, 1] is clamped (NaN: 0). */
export function fullJitterMs(windowMs: number, random: () => number): number {
  const r = random();
  const unit = Number.isFinite(r) ? Math.min(Math.max(r, 0), 1) : 0;
  return Math.floor(unit * windowMs);
}
