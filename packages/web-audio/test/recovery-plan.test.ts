import { describe, expect, it } from 'vitest';
import { defaultRecoveryDelayMs } from '@soundclone/web-audio';
import { DEFAULT_RECOVERY_ATTEMPTS, recoveryStep, type RecoveryStep } from '../src/capture/recovery-plan.ts';
import type { RecoveryOptions } from '../src/capture/health.ts';
import { recoveryWait } from '../src/capture/recovery-wait.ts';
import type { DeviceEvents } from '../src/capture/device-watch.ts';

/** Every step a capture takes after a loss, until it gives up (bounded: a plan that never gives up fails the test). */
function plan(options: RecoveryOptions, lostDeviceId: string): RecoveryStep[] {
  const steps: RecoveryStep[] = [];
  for (let attempt = 1; attempt <= 1000; attempt++) {
    const step = recoveryStep(attempt, options, lostDeviceId);
    steps.push(step);
    if (step.action === 'give-up') return steps;
  }
  throw new Error('the plan never gives up');
}

describe('recoveryStep: what a capture does after losing its device', () => {
  it('by default: 8 attempts on the default delays, each the lost device first, then the default one; then gives up after 8', () => {
    const steps = plan({}, 'mic-1');
    expect(steps).toHaveLength(DEFAULT_RECOVERY_ATTEMPTS + 1);
    expect(steps.slice(0, -1)).toEqual(
      Array.from({ length: 8 }, (_, i) => ({ action: 'retry', attempt: i + 1, delayMs: defaultRecoveryDelayMs(i + 1), deviceIds: ['mic-1', undefined] })),
    );
    expect(steps.map((s) => (s.action === 'retry' ? s.delayMs : null))).toEqual([0, 250, 500, 1000, 2000, 4000, 4000, 4000, null]);
    expect(steps.at(-1)).toEqual({ action: 'give-up', attempts: 8 });
  });

  it('a device whose id is unknown: only the default one is asked for', () => {
    const steps = plan({ attempts: 2 }, '');
    expect(steps).toEqual([
      { action: 'retry', attempt: 1, delayMs: 0, deviceIds: [undefined] },
      { action: 'retry', attempt: 2, delayMs: 250, deviceIds: [undefined] },
      { action: 'give-up', attempts: 2 },
    ]);
  });

  it("follows the app's attempts and delays, asking nextDelayMs once per attempt in order", () => {
    const asked: number[] = [];
    const steps = plan({ attempts: 3, nextDelayMs: (n) => (asked.push(n), n * 7) }, 'mic-2');
    expect(asked).toEqual([1, 2, 3]);
    expect(steps.map((s) => (s.action === 'retry' ? [s.attempt, s.delayMs] : s.attempts))).toEqual([[1, 7], [2, 14], [3, 21], 3]);
  });

  it('gives up at the attempt whose delay is null, counting it', () => {
    const steps = plan({ attempts: 10, nextDelayMs: (n) => (n < 4 ? 0 : null) }, 'mic-3');
    expect(steps.map((s) => s.action)).toEqual(['retry', 'retry', 'retry', 'give-up']);
    expect(steps.at(-1)).toEqual({ action: 'give-up', attempts: 4 });
  });

  it('a delay of 0 retries at once; attempts 1 makes one attempt', () => {
    expect(plan({ attempts: 1, nextDelayMs: () => 0 }, 'mic-4')).toEqual([
      { action: 'retry', attempt: 1, delayMs: 0, deviceIds: ['mic-4', undefined] },
      { action: 'give-up', attempts: 1 },
    ]);
  });
});

describe('recoveryWait: the wait before an attempt', () => {
  /** A device list that only fires devicechange (what the wait listens to), counting its listeners. */
  function deviceList(): EventTarget & { listeners: number } {
    const target = new EventTarget() as EventTarget & { listeners: number };
    target.listeners = 0;
    const add = target.addEventListener.bind(target);
    const remove = target.removeEventListener.bind(target);
    target.addEventListener = (...args: Parameters<EventTarget['addEventListener']>) => (target.listeners++, add(...args));
    target.removeEventListener = (...args: Parameters<EventTarget['removeEventListener']>) => (target.listeners--, remove(...args));
    return target;
  }

  it('ends after its delay, at a devicechange, or when stop() aborts, and leaves no listener behind', async () => {
    const devices = deviceList();
    const asDevices = devices as unknown as DeviceEvents;
    let t = performance.now();
    await recoveryWait(30, asDevices, new AbortController().signal);
    expect(performance.now() - t).toBeGreaterThanOrEqual(25);
    expect(devices.listeners).toBe(0);

    t = performance.now();
    const byChange = recoveryWait(10_000, asDevices, new AbortController().signal);
    devices.dispatchEvent(new Event('devicechange'));
    await byChange;
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(devices.listeners).toBe(0);

    const stop = new AbortController();
    t = performance.now();
    const byStop = recoveryWait(10_000, asDevices, stop.signal);
    stop.abort();
    await byStop;
    expect(performance.now() - t).toBeLessThan(5_000);
    expect(devices.listeners).toBe(0);
  });
});
