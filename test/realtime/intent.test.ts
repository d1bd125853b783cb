import type { RunningServer } from '@soundclone/server';
import { RealtimeError, ValidationError, isSoundCloneError, type ReconnectPolicy } from '@soundclone/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/** A socket that comes back after 300 ms: long enough to write into the outage. */
const slow: ReconnectPolicy = { nextRetryDelayMs: ({ attempt }) => (attempt < 20 ? 300 : null) };

/**
 * The user's calls decide what the session does, whatever its socket is doing: audio written after
 * pause() or finish() is refused also while reconnecting, a resume() survives a socket that dropped it,
 * and a pause() that gives up leaves an honest state.
 */
describe('realtime session: the user’s intent across sockets', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterEach(() => server.faults.clear());
  afterAll(() => server.close());

  it('refuses audio written while paused and reconnecting: only what was written while streaming is stored', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: slow });
    const events = new EventCapture(session);
    const a = speech(2, 61);
    const b = speech(2, 63);
    await feed(session, a);
    await session.pause();
    server.faults.socket.closeSocket(session.sessionId, 4000, 'blip');
    await events.waitFor('reconnecting');
    expect(session.state).toBe('reconnecting');
    expect(session.writePcm16(new Int16Array(320).fill(7))).toBe(0); // still paused for write()
    await events.waitFor('state', (c) => c.to === 'paused' && c.from === 'reconnecting');
    await session.resume();
    await feed(session, b);
    const result = await session.finish();
    const both = new Int16Array(a.length + b.length);
    both.set(a);
    both.set(b, a.length);
    expect(result.session.usage.capturedSamples).toBe(BigInt(both.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(both);
  });

  it('refuses audio after finish() while reconnecting: write(Float32) returns 0 instead of throwing, capturedSamples stays', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: slow, sampleRate: 48_000 });
    const events = new EventCapture(session);
    const block = new Float32Array(960).fill(0.1);
    for (let i = 0; i < 50; i++) expect(session.write(block)).toBe(960);
    server.faults.socket.closeSocket(session.sessionId, 4000, 'blip');
    await events.waitFor('reconnecting');
    const finishing = session.finish({ timeoutMs: 20_000 });
    expect(session.state).toBe('reconnecting');
    const produced = session.stats.producedSamples;
    expect(produced).toBe(16_000); // 48,000 inputs and the resampler's tail
    expect(session.write(block)).toBe(0);
    const result = await finishing;
    expect(result.session.usage.capturedSamples).toBe(16_000n);
    expect(result.session.usage.receivedSamples).toBe(16_000n);
    expect(result.session.status).toBe('COMPLETED');
  });

  it('refuses PCM after finish() when the socket drops during the finish: the final count is the count at finish()', async () => {
    const session = await clientFor(server).stt.realtime.connect({ reconnect: slow });
    const events = new EventCapture(session);
    const pcm = speech(2, 65);
    await feed(session, pcm, 0, 16_000);
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    await feed(session, pcm, 16_000);
    const finishing = session.finish({ timeoutMs: 20_000 });
    expect(session.writePcm16(new Int16Array(320))).toBe(0);
    server.faults.socket.closeSocket(session.sessionId, 4000, 'blip');
    server.faults.socket.clear();
    await events.waitFor('reconnecting');
    await feed(session, speech(1, 67));
    expect(session.stats.producedSamples).toBe(pcm.length);
    const result = await finishing;
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('resends resume() on a new socket when the old one dropped it before the server read it', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    await feed(session, speech(1, 69));
    await session.pause();
    // The server reads nothing for 300 ms, and the socket is gone before that: the resume is lost.
    server.faults.socket.inject({ kind: 'slowReads', ms: 300, sessionId: session.sessionId });
    const resuming = session.resume({ timeoutMs: 4000 });
    await new Promise((resolve) => setTimeout(resolve, 20));
    server.faults.socket.closeSocket(session.sessionId, 4000, 'injected');
    server.faults.socket.clear();
    await resuming;
    expect(session.state).toBe('streaming');
    expect(events.all('state').map((c) => c.reason)).toContain('reconnected: paused, resuming');
    const view = await client.stt.realtime.get(session.sessionId);
    expect(view).toMatchObject({ status: 'ACTIVE', epoch: 2 });
    expect(session.writePcm16(new Int16Array(320))).toBe(320);
    await session.finish();
  });

  it('keeps audio written after a resume() that a dropped socket lost, when finish() comes during the reconnect', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ reconnect: slow });
    const events = new EventCapture(session);
    const pcm = speech(3, 77);
    await feed(session, pcm, 0, 20_000);
    await session.pause();
    server.faults.socket.inject({ kind: 'slowReads', ms: 300, sessionId: session.sessionId });
    const resuming = session.resume({ timeoutMs: 10_000 }).then(() => undefined, (e: unknown) => e);
    await feed(session, pcm, 20_000); // taken: resume() was called
    server.faults.socket.closeSocket(session.sessionId, 4000, 'injected');
    server.faults.socket.clear();
    await events.waitFor('reconnecting');
    const result = await session.finish({ timeoutMs: 20_000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.epoch).toBe(2);
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.all('gap')).toEqual([]);
    // The session finished before it was streaming again: resume() did not get what it waited for.
    expect(isSoundCloneError(await resuming, RealtimeError)).toBe(true);
  });

  it('withdraws a pause() aborted before session.pause went out: streaming again, audio taken, the server never pauses', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ drainTimeoutMs: 1500 });
    const events = new EventCapture(session);
    const pcm = speech(2, 71);
    await feed(session, pcm, 0, 16_000);
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    await feed(session, pcm, 16_000, 19_200);
    const controller = new AbortController();
    const pausing = session.pause({ signal: controller.signal }).then(() => undefined, (e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(session.state).toBe('pausing');
    controller.abort();
    const error = await pausing;
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_ABORTED');
    expect(session.state).toBe('streaming');
    expect(events.all('state').at(-1)).toMatchObject({ from: 'pausing', to: 'streaming', reason: 'pause() withdrawn before session.pause went out' });
    await feed(session, pcm, 19_200);
    // Past the drain deadline the withdrawn pause must not go out after all.
    await new Promise((resolve) => setTimeout(resolve, 1700));
    expect(session.state).toBe('streaming');
    expect((await client.stt.realtime.get(session.sessionId)).status).toBe('ACTIVE');
    server.faults.socket.clear();
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('a pause() that timed out after session.pause went out proceeds, on a new socket too, and the state says so', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ drainTimeoutMs: 0, reconnect: { nextRetryDelayMs: () => 50 } });
    const events = new EventCapture(session);
    const pcm = speech(1, 73);
    await feed(session, pcm);
    await events.waitForMessage('audio.ack', (a) => a.receivedSamples === pcm.length);
    // The server reads nothing for 400 ms: the pause is on the wire, unanswered, when pause() gives up.
    server.faults.socket.inject({ kind: 'slowReads', ms: 400, sessionId: session.sessionId });
    const error = await session.pause({ timeoutMs: 100 }).then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_TIMEOUT');
    expect(session.state).toBe('pausing');
    expect(session.writePcm16(new Int16Array(320))).toBe(0);
    // The socket goes before the server read the pause: it is sent again on the next one.
    server.faults.socket.closeSocket(session.sessionId, 4000, 'injected');
    server.faults.socket.clear();
    await events.waitFor('state', (c) => c.to === 'paused');
    expect(events.states().slice(-3)).toEqual(['reconnecting', 'pausing', 'paused']);
    expect((await client.stt.realtime.get(session.sessionId)).status).toBe('PAUSED');
    await session.resume();
    const result = await session.finish();
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });

  it('refuses a timeoutMs that is not a non-negative number with a typed error, and changes nothing', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    for (const timeoutMs of [Number.NaN, -1]) {
      const finishing = await session.finish({ timeoutMs }).then(() => undefined, (e: unknown) => e);
      expect(isSoundCloneError(finishing, ValidationError) && finishing.code).toBe('VALIDATION_FAILED');
      expect(isSoundCloneError(finishing, ValidationError) && finishing.violations.map((v) => v.field)).toEqual(['timeoutMs']);
      const pausing = await session.pause({ timeoutMs }).then(() => undefined, (e: unknown) => e);
      expect(isSoundCloneError(pausing, ValidationError)).toBe(true);
    }
    expect(session.state).toBe('streaming');
    expect(session.writePcm16(speech(1, 75))).toBeGreaterThan(0);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
  });
});
