import { afterEach, describe, expect, it } from 'vitest';
import { isTestingError, scriptAudio, startTestServer, type SpeechScript, type TestServer } from '@soundclone/testing';

/**
 * Virtual time: the service's clock moves on `server.clock.advance()` (or with received audio), and
 * what the service decides by time follows it. Each test asserts what the service did at the virtual
 * instant, never how long the wall took.
 */
describe('virtual time: the service follows advance()', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('the recovery window runs out on advance(), then an idle session is ended as abandoned', async () => {
    server = await startTestServer({ time: 'virtual', server: { realtimeTiming: { recoveryWindowMs: 60_000, abandonAfterMs: 300_000 } } });
    const client = server.client();
    const created = await client.stt.realtime.create();
    const startedAt = server.clock.now();
    expect(Date.parse(created.connection?.recoveryDeadline ?? '')).toBe(startedAt + 60_000);

    await server.clock.advance('59.999s');
    expect((await client.stt.realtime.get(created.sessionId)).connection?.recoveryExpired).toBe(false);
    await server.clock.advance(1);
    expect((await client.stt.realtime.get(created.sessionId)).connection?.recoveryExpired).toBe(true);
    expect((await client.stt.realtime.get(created.sessionId)).status).not.toBe('PARTIAL');

    // Idle since: the service ends it abandonAfterMs after the window passed (its sweep runs on the clock too).
    await server.clock.advance('4m');
    expect((await client.stt.realtime.get(created.sessionId)).status).toBe('ACTIVE');
    await server.clock.advance('1m');
    const ended = await client.stt.realtime.get(created.sessionId);
    expect(ended.status).toBe('PARTIAL');
    expect(ended.notices.map((n) => n.code)).toContain('SESSION_ABANDONED');
    expect(server.clock.now() - startedAt).toBe(360_000);
  });

  it('time stands still without advance(): nothing expires on the wall clock', async () => {
    server = await startTestServer({ time: 'virtual', server: { realtimeTiming: { recoveryWindowMs: 50 } } });
    const client = server.client();
    const created = await client.stt.realtime.create();
    const before = server.clock.now();
    await new Promise((resolve) => setTimeout(resolve, 200)); // four windows of wall time
    expect((await client.stt.realtime.get(created.sessionId)).connection?.recoveryExpired).toBe(false);
    expect(server.clock.now()).toBe(before);
    expect(server.clock.pendingTimers).toBeGreaterThan(0);
  });

  it('refuses advance() on real time and durations it cannot read', async () => {
    server = await startTestServer();
    expect(server.clock.mode).toBe('real');
    await expect(server.clock.advance('1s')).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_INVALID_TIME');
    const virtual = await startTestServer({ time: 'virtual' });
    try {
      await expect(virtual.clock.advance('1 hour')).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_INVALID_TIME');
      await expect(virtual.clock.advance(-1)).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_INVALID_TIME');
    } finally {
      await virtual.close();
    }
    await expect(virtual.clock.advance('1s')).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_CLOSED');
    await expect(startTestServer({ time: 'sometimes' as never })).rejects.toSatisfy((e) => isTestingError(e) && e.code === 'TESTING_INVALID_TIME');
  });
});
