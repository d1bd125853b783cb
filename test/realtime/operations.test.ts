import { getEventListeners } from 'node:events';
import type { RunningServer } from '@soundclone/server';
import { SoundClone, RealtimeError, isSoundCloneError } from '@soundclone/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/** pause/resume, token attach, and the settle-and-clean-up rules of finish(). */
describe('realtime session: operations', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer({ realtimeTiming: { supplementWaitMs: 3000 } });
  });
  afterEach(() => server.faults.socket.clear());
  afterAll(() => server.close());

  it('pause flushes and pauses with the exact capturedSamples; resume continues in the next epoch', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    const pcm = speech(4, 21);
    const half = 40_000 + 123;
    await feed(session, pcm, 0, half);
    await session.pause();
    expect(session.state).toBe('paused');
    const view = await client.stt.realtime.get(session.sessionId);
    expect(view.status).toBe('PAUSED');
    expect(view.usage.capturedSamples).toBe(BigInt(half));
    expect(view.usage.receivedSamples).toBe(BigInt(half));
    expect(session.writePcm16(new Int16Array(320))).toBe(0); // dropped while paused
    await session.resume();
    expect(session.epoch).toBe(2);
    await feed(session, pcm, half);
    const result = await session.finish();
    expect(result.session.epoch).toBe(2);
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(events.states()).toEqual(['pausing', 'paused', 'streaming', 'finishing', 'finished']);
  });

  it('attaches with only the socket token (no API key, no REST call) and streams Float32 through the encode path', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const before = server.requests.length;
    const page = new SoundClone({ accessKey: 'not-a-real-key', baseUrl: server.url });
    const session = await page.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token, sampleRate: 48_000 });
    const float = new Float32Array(48_000 * 2);
    for (let i = 0; i < float.length; i++) float[i] = 0.4 * Math.sin((2 * Math.PI * 330 * i) / 48_000);
    for (let at = 0; at < float.length; at += 960) session.write(float.subarray(at, at + 960));
    const result = await session.finish();
    expect(server.requests.length).toBe(before); // the socket only
    const produced = session.stats.producedSamples;
    expect(produced).toBeGreaterThan(31_900);
    expect(result.session.usage.receivedSamples).toBe(BigInt(produced));
    expect(result.session.usage.capturedSamples).toBe(BigInt(produced));
    expect((await storedAudio(server, created.sessionId)).length).toBe(produced);
  });

  it('refuses a bad token: connect-time failure, no retry loop', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const page = new SoundClone({ accessKey: 'x', baseUrl: server.url });
    const error = await page.stt.realtime.attach({ sessionId: created.sessionId, token: 'rtt_bogus' }).then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
  });

  it('finish() times out and aborts cleanly: it settles, the session ends, no listener stays on the signal', async () => {
    const client = clientFor(server);
    // Withheld supplements keep the server's finish waiting up to supplementWaitMs.
    server.faults.socket.inject({ kind: 'withholdSupplements' });
    const session = await client.stt.realtime.connect({ options: { includeDetectedLanguage: true } });
    await feed(session, speech(2, 23));
    const error = await session.finish({ timeoutMs: 150 }).then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_TIMEOUT');
    expect(session.state).toBe('failed');
    // The server still holds the session; REST finish saves it (reports the missing supplements).
    const finished = await client.stt.realtime.finish(session.sessionId, String(session.stats.producedSamples));
    expect(finished.notices.some((n) => n.code === 'SUPPLEMENT_NOT_RECEIVED')).toBe(true);

    const controller = new AbortController();
    const second = await client.stt.realtime.connect({});
    await feed(second, speech(1, 25));
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: second.sessionId });
    const pending = second.finish({ signal: controller.signal });
    expect(getEventListeners(controller.signal, 'abort').length).toBe(1);
    controller.abort(new Error('user cancelled'));
    const aborted = await pending.then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(aborted, RealtimeError) && aborted.code).toBe('REALTIME_ABORTED');
    expect(getEventListeners(controller.signal, 'abort').length).toBe(0);
    // The user ended it: `closed`, not `failed` (a timeout is a failure, above).
    expect(second.state).toBe('closed');
  });

  it('the connect signal ends the session: pending operations reject, the socket closes, the task stays open', async () => {
    const client = clientFor(server);
    const controller = new AbortController();
    const session = await client.stt.realtime.connect({ signal: controller.signal });
    const events = new EventCapture(session);
    await feed(session, speech(1, 27));
    server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
    const pausing = session.pause().then(() => undefined, (e: unknown) => e);
    controller.abort();
    expect(isSoundCloneError(await pausing, RealtimeError)).toBe(true);
    expect(events.all('state').at(-1)).toMatchObject({ to: 'closed', reason: 'aborted' });
    expect(getEventListeners(controller.signal, 'abort').length).toBe(0);
    const view = await client.stt.realtime.get(session.sessionId);
    expect(['ACTIVE', 'PAUSED']).toContain(view.status);
  });
});
