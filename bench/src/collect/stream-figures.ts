import type { HotLoop } from '../hot-loop.js';
import { bytesPerCall } from '../measure/alloc-probe.js';
import { gcWindow } from '../measure/gc-window.js';
import type { StreamFigures } from '../results.js';
import { samplesIn } from '../signals.js';

/** Longest a GC window may run; a slower contender's count is scaled up to the full stretch. */
export const GC_WINDOW_CAP_MS = 20_000;

/**
 * Bytes per call, then GCs while the loop streams `minutes` of audio at its input rate. A window
 * the wall-time cap cut short reports the count it saw, scaled to `minutes`, and says so
 * (`measuredMinutes` < `minutes`); only contenders that allocate on every call are that slow.
 */
export async function streamFigures(loop: HotLoop, minutes: number): Promise<StreamFigures> {
  const bytes = bytesPerCall(loop.step);
  const steps = Math.ceil(samplesIn(minutes, loop.inputRate) / loop.samplesPerStep);
  const window = await gcWindow(loop, steps, GC_WINDOW_CAP_MS);
  const measuredMinutes = (window.steps * loop.samplesPerStep) / loop.inputRate / 60;
  return {
    minutes,
    measuredMinutes,
    gcs: window.steps === steps ? window.gcs : Math.round((window.gcs * minutes) / measuredMinutes),
    gcsMeasured: window.gcs,
    gcPauseMs: window.pauseMs,
    bytesPerCall: bytes,
    msps: (window.steps * loop.samplesPerStep) / (window.wallMs * 1000),
  };
}
