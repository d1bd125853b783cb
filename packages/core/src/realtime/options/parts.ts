import { REALTIME } from '../../protocol.js';
import type { RealtimeSessionInit } from './options.js';

/**
 * The session's options with their defaults, as each part takes them: the outbox's format and
 * retention, the pump's in-flight window and drain wait, the recovery's timings, the watch's connect
 * timeout, and what the logger may say about the connection (never a secret: those are only redacted).
 * Values only; the session builds the parts from them.
 */
export interface SessionParts {
  readonly now: () => number;
  readonly audio: { readonly sampleRate: number; readonly channels: number; readonly bufferMs: number };
  readonly drain: { readonly maxInFlightSamples: number; readonly drainTimeoutMs: number };
  readonly recovery: { readonly windowMs: number; readonly restFinishReserveMs: number; readonly stableWindowMs: number };
  readonly connectTimeoutMs: number;
  readonly log: { readonly socketUrl: string; readonly auth: 'accessKey' | 'token'; readonly secrets: readonly string[] };
}

/** Resolves the defaults (docs of each option: options.ts). Checks nothing: each part checks its own. */
export function sessionParts(init: RealtimeSessionInit): SessionParts {
  return {
    now: init.now ?? (() => Date.now()),
    audio: { sampleRate: init.sampleRate ?? REALTIME.sampleRate, channels: init.channels ?? 1, bufferMs: init.bufferMs ?? REALTIME.recoveryWindowMs },
    drain: { maxInFlightSamples: init.maxInFlightSamples ?? 32_000, drainTimeoutMs: init.drainTimeoutMs ?? 5000 },
    recovery: { windowMs: REALTIME.recoveryWindowMs, restFinishReserveMs: init.restFinishReserveMs ?? 10_000, stableWindowMs: init.stableWindowMs ?? 30_000 },
    connectTimeoutMs: init.connectTimeoutMs ?? 10_000,
    log: { socketUrl: init.socketUrl, auth: init.accessKey !== undefined ? 'accessKey' : 'token', secrets: [init.accessKey ?? '', init.token ?? ''] },
  };
}
