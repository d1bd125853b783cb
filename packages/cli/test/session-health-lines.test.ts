import type { SessionHealth } from '@soundclone/core';
import { describe, expect, it } from 'vitest';
import { HealthLines, quality } from '../src/session-health-lines.js';

const none = { last: null, p50: null, p95: null, max: null, count: 0 };
function health(over: Partial<SessionHealth>): SessionHealth {
  return {
    kind: 'interval', state: 'healthy', reason: 'connected', sessionState: 'streaming', sessionReason: 'session.ready',
    unackedMs: 0, bufferedMs: 0, bufferFill: 0, ackLagMs: none, partialLatencyMs: none, finalLatencyMs: none, rttMs: none,
    reconnects: 0, lastReconnect: null, skippedMs: 0, savedShare: 0, framesSent: 0, bytesSent: 0, at: 0, ...over,
  };
}

describe('captions screen: session health lines', () => {
  it('tells degraded with the audio buffered, once per whole second, then the reconnect with cause and duration', () => {
    const lines = new HealthLines(30_000);
    const said = [
      lines.next(health({ at: 0, ackLagMs: { last: 60, p50: 55, p95: 80, max: 90, count: 9 }, finalLatencyMs: { last: 400, p50: 420, p95: 560, max: 600, count: 3 }, rttMs: { last: 2, p50: 2, p95: 2, max: 2, count: 1 } })),
      lines.next(health({ at: 1000 })),
      lines.next(health({ kind: 'connection', state: 'degraded', reason: 'no acknowledgement for 600 ms', bufferedMs: 800, at: 1500 })),
      lines.next(health({ state: 'degraded', bufferedMs: 900, at: 2000 })),
      lines.next(health({ state: 'degraded', bufferedMs: 1900, at: 3000 })),
      lines.next(health({ kind: 'lost', state: 'degraded', bufferedMs: 2100, reconnects: 1, lastReconnect: { cause: 'heartbeat timeout', lostAt: 3100, durationMs: null }, at: 3100 })),
      lines.next(health({ kind: 'reconnected', reconnects: 1, lastReconnect: { cause: 'heartbeat timeout', lostAt: 3100, durationMs: 1300 }, at: 4400 })),
    ];
    expect(said).toEqual([
      'connection good · latency 420 ms (p95 560) · ack lag 55 ms · rtt 2 ms',
      null,
      'connection degraded — 0.8 s of audio buffered (no acknowledgement for 600 ms)',
      null,
      'degraded — 1.9 s of audio buffered',
      'connection lost (heartbeat timeout) — 2.1 s of audio buffered',
      'reconnected after 1.3 s (cause: heartbeat timeout; 1 so far)',
    ]);
  });

  it('leaves out what is not measured yet', () => {
    expect(quality(health({}))).toBe('connection good');
  });
});
