/**
 * The process's timer functions as they were when the service loaded. The service's network-level
 * timers use these (socket heartbeats, acknowledgement pacing, read delays, close grace, socket
 * lifetime, the chaos proxy's faults, the realtime work turns): they stand for what a peer measures on its own clock, so they
 * keep real time even when a test that runs the service in its own process fakes the global timers for
 * its app and the SDK (the testing kit's virtual-time recipe). What the service decides by its own time
 * goes through its Clock instead (clock.ts). Importing these by the global names keeps every call site
 * as it reads with the globals.
 */
const real = {
  setTimeout: globalThis.setTimeout,
  clearTimeout: globalThis.clearTimeout,
  setInterval: globalThis.setInterval,
  clearInterval: globalThis.clearInterval,
  setImmediate: globalThis.setImmediate,
  clearImmediate: globalThis.clearImmediate,
};

export const setTimeout: typeof globalThis.setTimeout = real.setTimeout;
export const clearTimeout: typeof globalThis.clearTimeout = real.clearTimeout;
export const setInterval: typeof globalThis.setInterval = real.setInterval;
export const clearInterval: typeof globalThis.clearInterval = real.clearInterval;
export const setImmediate: typeof globalThis.setImmediate = real.setImmediate;
export const clearImmediate: typeof globalThis.clearImmediate = real.clearImmediate;
