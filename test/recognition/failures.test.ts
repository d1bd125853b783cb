import { rmSync } from 'node:fs';
import { ServiceUnavailableError, SoundClone, RealtimeError, isSoundCloneError } from '@soundclone/core';
import { PocketSphinxRecognizer, startServer, type RunningServer } from '@soundclone/server';
import { afterEach, describe, expect, it } from 'vitest';
import { linkedModel } from '../../packages/server/test/recognition/support.js';

/**
 * What the SDK tells a user when the service cannot recognize: a session the service fails before it
 * is ready rejects connect() with the reason and the final view, and a service with every recognizer
 * slot taken refuses the creation with a typed, retryable error.
 */
const KEY = 'key-failures';

describe('the SDK when the service cannot recognize', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  async function serve(recognizer: PocketSphinxRecognizer): Promise<{ server: RunningServer; client: SoundClone }> {
    const server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], recognizer });
    cleanup.push(() => recognizer.close(), () => server.close());
    return { server, client: new SoundClone({ accessKey: KEY, baseUrl: server.url, maxRetries: 0 }) };
  }

  it('connect() rejects with REALTIME_SESSION_FAILED, the service\'s reason and the final view, when the decoder cannot load', async () => {
    const model = linkedModel();
    cleanup.push(() => rmSync(model.dir, { recursive: true, force: true }));
    const { client } = await serve(new PocketSphinxRecognizer({ modelDir: model.dir, maxIdleDecoders: 0 }));
    const created = await client.stt.realtime.create();
    // Creation checked the files; the acoustic model's definition goes before the socket loads it.
    model.remove('en-us/mdef');
    const failure = await client.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isSoundCloneError(failure, RealtimeError)).toBe(true);
    if (!isSoundCloneError(failure, RealtimeError)) return;
    expect(failure.code).toBe('REALTIME_SESSION_FAILED');
    expect(failure.message).toContain('RECOGNIZER_UNAVAILABLE');
    expect(failure.session).toMatchObject({ sessionId: created.sessionId, status: 'FAILED', error: { errorCode: 'RECOGNIZER_UNAVAILABLE', retryable: true, action: 'RETRY' } });
    expect(failure.session?.error?.message).toContain('mdef');
    // Nothing was charged: the History task is FAILED with its reservation released.
    const task = await client.stt.transcriptions.get(created.transcriptionId);
    expect(task.status).toBe('FAILED');
    expect(task.billing?.billableCharacters).toBe(0n);
  });

  it('a creation past maxDecoders is a typed 503 the caller can retry later (RECOGNIZER_BUSY)', async () => {
    const { client } = await serve(new PocketSphinxRecognizer({ maxDecoders: 1 }));
    const first = await client.stt.realtime.connect({});
    const refused = await client.stt.realtime.connect({}).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(ServiceUnavailableError);
    if (!(refused instanceof ServiceUnavailableError)) return;
    expect(refused.code).toBe('SERVICE_UNAVAILABLE');
    expect(refused.status).toBe(503);
    expect(refused.details).toMatchObject({ reason: 'RECOGNIZER_BUSY' });
    await first.finish();
    // The slot is free again.
    const second = await client.stt.realtime.connect({});
    await second.finish();
  });
});
