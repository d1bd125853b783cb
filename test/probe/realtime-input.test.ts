import type { RunningServer } from '@soundclone/server';
import type { SoundClone } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, startRealtimeServer, storedAudio } from '../realtime/support.js';

/**
 * Bad input to a live realtime session, from outside: what write()/writePcm16() are given and the
 * options connect() takes. Every mistake should be a typed error before any audio is sent or any
 * session created; none may reach the server as audio (the stored-audio read proves what arrived).
 */
describe('realtime session: bad input', () => {
  let server: RunningServer;
  let client: SoundClone;
  beforeAll(async () => {
    server = await startRealtimeServer({ maxRealtimeSessionsPerAccount: 100 });
    client = clientFor(server);
  });
  afterAll(() => server.close());

  it.each([
    ['a Float32Array', new Float32Array(1600).fill(0.5)],
    ['a Node Buffer of PCM16 bytes (11 bytes)', Buffer.alloc(11, 7)],
    ['a Uint16Array', new Uint16Array(1600).fill(40_000)],
    ['a plain array', [1000, 2000]],
    ['a string', 'abcdefgh'],
  ])('writePcm16() refuses %s as DSP_INVALID_BUFFER and sends nothing', async (_label, input) => {
    const session = await client.stt.realtime.connect({});
    let thrown: unknown;
    try {
      session.writePcm16(input as unknown as Int16Array);
    } catch (error) {
      thrown = error;
    }
    const { session: view } = await session.finish({ timeoutMs: 15_000 });
    expect(thrown).toMatchObject({ code: 'DSP_INVALID_BUFFER' });
    expect(view.usage.receivedSamples).toBe(0n);
    expect((await storedAudio(server, view.sessionId)).length).toBe(0);
  });

  it.each([
    ['a number', 5],
    ['null', null],
    ['undefined', undefined],
  ])('write() refuses %s as DSP_INVALID_BUFFER (not a TypeError, not a silent undefined)', async (_label, input) => {
    const session = await client.stt.realtime.connect({});
    let thrown: unknown;
    let returned: unknown = 'not called';
    try {
      returned = session.write(input as unknown as Float32Array);
    } catch (error) {
      thrown = error;
    }
    session.close();
    expect({ returned, code: (thrown as { code?: unknown } | undefined)?.code }).toEqual({ returned: 'not called', code: 'DSP_INVALID_BUFFER' });
  });

  it.each([
    ['maxInFlightSamples 0', { maxInFlightSamples: 0 }],
    ['heartbeatTimeoutMs 0', { heartbeatTimeoutMs: 0 }],
    ['connectTimeoutMs NaN', { connectTimeoutMs: Number.NaN }],
    ['connectTimeoutMs -1', { connectTimeoutMs: -1 }],
    ['drainTimeoutMs -5', { drainTimeoutMs: -5 }],
    ['restFinishReserveMs -1', { restFinishReserveMs: -1 }],
    ['reconnect that is not a policy', { reconnect: 5 }],
    ['an unknown option (sampelRate)', { sampelRate: 48_000 }],
  ])('connect() refuses %s before creating a session', async (_label, options) => {
    const before = server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/stt/realtime/sessions')).length;
    let outcome: unknown;
    try {
      const session = await client.stt.realtime.connect(options as never);
      session.close();
      outcome = 'connected';
    } catch (error) {
      outcome = (error as { code?: unknown }).code;
    }
    expect(['VALIDATION_FAILED', 'DSP_INVALID_OPTION']).toContain(outcome);
    expect(server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/stt/realtime/sessions')).length).toBe(before);
  });

  it('a pause() overtaken by finish() settles naming pause(), not a closed "operation()"', async () => {
    const session = await client.stt.realtime.connect({});
    session.writePcm16(new Int16Array(8000));
    const paused = session.pause().then(() => 'resolved', (error: Error & { code?: string }) => `${error.code}: ${error.message}`);
    const finished = await session.finish({ timeoutMs: 15_000 });
    expect(finished.session.status).toBe('COMPLETED');
    const outcome = await paused;
    // The session was finished, not closed: REALTIME_CLOSED "operation() ... was closed" misleads.
    expect(outcome).not.toMatch(/operation\(\)/);
    expect(outcome).not.toMatch(/REALTIME_CLOSED/);
  });

  it('finish() after close() names finish() in its error', async () => {
    const session = await client.stt.realtime.connect({});
    session.close();
    const error = await session.finish().catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'REALTIME_CLOSED' });
    expect((error as Error).message).toMatch(/^finish\(\)/);
  });

  it('attach() to a session already finished says so, not "operation() … was closed"', async () => {
    const created = await client.stt.realtime.create({});
    await client.stt.realtime.finish(created.sessionId, 0);
    const error = await client.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token }).catch((e: unknown) => e);
    expect((error as Error).message).not.toMatch(/operation\(\)/);
    expect((error as Error).message).toMatch(/finished/);
  });

  it('write() of more than bufferMs at once is refused whole (REALTIME_WRITE_TOO_LARGE), nothing sent', async () => {
    const session = await client.stt.realtime.connect({ bufferMs: 2_000 });
    const block = new Int16Array(16_000 * 5).map((_, i) => Math.round(8000 * Math.sin(i / 6)));
    expect(() => session.writePcm16(block)).toThrow(expect.objectContaining({ code: 'REALTIME_WRITE_TOO_LARGE' }));
    expect(() => session.write(new Float32Array(48_000 * 3))).toThrow(expect.objectContaining({ code: 'REALTIME_WRITE_TOO_LARGE' }));
    const { session: view } = await session.finish({ timeoutMs: 15_000 });
    expect(view.usage.receivedSamples).toBe(0n);
  });

  it('whenWritable() paces a writer faster than the network: 8 s through a 2 s buffer arrive whole; without it they overflow', async () => {
    const audio = new Int16Array(16_000 * 8).map((_, i) => Math.round(8000 * Math.sin(i / 6)));
    const run = async (paced: boolean): Promise<{ received: bigint; gaps: number; stored: Int16Array }> => {
      const session = await client.stt.realtime.connect({ bufferMs: 2_000 });
      let gaps = 0;
      session.on('gap', () => void (gaps += 1));
      for (let at = 0; at < audio.length; at += 8_000) {
        if (paced) await session.whenWritable({ samples: 8_000 });
        session.writePcm16(audio.subarray(at, at + 8_000));
      }
      const { session: view } = await session.finish({ timeoutMs: 20_000 });
      return { received: view.usage.receivedSamples, gaps, stored: await storedAudio(server, view.sessionId) };
    };
    const paced = await run(true);
    expect(paced.gaps).toBe(0);
    expect(paced.received).toBe(BigInt(audio.length));
    expect(Buffer.from(paced.stored.buffer, paced.stored.byteOffset, paced.stored.byteLength).equals(Buffer.from(audio.buffer))).toBe(true);
    const unpaced = await run(false);
    expect(unpaced.gaps).toBeGreaterThan(0);
    expect(unpaced.received).toBeLessThan(BigInt(audio.length));
  });

  it('whenWritable() refuses a request larger than the buffer, rejects on abort, and resolves once the session finished', async () => {
    const session = await client.stt.realtime.connect({ bufferMs: 1_000 });
    await expect(session.whenWritable({ samples: 16_001 })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
    await expect(session.whenWritable({ samples: 16_000 })).resolves.toBeUndefined();
    session.writePcm16(new Int16Array(16_000));
    const aborted = new AbortController();
    const waiting = session.whenWritable({ samples: 16_000, signal: aborted.signal });
    aborted.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'REALTIME_ABORTED' });
    await session.finish({ timeoutMs: 15_000 });
    await expect(session.whenWritable({ samples: 16_000 })).resolves.toBeUndefined();
  });

  it('whenWritable() rejects once the session was closed, so a writer loop stops instead of spinning', async () => {
    const session = await client.stt.realtime.connect({ bufferMs: 1_000 });
    session.writePcm16(new Int16Array(16_000));
    const waiting = session.whenWritable({ samples: 16_000 });
    session.close();
    await expect(waiting).rejects.toMatchObject({ code: 'REALTIME_CLOSED', message: expect.stringMatching(/^whenWritable\(\)/) as unknown });
    await expect(session.whenWritable()).rejects.toMatchObject({ code: 'REALTIME_CLOSED' });
  });
});
