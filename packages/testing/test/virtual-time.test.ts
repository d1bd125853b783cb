import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RealtimeSocketSession } from '@soundclone/core';
import { isTestingError, scriptAudio, startTestServer, toWav, type SpeechScript, type TestServer } from '@soundclone/testing';

/** Whether a promise has settled yet (read after letting the loop turn). */
function track<T>(promise: Promise<T>): { readonly settled: boolean; readonly promise: Promise<T> } {
  const state = { settled: false, promise };
  promise.then(() => (state.settled = true), () => (state.settled = true));
  return state;
}

/** Taken before any test fakes the timers: the helpers below wait on the wall clock. */
const realSetTimeout = globalThis.setTimeout;
const realSetImmediate = globalThis.setImmediate;
const wall = (ms: number): Promise<void> => new Promise((resolve) => realSetTimeout(resolve, ms));

/** Lets sockets and the service catch up (real time, a few turns of the loop). */
async function turns(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await new Promise((resolve) => realSetImmediate(resolve));
  await wall(30);
}

/** Polls until `read()` gives `want` (real time, bounded): what the service wrote after a timer ran. */
async function until<T>(read: () => Promise<T>, want: T): Promise<T> {
  let last = await read();
  for (let i = 0; i < 200 && last !== want; i++) {
    await wall(10);
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
    await wall(200); // four windows of wall time
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

/** Writes `pcm` as fast as the session takes it, ten seconds at a time (whenWritable paces a writer faster than the link). */
async function writeAll(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  const chunk = 160_000;
  for (let at = 0; at < pcm.length; at += chunk) {
    const block = pcm.subarray(at, at + chunk);
    await session.whenWritable({ samples: block.length });
    session.writePcm16(block);
  }
}

describe('virtual time: driven by received audio', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('a one-hour session: the clock follows its audio, rotations come on the hour\'s schedule, every line arrives', async () => {
    // A line every five minutes; the service rotates every 20 minutes of its clock, which the audio drives.
    const script: SpeechScript = Array.from({ length: 12 }, (_, i) => ({ at: `${(i * 5 + 2) * 60}s`, say: `line number ${i + 1}` }));
    server = await startTestServer({ script, time: 'audio', retainAudioSeconds: 0, server: { realtimeTiming: { rotateEveryMs: 1_200_000 } } });
    const startedAt = server.clock.now();
    // A window of 100 s in flight: the link is the loopback, so the SDK need not wait for each ack.
    const session = await server.client().stt.realtime.connect({ maxInFlightSamples: 1_600_000 });
    const rotations: number[] = [];
    session.on('rotated', (info) => rotations.push(info.toEpoch));
    const pcm = scriptAudio(script, { tail: '179.1s' }); // the last line ends at 57:00.9
    expect(pcm.length).toBe(16_000 * 3_600);
    await writeAll(session, pcm);
    const result = await session.finish();
    expect(result.lines.map((l) => l.text)).toEqual(script.map((l) => l.say));
    // Rotated at 20 and 40 minutes of audio: lines 1-4 in epoch 1, 5-8 in 2, 9-12 in 3.
    expect(rotations).toEqual([2, 3]);
    expect(result.lines.map((l) => l.epoch)).toEqual([1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    expect(result.lines[11]?.startMs).toBe(57 * 60_000);
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(server.clock.now() - startedAt).toBe(3_600_000);
  }, 180_000);

  it('a session that receives nothing does not move the clock; advance() still does', async () => {
    server = await startTestServer({ time: 'audio', server: { realtimeTiming: { recoveryWindowMs: 10_000 } } });
    const client = server.client();
    const created = await client.stt.realtime.create();
    const before = server.clock.now();
    await turns();
    expect(server.clock.now()).toBe(before);
    await server.clock.advance('10s');
    expect((await client.stt.realtime.get(created.sessionId)).connection?.recoveryExpired).toBe(true);
  });
});

/**
 * The recipe for an app's own timers and the SDK's: fake timers installed by the test, moved by the
 * same steps as the service's clock (`alongside`). Only the timer functions and Date are faked:
 * setImmediate, nextTick and the microtask queue stay real, so sockets and streams keep flowing. The
 * service runs in this process but its network-level timers (socket heartbeats, ack pacing) took the
 * real timer functions when it loaded, so acks and pings flow on the wall clock as a remote service's
 * would; what it decides by its own time follows `server.clock`.
 */
describe('virtual time with fake timers: the SDK follows too', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    vi.useRealTimers();
    await server?.close();
    server = undefined;
  });

  const fake = (): void => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
  };

  it('the reconnect backoff waits for the clock', async () => {
    const script: SpeechScript = [{ at: '0.2s', say: 'before the cut' }, { at: '2s', say: 'after the cut' }];
    server = await startTestServer({ script, time: { alongside: (ms) => vi.advanceTimersByTimeAsync(ms) } });
    fake();
    const session = await server.client().stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 30_000 } });
    const reconnecting: number[] = [];
    const reconnected: number[] = [];
    session.on('reconnecting', (info) => reconnecting.push(info.delayMs));
    session.on('reconnected', (info) => reconnected.push(info.attempt));
    const pcm = scriptAudio(script);
    const line = new Promise((resolve) => session.once('line', resolve));
    session.writePcm16(pcm.subarray(0, 25_600)); // 1.6 s: past the first line's end
    await line;
    server.faults.network.cut();
    expect(await until(async () => reconnecting.length, 1)).toBe(1);
    expect(reconnecting).toEqual([30_000]);
    await turns();
    expect(reconnected).toEqual([]);
    await server.clock.advance('29.999s');
    await turns();
    expect(reconnected).toEqual([]);
    await server.clock.advance(1);
    expect(await until(async () => reconnected.length, 1)).toBe(1);
    session.writePcm16(pcm.subarray(25_600));
    const result = await session.finish();
    expect(result.lines.map((l) => l.text)).toEqual(['before the cut', 'after the cut']);
  });

  it('the ack watchdog finds a half-open socket when the clock passes its probe timeout', async () => {
    const script: SpeechScript = [{ at: '0.2s', say: 'one line' }];
    server = await startTestServer({ script, time: { alongside: (ms) => vi.advanceTimersByTimeAsync(ms) } });
    fake();
    const session = await server.client().stt.realtime.connect({ ackWatch: { probeAfterMs: 5_000, probeTimeoutMs: 5_000, maxBacklogWaitMs: 0 }, reconnect: { nextRetryDelayMs: () => 0 } });
    const reasons: string[] = [];
    session.on('reconnecting', (info) => reasons.push(info.reason));
    const pcm = scriptAudio(script);
    server.faults.network.halfOpen();
    session.writePcm16(pcm.subarray(0, 8_000));
    await turns();
    // Its probe goes at 5 s of ack silence and is given 5 s; the heartbeat (25 s) would come later.
    await server.clock.advance('9s');
    await turns();
    expect(reasons).toEqual([]);
    await server.clock.advance('3s');
    expect(await until(async () => reasons.length, 1)).toBe(1);
    expect(reasons[0]).toMatch(/half-open socket/);
  });
});
