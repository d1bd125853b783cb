import type { SessionHealth } from '@soundclone/core';

/**
 * The captions screen's words for the session's health (core `health` events): a line when the
 * connection changes (degraded, back, lost, reconnected), one per whole second of audio buffered while
 * it stays degraded, and a quality line every `qualityEveryMs` while it is healthy, never one per
 * report. Pure apart from its memory of what was last said: the screen prints what `next` returns.
 */
export class HealthLines {
  #lastQualityAt = Number.NEGATIVE_INFINITY;
  #bufferedSecondsShown = -1;

  constructor(private readonly qualityEveryMs = 30_000) {}

  next(h: SessionHealth): string | null {
    const buffered = Math.floor(h.bufferedMs / 1000);
    switch (h.kind) {
      case 'connection':
        this.#bufferedSecondsShown = buffered;
        return h.state === 'degraded' ? `connection degraded — ${seconds(h.bufferedMs)} of audio buffered (${h.reason})` : `connection healthy again · ${quality(h)}`;
      case 'lost':
        this.#bufferedSecondsShown = buffered;
        return `connection lost (${h.lastReconnect?.cause ?? h.reason}) — ${seconds(h.bufferedMs)} of audio buffered`;
      case 'reconnected': {
        const r = h.lastReconnect;
        return `reconnected after ${seconds(r?.durationMs ?? 0)} (cause: ${r?.cause ?? 'unknown'}; ${String(h.reconnects)} so far)`;
      }
      case 'interval':
        if (h.state === 'degraded') {
          if (buffered === this.#bufferedSecondsShown) return null;
          this.#bufferedSecondsShown = buffered;
          return `degraded — ${seconds(h.bufferedMs)} of audio buffered`;
        }
        if (h.at - this.#lastQualityAt < this.qualityEveryMs) return null;
        this.#lastQualityAt = h.at;
        return quality(h);
    }
  }
}

/** "connection good · latency 420 ms (p95 560) · ack lag 60 ms · rtt 2 ms". */
export function quality(h: SessionHealth): string {
  const parts = [`connection ${h.state === 'healthy' ? 'good' : 'degraded'}`];
  if (h.finalLatencyMs.p50 !== null) parts.push(`latency ${String(h.finalLatencyMs.p50)} ms (p95 ${String(h.finalLatencyMs.p95)})`);
  if (h.ackLagMs.p50 !== null) parts.push(`ack lag ${String(h.ackLagMs.p50)} ms`);
  if (h.rttMs.last !== null) parts.push(`rtt ${String(h.rttMs.last)} ms`);
  return parts.join(' · ');
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
