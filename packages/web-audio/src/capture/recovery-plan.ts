import { defaultRecoveryDelayMs, type RecoveryOptions } from './health.js';

/**
 * What a capture does next after losing its device: wait, then ask for devices in order (the lost
 * one by id, since it may be back, then the default one: `undefined`); or give up, after `attempts`
 * (the number the failure reports).
 */
export type RecoveryStep =
  | { readonly action: 'retry'; readonly attempt: number; readonly delayMs: number; readonly deviceIds: readonly (string | undefined)[] }
  | { readonly action: 'give-up'; readonly attempts: number };

/** Attempts before giving up when the options do not say (RecoveryOptions.attempts). */
export const DEFAULT_RECOVERY_ATTEMPTS = 8;

/**
 * The step for attempt `attempt` (1-based) after losing the device `lostDeviceId` ('' when its id is
 * unknown: only the default one is asked for). Pure: the capture carries it out. A `nextDelayMs`
 * that answers null gives up at that attempt, counted as made.
 */
export function recoveryStep(attempt: number, options: RecoveryOptions, lostDeviceId: string): RecoveryStep {
  const attempts = options.attempts ?? DEFAULT_RECOVERY_ATTEMPTS;
  if (attempt > attempts) return { action: 'give-up', attempts };
  const delayMs = (options.nextDelayMs ?? defaultRecoveryDelayMs)(attempt);
  if (delayMs === null) return { action: 'give-up', attempts: attempt };
  return { action: 'retry', attempt, delayMs, deviceIds: lostDeviceId !== '' ? [lostDeviceId, undefined] : [undefined] };
}
