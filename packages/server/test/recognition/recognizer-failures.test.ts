import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { PocketSphinxRecognizer } from '../../src/index.js';
import { idem, start, upload, type TestServer } from '../support/server.js';
import { open, socketUrl, createSession } from '../realtime/support.js';
import { CLIP_0930, linkedModel, readClip } from './support.js';

/**
 * What a client sees when PocketSphinx cannot serve: a model that breaks after the server started
 * (files deleted underneath it), and every decoder slot taken. Nothing may be left behind: no History
 * task stuck in PROCESSING, no Characters charged or held, no slot kept.
 */

async function available(server: TestServer): Promise<string> {
  return (await server.call('GET', '/stt/capabilities')).body.data.account.balances.availableCharacters;
}

describe('when PocketSphinx cannot serve', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function serverWith(recognizer: PocketSphinxRecognizer): Promise<TestServer> {
    const server = await start({ recognizer });
    cleanup.push(() => recognizer.close(), () => server.close());
    return server;
  }

  it('refuses a realtime session with 503 RECOGNIZER_UNAVAILABLE when no decoder can load, and leaves no task behind', async () => {
    const model = linkedModel();
    // No idle decoder: the next session needs a fresh load, which cannot work without the dictionary.
    const server = await serverWith(new PocketSphinxRecognizer({ modelDir: model.dir, maxIdleDecoders: 0 }));
    const before = await available(server);
    model.remove('cmudict-en-us.dict');
    const r = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(r.status).toBe(503);
    expect(r.body).toMatchObject({ code: -1, errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'RECOGNIZER_UNAVAILABLE' } });
    expect(r.body.message).toContain('cmudict-en-us.dict');
    expect(r.headers.get('retry-after')).toBe('5');
    const history = await server.call('GET', '/stt/transcriptions');
    expect(history.body.data.total).toBe(0);
    expect(await available(server)).toBe(before);
  });

  it('fails a session whose decoder cannot load when its socket attaches: FAILED with a typed error, nothing charged, the slot let go', async () => {
    const model = linkedModel();
    const recognizer = new PocketSphinxRecognizer({ modelDir: model.dir, maxIdleDecoders: 0, maxDecoders: 1 });
    const server = await serverWith(recognizer);
    const before = await available(server);
    const created = await createSession(server);
    expect(recognizer.streams).toBe(1);
    // The files the creation checked are there; the acoustic model's definition goes before the load.
    model.remove('en-us/mdef');
    const peer = await open(socketUrl(server, { sessionId: created.sessionId }), { accessKey: 'key-a' });
    const finished = await peer.waitFor('session.finished', () => true, 10_000);
    expect((await peer.closed).code).toBe(4409);
    expect(peer.all('session.ready')).toEqual([]);
    expect(finished.session).toMatchObject({ status: 'FAILED', error: { errorCode: 'RECOGNIZER_UNAVAILABLE', retryable: true, action: 'RETRY' } });
    expect(finished.session.error.message).toContain('mdef');
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task.status).toBe('FAILED');
    expect(task.error).toMatchObject({ errorCode: 'RECOGNIZER_UNAVAILABLE', retryable: true, action: 'RETRY' });
    expect(task.billing).toMatchObject({ state: 'RELEASED', settledCharacters: '0', billableCharacters: '0' });
    expect(await available(server)).toBe(before);
    expect(recognizer.streams).toBe(0);
    expect(recognizer.decoders).toBe(0);
    // Finishing it later answers the same FAILED session, once.
    const again = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '0' } });
    expect(again.body.data).toMatchObject({ status: 'FAILED', error: { errorCode: 'RECOGNIZER_UNAVAILABLE' } });
    // The slot is free again: with maxDecoders 1, a new session is accepted (and refused only at load).
    expect((await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);
  });

  it('fails a batch transcription whose decoder cannot load with RECOGNIZER_UNAVAILABLE and releases its reservation', async () => {
    const model = linkedModel();
    const server = await serverWith(new PocketSphinxRecognizer({ modelDir: model.dir, maxIdleDecoders: 0 }));
    const uploadId = await upload(server, readFileSync(CLIP_0930.path));
    const before = await available(server);
    model.remove('en-us/mdef');
    const r = await server.call('POST', '/stt/transcriptions', { json: { uploadId, waitForCompletion: true, waitTimeoutMs: 20_000 }, headers: { 'Idempotency-Key': idem() } });
    expect(r.body.code).toBe(1);
    const task = r.body.data;
    expect(task.status).toBe('FAILED');
    expect(task.error).toMatchObject({ errorCode: 'RECOGNIZER_UNAVAILABLE', retryable: true, action: 'RETRY' });
    expect(task.error.message).toContain('mdef');
    expect(task.billing).toMatchObject({ state: 'RELEASED', settledCharacters: '0', releasedCharacters: task.billing.reservedCharacters });
    expect(await available(server)).toBe(before);
  });
});

describe('PocketSphinx decoder capacity', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('startServer takes maxDecoders: sessions past it get 503 RECOGNIZER_BUSY, no task, and a slot frees when a session finishes', async () => {
    const server = await start({ recognizer: 'pocketsphinx', pocketsphinx: { maxDecoders: 2 } });
    cleanup.push(() => server.close());
    const first = await createSession(server);
    await createSession(server);
    const refused = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(refused.status).toBe(503);
    expect(refused.body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'RECOGNIZER_BUSY' } });
    expect(refused.body.message).toContain('2 PocketSphinx decoders');
    expect(refused.headers.get('retry-after')).toBe('5');
    expect((await server.call('GET', '/stt/transcriptions')).body.data.total).toBe(2);
    await server.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } });
    expect((await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);
  });

  it('a session created over REST holds a slot but no decoder; its socket attaching loads one before session.ready', async () => {
    const recognizer = new PocketSphinxRecognizer({ maxIdleDecoders: 0, maxDecoders: 3 });
    const server = await start({ recognizer });
    cleanup.push(() => recognizer.close(), () => server.close());
    const created = await Promise.all([createSession(server), createSession(server), createSession(server)]);
    expect(recognizer.streams).toBe(3);
    expect(recognizer.decoders).toBe(0);
    const peer = await open(socketUrl(server, { sessionId: created[0]!.sessionId }), { accessKey: 'key-a' });
    cleanup.push(() => peer.close());
    await peer.waitFor('session.ready', () => true, 10_000);
    expect(recognizer.decoders).toBe(1);
  });

  it('loads a decoder on a worker thread: the event loop keeps turning while a stream prepares', async () => {
    const recognizer = new PocketSphinxRecognizer({ maxIdleDecoders: 0 });
    cleanup.push(() => recognizer.close());
    const stream = recognizer.openStream({ maxSpeakers: 1 });
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    try {
      await stream.prepare?.();
    } finally {
      clearInterval(timer);
    }
    // A load on this thread (~250 ms) would resolve prepare before any timer could run.
    expect(ticks).toBeGreaterThan(5);
    expect(recognizer.decoders).toBe(1);
    expect(stream.push(readClip(CLIP_0930.path)).length).toBeGreaterThan(0);
    stream.close?.();
    expect(recognizer.decoders).toBe(0);
  });

  it('a batch transcription waits for a free decoder instead of failing, and completes once one is free', async () => {
    const recognizer = new PocketSphinxRecognizer({ maxDecoders: 1 });
    const server = await start({ recognizer });
    cleanup.push(() => recognizer.close(), () => server.close());
    const session = await createSession(server);
    const uploadId = await upload(server, readFileSync(CLIP_0930.path));
    const waiting = await server.call('POST', '/stt/transcriptions', { json: { uploadId, waitForCompletion: true, waitTimeoutMs: 500 }, headers: { 'Idempotency-Key': idem() } });
    expect(waiting.body.data.status).toBe('PROCESSING');
    expect(recognizer.streams).toBe(1);
    await server.call('POST', `/stt/realtime/sessions/${session.sessionId}/finish`, { json: { capturedSamples: '0' } });
    let task = waiting.body.data;
    for (let i = 0; i < 200 && task.status !== 'COMPLETED'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      task = (await server.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data;
    }
    expect(task.status).toBe('COMPLETED');
    expect(task.transcript.text).toContain('amiable');
  });

  it('a closed recognizer refuses with RECOGNIZER_CLOSED, also to a stream opened before', () => {
    const recognizer = new PocketSphinxRecognizer({ maxIdleDecoders: 0 });
    const stream = recognizer.openStream({ maxSpeakers: 1 });
    recognizer.close();
    expect(() => recognizer.openStream({ maxSpeakers: 1 })).toThrow(expect.objectContaining({ name: 'RecognizerError', code: 'RECOGNIZER_CLOSED' }));
    expect(() => stream.push(new Int16Array(320))).toThrow(expect.objectContaining({ name: 'RecognizerError', code: 'RECOGNIZER_CLOSED' }));
    return expect(recognizer.recognize({ channels: [new Float32Array(1600)], maxSpeakers: 1 })).rejects.toMatchObject({ code: 'RECOGNIZER_CLOSED' });
  });

  it('refuses options that would break the pool or touch process-wide state', () => {
    expect(() => new PocketSphinxRecognizer({ maxDecoders: 0 })).toThrow(expect.objectContaining({ code: 'RECOGNIZER_INVALID_OPTION' }));
    expect(() => new PocketSphinxRecognizer({ maxIdleDecoders: -1 })).toThrow(expect.objectContaining({ code: 'RECOGNIZER_INVALID_OPTION' }));
    expect(() => new PocketSphinxRecognizer({ decoderArgs: ['-dither', 'yes'] })).toThrow(expect.objectContaining({ code: 'RECOGNIZER_INVALID_OPTION' }));
  });
});
