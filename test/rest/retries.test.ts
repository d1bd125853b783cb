import { createServer } from 'node:net';
import type { RunningServer } from '@soundclone/server';
import {
  AbortError, ConnectionError, RateLimitError, RequestTimeoutError, ServerError, ServiceUnavailableError, SoundClone,
} from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, rejectionOf, requestsTo, singleNodeOnly, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/**
 * Retries, timeouts and aborts against injected faults (packages/server http/faults.ts): 503 and 429
 * answers, connections dropped before or after processing, slow answers. A create retried with its one
 * Idempotency-Key must leave one task and one reservation.
 */
// Single node: these tests tell one server exactly which requests to fail, drop or delay and count what
// reached it. Across nodes a rule's `times` counts per node, and a balancer answers a dropped connection
// with its own 502 instead of passing the drop on: the client's retry logic is what is under test, not
// the balancer's translation of it.
describe.skipIf(singleNodeOnly('fault injection addresses one server and its connections'))('retries, timeouts and aborts', () => {
  let server: RunningServer;
  let client: SoundClone;
  let uploadId: string;

  const reserved = async (): Promise<bigint> => (await client.stt.capabilities()).account.balances?.reservedCharacters ?? -1n;
  const historyIds = async (): Promise<string[]> => {
    const ids: string[] = [];
    for await (const item of client.stt.transcriptions.list({ pageSize: 100 })) ids.push(item.transcriptionId);
    return ids;
  };

  beforeAll(async () => {
    // Tasks stay RESERVED for a while so a second reservation would show.
    server = await startTestServer({ taskTiming: { queueMs: 50, processingMs: 800, reconcilingMs: 50 } });
    client = clientFor(server);
    uploadId = (await client.uploads.create(wav(), { contentType: 'audio/wav' })).uploadId;
  });
  afterAll(() => server.close());

  it('retries a create after two 503s with the same Idempotency-Key: one task', async () => {
    const before = await historyIds();
    server.faults.inject({ method: 'POST', path: '/stt/transcriptions', times: 2, action: { kind: 'status', status: 503, retryAfterSec: 0 } });
    const from = server.requests.length;
    const created = await client.stt.transcriptions.create({ uploadId, title: 'after 503' });
    const posts = requestsTo(server, 'POST', '/stt/transcriptions', from);
    expect(posts.map((p) => p.status)).toEqual([503, 503, 200]);
    expect(new Set(posts.map((p) => p.idempotencyKey))).toEqual(new Set([created.idempotencyKey]));
    expect((await historyIds()).length).toBe(before.length + 1);
  });

  it('retries a create whose connection dropped after processing: the replay is the same task, one reservation', async () => {
    // Let earlier tasks settle so the reservation count only moves because of this create.
    for (const id of await historyIds()) await client.stt.transcriptions.wait(id, { pollIntervalMs: 50 });
    const before = await historyIds();
    const reservedBefore = await reserved();
    server.faults.inject({ method: 'POST', path: '/stt/transcriptions', action: { kind: 'dropAfterProcessing' } });
    const from = server.requests.length;
    const created = await client.stt.transcriptions.create({ uploadId, title: 'after drop' });
    expect(requestsTo(server, 'POST', '/stt/transcriptions', from).map((p) => p.status)).toEqual(['dropped', 200]);
    expect(created.replayed).toBe(true);
    const after = await historyIds();
    expect(after.length).toBe(before.length + 1);
    expect(after).toContain(created.transcriptionId);
    expect(await reserved()).toBe(reservedBefore + created.billing.reservedCharacters);
  });

  it('retries a create whose connection dropped before processing', async () => {
    server.faults.inject({ method: 'POST', path: '/stt/transcriptions', action: { kind: 'dropBeforeProcessing' } });
    const from = server.requests.length;
    const created = await client.stt.transcriptions.create({ uploadId, title: 'after early drop' });
    expect(requestsTo(server, 'POST', '/stt/transcriptions', from).map((p) => p.status)).toEqual(['dropped', 200]);
    expect(created.replayed).toBe(false);
  });

  it('retries reads after dropped connections and 500s', async () => {
    server.faults.inject({ method: 'GET', path: '/user/info', times: 1, action: { kind: 'dropBeforeProcessing' } });
    server.faults.inject({ method: 'GET', path: '/user/info', times: 1, action: { kind: 'status', status: 500 } });
    const from = server.requests.length;
    expect((await client.user.info()).plan).toBe('Pro');
    expect(requestsTo(server, 'GET', '/user/info', from).map((r) => r.status)).toEqual(['dropped', 500, 200]);
  });

  it('honours Retry-After and gives up with a typed error when retries run out', async () => {
    server.faults.inject({ method: 'GET', path: '/voices', action: { kind: 'status', status: 429, retryAfterSec: 1 } });
    const started = Date.now();
    await client.voices.list();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);

    server.faults.inject({ method: 'GET', path: '/voices', times: 3, action: { kind: 'status', status: 429, retryAfterSec: 0 } });
    const limited = await rejectionOf(client.voices.list());
    expect(limited).toBeInstanceOf(RateLimitError);
    expect(limited).toMatchObject({ code: 'RATE_LIMITED', status: 429, retryAfterMs: 0 });

    server.faults.inject({ method: 'GET', path: '/voices', times: 5, action: { kind: 'status', status: 503 } });
    const from = server.requests.length;
    const unavailable = await rejectionOf(client.voices.list({ maxRetries: 2 }));
    expect(unavailable).toBeInstanceOf(ServiceUnavailableError);
    expect(requestsTo(server, 'GET', '/voices', from)).toHaveLength(3);
    server.faults.clear();
  });

  it('does not retry a voice create once it may have arrived: one request, one voice', async () => {
    const usedBefore = (await client.user.info()).benefit.usedVoices;
    server.faults.inject({ method: 'POST', path: '/voices/tts', action: { kind: 'dropAfterProcessing' } });
    const from = server.requests.length;
    const error = await rejectionOf(client.voices.create({ name: 'maybe created', files: [wav()] }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveArrived).toBe(true);
    expect(requestsTo(server, 'POST', '/voices/tts', from)).toHaveLength(1);
    expect((await client.user.info()).benefit.usedVoices).toBe(usedBefore + 1);

    server.faults.inject({ method: 'POST', path: '/voices/tts', action: { kind: 'status', status: 500 } });
    const serverError = await rejectionOf(client.voices.create({ name: 'after 500', files: [wav()] }));
    expect(serverError).toBeInstanceOf(ServerError);
    expect(requestsTo(server, 'POST', '/voices/tts', from)).toHaveLength(2);
  });

  it('retries a non-idempotent upload after a 503, which means "not processed"', async () => {
    server.faults.inject({ method: 'POST', path: '/uploads', action: { kind: 'status', status: 503, retryAfterSec: 0 } });
    const from = server.requests.length;
    const upload = await client.uploads.create(wav(), { contentType: 'audio/wav' });
    expect(upload.uploadId).toMatch(/^up_/);
    expect(requestsTo(server, 'POST', '/uploads', from).map((r) => r.status)).toEqual([503, 200]);
  });

  it('times out one slow attempt with RequestTimeoutError, promptly; a retry can then succeed', async () => {
    server.faults.inject({ method: 'GET', path: '/user/info', action: { kind: 'delay', ms: 1500 } });
    const started = Date.now();
    const error = await rejectionOf(client.user.info({ timeoutMs: 100, maxRetries: 0 }));
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(Date.now() - started).toBeLessThan(1200); // the answer would take 1500 ms

    server.faults.inject({ method: 'GET', path: '/user/info', action: { kind: 'delay', ms: 1500 } });
    expect((await client.user.info({ timeoutMs: 300 })).plan).toBe('Pro');
  });

  it('aborts promptly with AbortError, during a request and during a retry delay, and never sends when already aborted', async () => {
    server.faults.inject({ method: 'GET', path: '/voices', action: { kind: 'delay', ms: 2000 } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    let started = Date.now();
    const during = await rejectionOf(client.voices.list({ signal: controller.signal }));
    expect(during).toBeInstanceOf(AbortError);
    expect(Date.now() - started).toBeLessThan(1500); // the answer would take 2000 ms

    server.faults.inject({ method: 'GET', path: '/voices', action: { kind: 'status', status: 429, retryAfterSec: 30 } });
    const waiting = new AbortController();
    setTimeout(() => waiting.abort(), 100);
    started = Date.now();
    const inDelay = await rejectionOf(client.voices.list({ signal: waiting.signal }));
    expect(inDelay).toMatchObject({ name: 'AbortError', code: 'ABORTED' });
    expect(Date.now() - started).toBeLessThan(5000); // Retry-After asked for 30 s

    const from = server.requests.length;
    expect(await rejectionOf(client.voices.list({ signal: AbortSignal.abort() }))).toBeInstanceOf(AbortError);
    expect(server.requests.length).toBe(from);
  });

  it('reports a refused connection as ConnectionError that cannot have arrived, and retries even a create then', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const retries: unknown[] = [];
    const dead = new SoundClone({
      accessKey: 'k', baseUrl: `http://127.0.0.1:${port}`, retryDelay: { baseMs: 1, maxMs: 5 },
      logger: { debug: (_message, fields) => retries.push(fields) },
    });
    const error = await rejectionOf(dead.voices.create({ name: 'x', files: [wav()] }));
    expect(error).toBeInstanceOf(ConnectionError);
    expect((error as ConnectionError).requestMayHaveArrived).toBe(false);
    expect(retries).toHaveLength(2);
  });

  it('names the method and URL in a ConnectionError, never the access key, user info or query', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    const port = (probe.address() as { port: number }).port;
    await new Promise<void>((r) => probe.close(() => r()));
    const dead = new SoundClone({ accessKey: 'sk-very-secret-key', baseUrl: `http://127.0.0.1:${port}`, maxRetries: 0 });
    const listed = (await rejectionOf((async () => dead.stt.transcriptions.list({ page: 3, pageSize: 7 }))())) as ConnectionError;
    expect(listed).toBeInstanceOf(ConnectionError);
    expect(listed.message).toMatch(new RegExp(`^GET http://127\\.0\\.0\\.1:${port}/sound_clone/api/v1/stt/transcriptions failed: .*ECONNREFUSED`));
    expect(listed.message).not.toContain('sk-very-secret-key');
    expect(listed.message).not.toContain('pageSize');
    const created = (await rejectionOf(dead.uploads.create(wav(), { contentType: 'audio/wav', filename: 'private-name.wav' }))) as ConnectionError;
    expect(created.message).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/sound_clone\/api\/v1\/uploads failed: /);
    expect(created.message).not.toContain('private-name');
  });

  it('retries realtime session creation with its key: one session', async () => {
    server.faults.inject({ method: 'POST', path: '/stt/realtime/sessions', action: { kind: 'dropAfterProcessing' } });
    const session = await client.stt.realtime.create({ title: 'retried' });
    expect(session.replayed).toBe(true);
    expect((await client.stt.realtime.get(session.sessionId)).transcriptionId).toBe(session.transcriptionId);
  });
});
