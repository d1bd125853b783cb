import { afterEach, describe, expect, it } from 'vitest';
import { PocketSphinxRecognizer, parseServerFlags } from '../../src/index.js';
import { idem, KEY_A, KEY_B, start, type TestServer } from '../support/server.js';
import { createSession } from './support.js';

/** Per-account fairness (docs/protocol.md "Per-account limits"): one account cannot starve the others. */
describe('per-account realtime limits', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  const create = (server: TestServer, key: string) => server.call('POST', '/stt/realtime/sessions', { key, json: {}, headers: { 'Idempotency-Key': idem() } });

  it('an account at its open-session limit gets 429 ACCOUNT_SESSION_LIMIT while another account still gets a session', async () => {
    const server = await start({ maxRealtimeSessionsPerAccount: 2 });
    cleanup.push(() => server.close());
    const first = await createSession(server, {}, KEY_A);
    await createSession(server, {}, KEY_A);
    const refused = await create(server, KEY_A);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: -1, errorCode: 'RATE_LIMITED', details: { reason: 'ACCOUNT_SESSION_LIMIT', limit: 2 } });
    expect(refused.headers.get('retry-after')).toBe('5');
    // Nothing was created for the refusal (two tasks, not three).
    expect((await server.call('GET', '/stt/transcriptions', { key: KEY_A })).body.data.total).toBe(2);
    expect((await create(server, KEY_B)).status).toBe(200);
    // Capabilities tell each account its limit and its count.
    const limitsA = (await server.call('GET', '/stt/capabilities', { key: KEY_A })).body.data.realtimeParameters.limits;
    expect(limitsA).toMatchObject({ minimumAvailableCharacters: '10', maxOpenSessionsPerAccount: 2, openSessions: 2, maxDecoders: null, maxDecodersPerAccount: null });
    // A finished session no longer counts.
    await server.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } });
    expect((await create(server, KEY_A)).status).toBe(200);
  });

  it('a session whose recovery window passed no longer counts as open: it takes no audio and only waits for a REST finish', async () => {
    const server = await start({ maxRealtimeSessionsPerAccount: 1, realtimeTiming: { recoveryWindowMs: 150 } });
    cleanup.push(() => server.close());
    const abandoned = await createSession(server, {}, KEY_A);
    expect((await create(server, KEY_A)).status).toBe(429);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await server.call('GET', `/stt/realtime/sessions/${abandoned.sessionId}`)).body.data.connection.recoveryExpired).toBe(true);
    expect((await create(server, KEY_A)).status).toBe(200);
  });

  it('an account at its decoder share gets 429 ACCOUNT_DECODER_LIMIT while another account still gets a session; a full pool stays 503', async () => {
    const recognizer = new PocketSphinxRecognizer({ maxDecoders: 3, maxDecodersPerAccount: 2, maxIdleDecoders: 0 });
    const server = await start({ recognizer });
    cleanup.push(() => recognizer.close(), () => server.close());
    const first = await createSession(server, {}, KEY_A);
    await createSession(server, {}, KEY_A);
    const refused = await create(server, KEY_A);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ errorCode: 'RATE_LIMITED', details: { reason: 'ACCOUNT_DECODER_LIMIT' } });
    expect(refused.body.message).toContain('2 of the 3 PocketSphinx decoders');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await create(server, KEY_B)).status).toBe(200);
    expect(recognizer.streams).toBe(3);
    // Every slot taken: busy for everyone, whoever asks.
    expect((await create(server, KEY_B)).body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'RECOGNIZER_BUSY' } });
    const limits = (await server.call('GET', '/stt/capabilities', { key: KEY_A })).body.data.realtimeParameters.limits;
    expect(limits).toMatchObject({ maxDecoders: 3, maxDecodersPerAccount: 2, openSessions: 2 });
    await server.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } });
    expect((await create(server, KEY_A)).status).toBe(200);
  });

  it('a batch channel of an account at its share waits while another account takes the free slot', async () => {
    const recognizer = new PocketSphinxRecognizer({ maxDecoders: 2, maxDecodersPerAccount: 1, maxIdleDecoders: 0 });
    cleanup.push(() => recognizer.close());
    const held = recognizer.openStream({ maxSpeakers: 1, owner: 'a' });
    const silence = [new Float32Array(1600)];
    const order: string[] = [];
    const batchA = recognizer.recognize({ channels: silence, maxSpeakers: 1, owner: 'a' }).then(() => order.push('a'));
    const batchB = recognizer.recognize({ channels: silence, maxSpeakers: 1, owner: 'b' }).then(() => order.push('b'));
    await batchB;
    expect(order).toEqual(['b']);
    held.close?.();
    await batchA;
    expect(order).toEqual(['b', 'a']);
    expect(recognizer.streams).toBe(0);
  });

  it('the default share leaves a quarter of the pool for other accounts: 3 of 4', () => {
    const recognizer = new PocketSphinxRecognizer({ maxIdleDecoders: 0 });
    try {
      expect(recognizer.maxDecoders).toBe(4);
      expect(recognizer.maxDecodersPerAccount).toBe(3);
    } finally {
      recognizer.close();
    }
    expect(() => new PocketSphinxRecognizer({ maxDecodersPerAccount: 0 })).toThrow(expect.objectContaining({ code: 'RECOGNIZER_INVALID_OPTION' }));
  });

  it('server flags set both limits', async () => {
    const { options } = parseServerFlags(['--access-key', 'k', '--max-decoders', '6', '--max-decoders-per-account', '2', '--max-sessions-per-account', '3']);
    expect(options).toMatchObject({ pocketsphinx: { maxDecoders: 6, maxDecodersPerAccount: 2 }, maxRealtimeSessionsPerAccount: 3 });
    expect(() => parseServerFlags(['--access-key', 'k', '--max-sessions-per-account', '0'])).toThrow(/--max-sessions-per-account/);
    await expect(start({ maxRealtimeSessionsPerAccount: 0 })).rejects.toThrow(/maxRealtimeSessionsPerAccount/);
  });
});
