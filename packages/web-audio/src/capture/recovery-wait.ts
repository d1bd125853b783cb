import type { DeviceEvents } from './device-watch.js';

/** A pending wait before a recovery attempt; `wake()` ends it early (stop() does). */
export interface RecoveryWait {
  readonly done: Promise<void>;
  wake(): void;
}

/**
 * Waits `ms` before the next recovery attempt, cut short by a devicechange (a device may have come)
 * or by wake(). Removes its timer and listener however it ends.
 */
export function recoveryWait(ms: number, devices: DeviceEvents | undefined): RecoveryWait {
  let wake = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    const end = (): void => {
      clearTimeout(timer);
      devices?.removeEventListener('devicechange', end);
      resolve();
    };
    const timer = setTimeout(end, ms);
    devices?.addEventListener('devicechange', end);
    wake = end;
  });
  return { done, wake: () => wake() };
}
