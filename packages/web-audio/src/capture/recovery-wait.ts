import type { DeviceEvents } from './device-watch.js';

/**
 * Waits `ms` before the next recovery attempt, cut short by a devicechange (a device may have come)
 * or by `stopped` aborting (stop()). Removes its timer and listeners however it ends.
 */
export function recoveryWait(ms: number, devices: DeviceEvents | undefined, stopped: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const end = (): void => {
      clearTimeout(timer);
      devices?.removeEventListener('devicechange', end);
      stopped.removeEventListener('abort', end);
      resolve();
    };
    const timer = setTimeout(end, ms);
    devices?.addEventListener('devicechange', end);
    stopped.addEventListener('abort', end);
  });
}
