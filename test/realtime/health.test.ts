import type { RunningServer } from '@soundclone/server';
import { SoundClone, type LogRecord, type RealtimeSocketSession, type SessionHealth } from '@soundclone/core';
import { redact } from '@soundclone/core/internal';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, KEY, clientFor, speech, startRealtimeServer } from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes PCM16 in 20 ms blocks on the wall clock, as a live capture does. */
async function streamRealTime(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  const started = Date.now();
  for (let i = 0, at = 0; at < pcm.length; i++, at += 320) {
    session.writePcm16(pcm.subarray(at, at + 320));
    const due = started + (i + 1) * 20 - Date.now();
    if (due > 0) await sleep(due);
  }
}

/**
 * The health stream against known faults of the reference server: an ack delay shows as that lag, a
 * cut as one reconnect with its cause and duration, and every line gets a capture-to-final latency on
 * the session's sample clock. Tolerances are wide (the machine may be loaded); the bench holds targets.
 */
describe('realtime session: health', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterEach(() => server.faults.socket.clear());
  afterAll(() => server.close());

  it('reports an injected 500 ms ack delay as ~500 ms of acknowledgement lag, with latency per line, RTT and bytes sent', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const events = new EventCapture(session, ['health', 'line']);
    server.faults.socket.inject({ kind: 'delayAcks', ms: 500, sessionId: session.sessionId });
    const began = Date.now();
    await streamRealTime(session, speech(4, 3));
    const during = session.health;
    const result = await session.finish();
    const length = Date.now() - began;

    expect(during.ackLagMs.count).toBeGreaterThan(2);
    expect(during.ackLagMs.p50).toBeGreaterThanOrEqual(400);
    expect(during.ackLagMs.p50).toBeLessThanOrEqual(1500);

    const health = session.health;
    expect(result.lines.length).toBeGreaterThan(0);
    expect(health.finalLatencyMs.count).toBe(events.all('line').length);
    for (const v of [health.finalLatencyMs.p50, health.finalLatencyMs.max, health.partialLatencyMs.max]) {
      if (v === null) continue;
      expect(v).toBeGreaterThanOrEqual(0);
      expect(v).toBeLessThan(length);
    }
    expect(health.finalLatencyMs.max).not.toBeNull();
    expect(health.rttMs.count).toBeGreaterThan(0);
    expect(health.rttMs.last).toBeGreaterThanOrEqual(0);
    expect(health.rttMs.last).toBeLessThan(length);
    expect(health.framesSent).toBeGreaterThan(0);
    expect(health.bytesSent).toBeGreaterThanOrEqual(session.stats.producedSamples * 2);
    expect(health.reconnects).toBe(0);
    expect(health.sessionState).toBe('finished');
    // One stream: interval snapshots came while streaming, each a full snapshot.
    const intervals = events.all('health').filter((h) => h.kind === 'interval');
    expect(intervals.length).toBeGreaterThanOrEqual(2);
    expect(intervals.every((h) => h.bufferFill >= 0 && h.bufferFill <= 1)).toBe(true);
  }, 30_000);

  it('records a cut as one reconnect with its cause and duration', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 200 } });
    const events = new EventCapture(session, ['health', 'reconnected']);
    const pcm = speech(3, 5);
    const half = Math.floor(pcm.length / 2 / 320) * 320;
    await streamRealTime(session, pcm.subarray(0, half));
    expect(server.faults.socket.closeSocket(session.sessionId, 4000, 'injected')).toBe(true);
    const lost = await events.waitFor('health', (h: SessionHealth) => h.kind === 'lost');
    expect(lost.state).toBe('degraded');
    expect(lost.lastReconnect?.cause).toMatch(/4000/);
    expect(lost.lastReconnect?.closeCode).toBe(4000);
    expect(lost.lastReconnect?.durationMs).toBeNull();
    const back = await events.waitFor('health', (h: SessionHealth) => h.kind === 'reconnected');
    expect(back.state).toBe('healthy');
    expect(back.reconnects).toBe(1);
    expect(back.lastReconnect?.durationMs).toBeGreaterThanOrEqual(150);
    expect(back.lastReconnect?.durationMs).toBeLessThan(10_000);
    await streamRealTime(session, pcm.subarray(half));
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(session.health.reconnects).toBe(1);
  }, 30_000);

  it('logs connects, losses and reconnects without the API key or the socket token', async () => {
    const records: LogRecord[] = [];
    const messages: string[] = [];
    // The client's logger (as console takes it: message, fields) reaches its sessions; a session's own wins.
    const keep = (message: string, fields?: Record<string, unknown>): void => {
      messages.push(message);
      records.push(fields as LogRecord);
    };
    const client = new SoundClone({ accessKey: KEY, baseUrl: server.url, retryDelay: { baseMs: 20, maxMs: 100 }, logger: { debug: keep, info: keep, warn: keep, error: keep } });
    const keyed = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 100 } });
    const created = await client.stt.realtime.create({});
    const tokened = await client.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token, baseUrl: server.url, logger: (r) => records.push(r) });
    for (const session of [keyed, tokened]) {
      const events = new EventCapture(session, ['reconnected']);
      session.writePcm16(speech(1, 2));
      server.faults.socket.closeSocket(session.sessionId, 4000, 'injected');
      await events.waitFor('reconnected');
      await session.finish();
    }
    const events = records.map((r) => `${r.sessionId}:${r.event}`);
    for (const id of [keyed.sessionId, tokened.sessionId]) {
      for (const e of ['connect', 'socket.open', 'state', 'reconnecting', 'reconnected', 'health']) expect(events).toContain(`${id}:${e}`);
    }
    expect(messages).toContain('soundclone: reconnecting');
    // The addresses dialled are logged, with the credential each carried (header or query) redacted.
    const opened = records.filter((r) => r.event === 'socket.open');
    expect(opened.some((r) => (r['headers'] as Record<string, string> | undefined)?.['accessKey'] === '[redacted]')).toBe(true);
    expect(opened.some((r) => String(r['url']).includes('token=[redacted]') || String(r['url']).includes('token=%5Bredacted%5D'))).toBe(true);
    const text = JSON.stringify([records, messages]);
    expect(created.socket.token.length).toBeGreaterThan(8);
    expect(text).not.toContain(KEY);
    expect(text).not.toContain(created.socket.token);
  }, 30_000);

  it('redacts fields, headers and query parameters named like secrets', () => {
    const out = redact({ url: 'wss://h/x?token=abc123&epoch=2', headers: { accessKey: 'k1', Authorization: 'Bearer z' }, note: 'sent s3cr3t-value' }, ['s3cr3t-value']);
    expect(out).toEqual({ url: 'wss://h/x?token=[redacted]&epoch=2', headers: { accessKey: '[redacted]', Authorization: '[redacted]' }, note: 'sent [redacted]' });
  });
});
