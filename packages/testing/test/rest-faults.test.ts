import { afterEach, describe, expect, it } from 'vitest';
import { IdempotencyConflictError, isSoundCloneError, RequestTimeoutError } from '@soundclone/core';
import { scriptAudio, startTestServer, toWav, type SpeechScript, type TestServer } from '@soundclone/testing';

const SCRIPT: SpeechScript = [{ at: '0.2s', say: 'slow answers here' }];
const INFO = '/user/info';

describe('REST faults and idempotency', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it('a trickling body outlasts the per-attempt timeout: REQUEST_TIMEOUT without retries, the same answer after one', async () => {
    server = await startTestServer();
    const expected = await server.client().user.info();
    // About 8 bytes every 100 ms: far longer than the client's 300 ms for a body of a few hundred bytes.
    server.faults.http.inject({ method: 'GET', path: INFO, action: { kind: 'trickle', everyMs: 100, bytes: 8 } });
    const error = await server.client({ timeoutMs: 300, maxRetries: 0 }).user.info().then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RequestTimeoutError) && error.code).toBe('REQUEST_TIMEOUT');

    server.faults.http.inject({ method: 'GET', path: INFO, action: { kind: 'trickle', everyMs: 100, bytes: 8 } });
    expect(await server.client({ timeoutMs: 300 }).user.info()).toEqual(expected);
    // The plain read, two trickled answers the client gave up on (logged once their connection closed),
    // and the retry.
    const infos = (): number => server.requests.filter((r) => r.path.endsWith(INFO)).length;
    for (let waited = 0; infos() < 4 && waited < 100; waited++) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(infos()).toBe(4);
  });

  it('a create whose answer trickles past the timeout is retried with its key and replayed: one task, no conflict', async () => {
    server = await startTestServer({ script: SCRIPT });
    const client = server.client({ timeoutMs: 400 });
    const { uploadId } = await client.uploads.create(toWav(scriptAudio(SCRIPT)), { contentType: 'audio/wav' });
    server.faults.http.inject({ method: 'POST', path: '/stt/transcriptions', action: { kind: 'trickle', everyMs: 200, bytes: 8 } });
    const created = await client.stt.transcriptions.create({ uploadId });
    expect(created.replayed).toBe(true);
    const creates = server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/stt/transcriptions'));
    expect(creates.length).toBe(2);
    expect(new Set(creates.map((r) => r.idempotencyKey))).toEqual(new Set([created.idempotencyKey]));
    expect(server.idempotencyConflicts()).toEqual([]);
  });

  it('idempotencyConflicts(): a key reused with another body is refused and recorded with the call that took it', async () => {
    server = await startTestServer({ script: SCRIPT });
    const client = server.client();
    const { uploadId } = await client.uploads.create(toWav(scriptAudio(SCRIPT)), { contentType: 'audio/wav' });
    const first = await client.stt.transcriptions.create({ uploadId }, { idempotencyKey: 'order-42' });
    // The same call again is a replay, not a conflict.
    expect((await client.stt.transcriptions.create({ uploadId }, { idempotencyKey: 'order-42' })).transcriptionId).toBe(first.transcriptionId);
    expect(server.idempotencyConflicts()).toEqual([]);
    const error = await client.stt.transcriptions.create({ uploadId, title: 'another call' }, { idempotencyKey: 'order-42' }).then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, IdempotencyConflictError) && error.code).toBe('IDEMPOTENCY_CONFLICT');
    const conflicts = server.idempotencyConflicts();
    expect(conflicts).toHaveLength(1);
    expect(conflicts[0]).toMatchObject({
      idempotencyKey: 'order-42',
      request: { method: 'POST', status: 409, errorCode: 'IDEMPOTENCY_CONFLICT' },
      first: { method: 'POST', status: 200, requestId: first.requestId },
    });
  });
});
