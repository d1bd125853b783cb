import { REALTIME } from '../../protocol.js';
import { SESSION_OPTIONS as O } from './defaults.js';
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

/** Resolves the defaults (the one table: defaults.ts). Checks nothing: checks.ts and each part check. */
export function sessionParts(init: RealtimeSessionInit): SessionParts {
  return {
    now: init.now ?? (() => Date.now()),
    audio: { sampleRate: init.sampleRate ?? O.sampleRate.default, channels: init.channels ?? O.channels.default, bufferMs: init.bufferMs ?? O.bufferMs.default },
    drain: { maxInFlightSamples: init.maxInFlightSamples ?? O.maxInFlightSamples.default, drainTimeoutMs: init.drainTimeoutMs ?? O.drainTimeoutMs.default },
    recovery: { windowMs: REALTIME.recoveryWindowMs, restFinishReserveMs: init.restFinishReserveMs ?? O.restFinishReserveMs.default, stableWindowMs: init.stableWindowMs ?? O.stableWindowMs.default },
    connectTimeoutMs: init.connectTimeoutMs ?? O.connectTimeoutMs.default,
    log: { socketUrl: init.socketUrl, auth: init.accessKey !== undefined ? 'accessKey' : 'token', secrets: [init.accessKey ?? '', init.token ?? ''] },
  };
}
