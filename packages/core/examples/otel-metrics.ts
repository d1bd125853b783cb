/**
 * Exporting a session's health to OpenTelemetry metrics, without OpenTelemetry as a dependency of the
 * SDK: the types below are the few members of `@opentelemetry/api`'s `Meter` this uses, so a real
 * `metrics.getMeter('soundclone')` is accepted as is. Typechecked with the tests (`pnpm typecheck`).
 *
 *   import { metrics } from '@opentelemetry/api';
 *   const stop = exportHealth(session, metrics.getMeter('soundclone'));
 */
import type { RealtimeSocketSession, SessionHealth } from '@soundclone/core';

type Attributes = Record<string, string | number | boolean>;
interface Histogram { record(value: number, attributes?: Attributes): void }
interface Counter { add(value: number, attributes?: Attributes): void }
interface ObservableResult { observe(value: number, attributes?: Attributes): void }
interface ObservableGauge { addCallback(callback: (result: ObservableResult) => void): void; removeCallback(callback: (result: ObservableResult) => void): void }
export interface MeterLike {
  createHistogram(name: string, options?: { unit?: string; description?: string }): Histogram;
  createCounter(name: string, options?: { unit?: string; description?: string }): Counter;
  createObservableGauge(name: string, options?: { unit?: string; description?: string }): ObservableGauge;
}

/** Records latencies and reconnects as they happen, and observes lags and buffer fill on collection. Returns a stop function. */
export function exportHealth(session: RealtimeSocketSession, meter: MeterLike): () => void {
  const attrs = { 'soundclone.session_id': session.sessionId };
  const finalLatency = meter.createHistogram('soundclone.latency.final', { unit: 'ms', description: 'capture to final line' });
  const reconnects = meter.createCounter('soundclone.reconnects', { description: 'socket reconnects, by cause' });
  const outage = meter.createHistogram('soundclone.reconnect.duration', { unit: 'ms' });
  const gauges = {
    'soundclone.ack_lag': (h: SessionHealth) => h.ackLagMs.last ?? 0,
    'soundclone.buffered': (h: SessionHealth) => h.bufferedMs,
    'soundclone.buffer_fill': (h: SessionHealth) => h.bufferFill,
    'soundclone.rtt': (h: SessionHealth) => h.rttMs.last ?? 0,
    'soundclone.bytes_sent': (h: SessionHealth) => h.bytesSent,
  };
  const observed = Object.entries(gauges).map(([name, read]) => {
    const gauge = meter.createObservableGauge(name);
    const callback = (result: ObservableResult): void => result.observe(read(session.health), { ...attrs, 'soundclone.connection': session.health.state });
    gauge.addCallback(callback);
    return () => gauge.removeCallback(callback);
  });
  // The health is measured before the line is emitted: its latency is the window's last value then.
  const onLine = (): void => {
    const last = session.health.finalLatencyMs.last;
    if (last !== null) finalLatency.record(last, attrs);
  };
  const onHealth = (h: SessionHealth): void => {
    if (h.kind === 'lost') reconnects.add(1, { ...attrs, 'soundclone.cause': h.lastReconnect?.cause ?? 'unknown' });
    if (h.kind === 'reconnected' && h.lastReconnect?.durationMs != null) outage.record(h.lastReconnect.durationMs, attrs);
  };
  session.on('line', onLine);
  session.on('health', onHealth);
  return () => {
    session.off('line', onLine);
    session.off('health', onHealth);
    for (const stop of observed) stop();
  };
}
