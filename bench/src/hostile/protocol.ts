/**
 * Messages between the hostile-client bench and its two child processes (IPC over `fork`): the
 * reference server, which measures its own event loop and memory, and the healthy session, which
 * measures its acknowledgement latency. Bench-only: nothing here is part of the server's API.
 */
export const BENCH_KEY = 'bench-hostile-key';
export const API_PREFIX = '/sound_clone/api/v1';

export type ChildRequest = { readonly type: 'reset' } | { readonly type: 'stats' } | { readonly type: 'stop' };

export interface ServerStats {
  readonly type: 'server-stats';
  /** Event-loop delay since the last reset, ms (perf_hooks.monitorEventLoopDelay). */
  readonly loopP99Ms: number;
  readonly loopMaxMs: number;
  /** Baseline (after a GC, at reset) and peak since, sampled every 100 ms, MiB. */
  readonly baseRssMiB: number;
  readonly peakRssMiB: number;
  readonly baseHeldMiB: number;
  /** heapUsed + external (Buffers, ArrayBuffers): what the process holds in JS terms. */
  readonly peakHeldMiB: number;
  readonly sockets: number;
}

export interface HealthyStats {
  readonly type: 'healthy-stats';
  readonly acks: number;
  readonly ackP50Ms: number;
  readonly ackP99Ms: number;
  readonly ackMaxMs: number;
  /** Socket losses the session saw since the last reset, and whether it failed for good. */
  readonly reconnects: number;
  readonly failed: string | null;
}
