import { afterEach, describe, expect, it } from 'vitest';
import { isTestingError, scriptAudio, startTestServer, toWav, type SpeechScript, type TestServer } from '@soundclone/testing';

/** Whether a promise has settled yet (read after letting the loop turn). */
function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(() => (state.settled = true), () => (state.settled = true));
  return state;
}

/** Lets sockets and the service catch up (real time, a few turns of the loop). */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setTimeout(resolve, 30));
}

/** Polls until `read()` gives `want` (real time, bounded): what the service wrote after a timer ran. */
async function until<T>(read: () => Promise<T>, want: T): Promise<T> {
  let last = await read();
  for (let i = 0; i < 200 && last !== want; i++) {
    await new Promise((resolve) => setTimeout(resolve, 10));
    last = await read();
  }
  return last;
}

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

  it('rotates the session on the time schedule when the clock reaches it', async () => {
    const script: SpeechScript = [{ at: '0.2s', say: 'before the turn' }];
    server = await startTestServer({ script, time: 'virtual', server: { realtimeTiming: { rotateEveryMs: 600_000 } } });
    const session = await server.client().stt.realtime.connect();
    const rotations: number[] = [];
    session.on('rotated', (info) => rotations.push(info.toEpoch));
    session.writePcm16(scriptAudio(script));
    await server.clock.advance('9m59s');
    await turns();
    expect(rotations).toEqual([]);
    await server.clock.advance('1s');
    await until(async () => rotations.length, 1);
    expect(rotations).toEqual([2]);
    await server.clock.advance('10m');
    await until(async () => rotations.length, 2);
    expect(rotations).toEqual([2, 3]);
    const result = await session.finish();
    expect(result.lines.map((l) => [l.text, l.epoch])).toEqual([['before the turn', 1]]);
  });

  it('holds a delayed supplement until the clock passes its delay; finish waits for it', async () => {
    const script: SpeechScript = [{ at: '0.2s', say: 'guten tag', supplements: { language: 'de', delayMs: { language: 5_000 } } }];
    server = await startTestServer({ script, time: 'virtual', server: { realtimeTiming: { supplementWaitMs: 8_000 } } });
    const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true } });
    const updates: Array<string | null> = [];
    session.on('line.updated', (update) => {
      if (update.supplement === 'language') updates.push(update.line.languageCode);
    });
    const client = server.client();
    const line = new Promise((resolve) => session.once('line', resolve));
    session.writePcm16(scriptAudio(script));
    await line;
    const finishing = track(session.finish());
    expect(await until(async () => (await client.stt.realtime.get(session.sessionId)).status, 'FINISHING')).toBe('FINISHING');
    await server.clock.advance('4.999s');
    await turns();
    expect(updates).toEqual([]);
    expect(finishing.settled).toBe(false);
    await server.clock.advance(1);
    const result = await finishing.promise;
    expect(updates).toEqual(['de']);
    expect(result.lines.map((l) => [l.text, l.languageCode])).toEqual([['guten tag', 'de']]);
    expect(result.notices).toEqual([]);
  });

  it('ends the supplement wait of a finish when the clock passes supplementWaitMs', async () => {
    const script: SpeechScript = [{ at: '0.2s', say: 'never told', supplements: { withhold: ['language'] } }];
    server = await startTestServer({ script, time: 'virtual', server: { realtimeTiming: { supplementWaitMs: 5_000 } } });
    const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true } });
    const client = server.client();
    const line = new Promise((resolve) => session.once('line', resolve));
    session.writePcm16(scriptAudio(script));
    await line;
    const finishing = track(session.finish());
    // The service arms its wait when the finish reaches it: advance from there.
    expect(await until(async () => (await client.stt.realtime.get(session.sessionId)).status, 'FINISHING')).toBe('FINISHING');
    await server.clock.advance('4.9s');
    await turns();
    expect(finishing.settled).toBe(false);
    await server.clock.advance('100ms');
    const result = await finishing.promise;
    expect(result.lines.map((l) => [l.text, l.languageCode])).toEqual([['never told', null]]);
    expect(result.notices.map((n) => [n.code, n.lineIds])).toEqual([['SUPPLEMENT_NOT_RECEIVED', ['line_0001']]]);
  });

  it('moves a batch task through its phases as the clock passes each', async () => {
    const script: SpeechScript = [{ at: '0.5s', say: 'from the upload' }];
    server = await startTestServer({ script, time: 'virtual', server: { taskTiming: { queueMs: 60_000, processingMs: 600_000, reconcilingMs: 30_000 } } });
    const client = server.client();
    const { uploadId } = await client.uploads.create(toWav(scriptAudio(script)), { contentType: 'audio/wav' });
    const { transcriptionId } = await client.stt.transcriptions.create({ uploadId });
    const status = async (): Promise<string> => (await client.stt.transcriptions.get(transcriptionId)).status;
    await turns();
    expect(await status()).toBe('QUEUED');
    await server.clock.advance('59s');
    await turns();
    expect(await status()).toBe('QUEUED');
    await server.clock.advance('1s');
    expect(await until(status, 'PROCESSING')).toBe('PROCESSING');
    await turns(); // the recognizer runs (real work), then the processing phase starts on the clock
    await server.clock.advance('9m59s');
    await turns();
    expect(await status()).toBe('PROCESSING');
    await server.clock.advance('1s');
    expect(await until(status, 'RECONCILING')).toBe('RECONCILING');
    await turns();
    await server.clock.advance('30s');
    expect(await until(status, 'COMPLETED')).toBe('COMPLETED');
    const task = await client.stt.transcriptions.get(transcriptionId);
    expect(task.transcript?.text).toBe('from the upload');
  });
});
