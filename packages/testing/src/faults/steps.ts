import type { SupplementKind } from '@soundclone/server';
import { TestingError } from '../errors.js';
import { toSamples, type AudioTime } from '../speech/time.js';

/**
 * When a step acts: `at` a position in the session's received audio (samples, '2.5s', '300ms'), or
 * `afterMs` of wall time after the session's first accepted audio.
 */
export type FaultTrigger = { readonly at: AudioTime; readonly afterMs?: never } | { readonly afterMs: number; readonly at?: never };

/**
 * What a step does.
 *   cut, stall, halfOpen      the network between clients and the service (every connection through
 *                             the kit's proxy): reset, stop forwarding for `ms`, swallow everything
 *   close                     the service closes the session's socket with `code` (default 4000)
 *   rotate                    the service asks the session to rotate (usage.updated rotate: true)
 *   withholdAcks, delayAcks   the service holds acks back, for `forMs` (default: until the run stops)
 *   withholdSupplements,
 *   delaySupplements          the same for the session's supplements (`kinds`: all when omitted)
 *   expireToken               every socket token issued for the session so far expires (as if its
 *                             ten minutes had passed); the open socket goes on, the next socket
 *                             opened with such a token is refused 401, a token from the session's
 *                             socket-token endpoint is valid. Pair it with `cut` or `close` to make
 *                             the SDK open the next socket there and then.
 */
export type FaultAction =
  | { readonly do: 'cut' }
  | { readonly do: 'stall'; readonly ms: number }
  | { readonly do: 'halfOpen' }
  | { readonly do: 'close'; readonly code?: number }
  | { readonly do: 'rotate' }
  | { readonly do: 'expireToken' }
  | { readonly do: 'withholdAcks'; readonly forMs?: number }
  | { readonly do: 'delayAcks'; readonly ms: number; readonly forMs?: number }
  | { readonly do: 'withholdSupplements'; readonly kinds?: readonly SupplementKind[]; readonly forMs?: number }
  | { readonly do: 'delaySupplements'; readonly ms: number; readonly kinds?: readonly SupplementKind[]; readonly forMs?: number };

export type FaultStep = FaultTrigger & FaultAction;

/** A step checked: its trigger in samples or milliseconds. */
export type PlacedStep = { readonly index: number; readonly atSample?: bigint; readonly afterMs?: number; readonly step: FaultStep };

const ACTIONS: ReadonlySet<string> = new Set(['cut', 'stall', 'halfOpen', 'close', 'rotate', 'expireToken', 'withholdAcks', 'delayAcks', 'withholdSupplements', 'delaySupplements']);

/** Checks every step; throws TestingError TESTING_INVALID_FAULT naming the first bad one. */
export function placeSteps(steps: readonly FaultStep[]): PlacedStep[] {
  return steps.map((step, index) => {
    const where = `steps[${index}]`;
    if (step === null || typeof step !== 'object' || !ACTIONS.has(step.do)) throw new TestingError('TESTING_INVALID_FAULT', `${where}.do: one of ${[...ACTIONS].join(', ')}`);
    const ms = (name: string, value: unknown, required: boolean): void => {
      if (value === undefined && !required) return;
      if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) throw new TestingError('TESTING_INVALID_FAULT', `${where}.${name}: milliseconds, at least 0`);
    };
    if (step.do === 'stall' || step.do === 'delayAcks' || step.do === 'delaySupplements') ms('ms', step.ms, true);
    if ('forMs' in step) ms('forMs', step.forMs, false);
    if (step.at !== undefined && step.afterMs !== undefined) throw new TestingError('TESTING_INVALID_FAULT', `${where}: \`at\` or \`afterMs\`, not both`);
    if (step.at !== undefined) return { index, atSample: BigInt(toSamples(step.at, `${where}.at`, 'TESTING_INVALID_FAULT')), step };
    ms('afterMs', step.afterMs, true);
    return { index, afterMs: step.afterMs as number, step };
  });
}
