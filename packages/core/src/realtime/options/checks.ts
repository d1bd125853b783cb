import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';
import { MAX_TIMER_MS } from '../plumbing/timer-set.js';

/**
 * Every option a session reads (options.ts), so a misspelt one (`sampelRate`) is refused, not
 * ignored. connect() and attach() build a session to check their options before anything reaches the
 * server, so a refused option never leaves a created session behind.
 */
const KNOWN: ReadonlySet<string> = new Set([
  'signal', 'sampleRate', 'channels', 'reconnect', 'stableWindowMs', 'credentials', 'WebSocket', 'bufferMs', 'maxInFlightSamples',
  'heartbeatTimeoutMs', 'connectTimeoutMs', 'drainTimeoutMs', 'restFinishReserveMs', 'ackWatch', 'logger', 'now',
  'sessionId', 'socketUrl', 'accessKey', 'token', 'rest',
]);

/** The samples of one 20 ms frame: an in-flight window smaller than that never lets a frame out. */
const ONE_FRAME = 320;

/**
 * The checks of the options the session's parts do not check themselves (the outbox checks sampleRate,
 * channels and bufferMs), every broken rule at once. Values that would arm no timer, an immediate one,
 * or a window no frame fits would not fail: they would stall a finish or reconnect without end.
 */
export function checkSessionOptions(init: object): void {
  const o = init as Record<string, unknown>;
  const violations: Violation[] = [];
  const add = (field: string, rule: string): void => void violations.push({ field, rule });
  for (const key of Object.keys(o)) if (!KNOWN.has(key) && o[key] !== undefined) add(key, 'is not a known session option');
  const ms = (field: string, min: number): void => {
    const v = o[field];
    if (v !== undefined && !(typeof v === 'number' && v >= min && v <= MAX_TIMER_MS)) add(field, `must be a number of milliseconds in [${min}, ${MAX_TIMER_MS}], got ${String(v)}`);
  };
  ms('stableWindowMs', 0);
  ms('drainTimeoutMs', 0);
  ms('restFinishReserveMs', 0);
  ms('connectTimeoutMs', 1);
  // Below ~100 ms the heartbeat would drop healthy sockets between two acks: a reconnect storm.
  ms('heartbeatTimeoutMs', 100);
  const inFlight = o['maxInFlightSamples'];
  if (inFlight !== undefined && !(Number.isInteger(inFlight) && (inFlight as number) >= ONE_FRAME)) add('maxInFlightSamples', `must be a whole number of samples >= ${ONE_FRAME} (one 20 ms frame), got ${String(inFlight)}`);
  const fn = (field: string, what: string): void => {
    if (o[field] !== undefined && typeof o[field] !== 'function') add(field, `must be ${what}`);
  };
  fn('credentials', 'a function returning a promise of { token?, apiKey? }');
  fn('WebSocket', 'a WebSocket constructor');
  fn('now', 'a function returning milliseconds');
  const policy = o['reconnect'];
  if (policy !== undefined && (typeof policy !== 'object' || policy === null || typeof (policy as { nextRetryDelayMs?: unknown }).nextRetryDelayMs !== 'function')) {
    add('reconnect', 'must be a ReconnectPolicy: an object with nextRetryDelayMs(context) (e.g. new DefaultReconnectPolicy({ ... }))');
  }
  if (violations.length > 0) throw new ValidationError(violations);
}
