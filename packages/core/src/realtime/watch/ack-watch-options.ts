import type { Violation } from '../../errors/api-errors.js';
import { ValidationError } from '../../errors/client-errors.js';

/**
 * The `ackWatch` option: how a streaming session tells a half-open socket from a slow one by its
 * acknowledgements (docs/protocol.md "Heartbeat and half-open sockets"; ack-watchdog.ts). Every field is
 * optional; what is left out keeps its default (ACK_WATCH).
 */
export interface AckWatchOptions {
  /** Ack silence with audio in flight before `health` says `degraded`. Default: ACK_WATCH. */
  readonly degradedAfterMs?: number;
  /** Ack silence with audio in flight before a `ping` probes the socket. Default: ACK_WATCH. */
  readonly probeAfterMs?: number;
  /**
   * A probe unanswered this long, plus the time the audio queued ahead of it needs (maxBacklogWaitMs),
   * means the socket is half-open: it is dropped and the session reconnects. Default: ACK_WATCH.
   */
  readonly probeTimeoutMs?: number;
  /** The socket answered but acks still do not come: probe again this often. Default: ACK_WATCH. */
  readonly probeEveryMs?: number;
  /**
   * The most a probe's deadline grows for the audio queued ahead of the ping (a slow link with a backlog
   * answers late but answers). 0: never grows. Default: ACK_WATCH.
   */
  readonly maxBacklogWaitMs?: number;
}

export type AckWatchTiming = Required<AckWatchOptions>;

/**
 * The defaults of the `ackWatch` option (the session's option table, options/defaults.ts, points here):
 * a stall shorter than probeAfterMs + probeTimeoutMs (1.5 s) never reconnects.
 */
export const ACK_WATCH: Readonly<Required<AckWatchOptions>> = Object.freeze({ degradedAfterMs: 500, probeAfterMs: 500, probeTimeoutMs: 1000, probeEveryMs: 1000, maxBacklogWaitMs: 10_000 });

/** Each field's lowest value; every value must be a finite number. */
const LOWEST: Readonly<Record<keyof AckWatchTiming, { readonly min: number; readonly exclusive: boolean }>> = {
  degradedAfterMs: { min: 0, exclusive: true },
  probeAfterMs: { min: 0, exclusive: true },
  probeTimeoutMs: { min: 0, exclusive: true },
  probeEveryMs: { min: 0, exclusive: true },
  maxBacklogWaitMs: { min: 0, exclusive: false },
};

const FIELDS = Object.keys(LOWEST) as ReadonlyArray<keyof AckWatchTiming>;

/**
 * The timing the `ackWatch` option asks for: the defaults when absent, `null` for `false` (no ack-driven
 * detection: the heartbeat alone watches the socket, and `health` never turns `degraded` for acks).
 * A ValidationError lists every broken rule at once (`field` as `ackWatch.probeTimeoutMs`).
 */
export function ackWatchTiming(option: unknown): AckWatchTiming | null {
  if (option === undefined) return ACK_WATCH;
  if (option === false) return null;
  if (typeof option !== 'object' || option === null || Array.isArray(option)) {
    throw new ValidationError([{ field: 'ackWatch', rule: `must be false (ack-driven half-open detection off) or an object of { ${FIELDS.join(', ')} }, got ${describe(option)}` }]);
  }
  const given = option as Record<string, unknown>;
  const violations: Violation[] = [];
  for (const key of Object.keys(given)) {
    if (!(FIELDS as readonly string[]).includes(key)) violations.push({ field: `ackWatch.${key}`, rule: `is not an ackWatch option (known: ${FIELDS.join(', ')})` });
  }
  const timing: Record<string, number> = { ...ACK_WATCH };
  for (const key of FIELDS) {
    const value = given[key];
    if (value === undefined) continue;
    const { min, exclusive } = LOWEST[key];
    if (typeof value === 'number' && Number.isFinite(value) && (exclusive ? value > min : value >= min)) timing[key] = value;
    else violations.push({ field: `ackWatch.${key}`, rule: `must be a finite number of ms ${exclusive ? 'above' : 'of at least'} ${min}, got ${describe(value)}` });
  }
  if (violations.length > 0) throw new ValidationError(violations);
  return Object.freeze(timing as unknown as AckWatchTiming);
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' && value !== null ? 'an object' : String(value);
}
