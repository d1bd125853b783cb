import type { RunningServer } from '@soundclone/server';
import { SoundClone, ValidationError } from '@soundclone/core';
import { literalHostRefusal, protocol } from '@soundclone/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, rejectionOf, requestsTo, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/**
 * languageHint and notifyUrl are checked the same way on both sides: the SDK refuses before sending
 * exactly what the service refuses (one language table and one address table, both core's), and the
 * service refuses the same when a caller skips the SDK.
 */
describe('languageHint codes and notifyUrl destinations, client and service alike', () => {
  let server: RunningServer;
  let client: SoundClone;
  let uploadId: string;

  beforeAll(async () => {
    server = await startTestServer({ taskTiming: { queueMs: 60_000, processingMs: 0, reconcilingMs: 0 } });
    client = clientFor(server);
    uploadId = (await client.uploads.create(wav(), { contentType: 'audio/wav' })).uploadId;
  });
  afterAll(() => server.close());

  const raw = (json: Record<string, unknown>) =>
    fetch(`${server.url}${protocol.API_PREFIX}/stt/transcriptions`, {
      method: 'POST',
      headers: { accessKey: 'key-alpha', 'Idempotency-Key': crypto.randomUUID(), 'Content-Type': 'application/json' },
      body: JSON.stringify(json),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));

  it('the service lists exactly core\'s language table', async () => {
    const caps = (await (await fetch(`${server.url}${protocol.API_PREFIX}/stt/capabilities`, { headers: { accessKey: 'key-alpha' } })).json()) as any;
    expect(caps.data.requestParameters.languageHint.values).toEqual([...protocol.LANGUAGE_HINTS]);
    for (const { iso639_1, iso639_3 } of protocol.LANGUAGES) {
      expect(iso639_1).toMatch(/^[a-z]{2}$/);
      expect(iso639_3).toMatch(/^[a-z]{3}$/);
    }
  });

  it('a batch task accepts the three-letter language a task detected, and echoes what was sent', async () => {
    const done = await client.stt.transcriptions.create({ uploadId });
    expect(done.languageHint).toBe('auto');
    for (const languageHint of ['fra', 'fr', 'eng', 'en', 'hin']) {
      const task = await client.stt.transcriptions.create({ uploadId, languageHint });
      expect(task.languageHint).toBe(languageHint);
      expect((await client.stt.transcriptions.get(task.transcriptionId)).languageHint).toBe(languageHint);
    }
  });

  it('a realtime session accepts either form too', async () => {
    for (const languageHint of ['deu', 'de']) {
      const session = await client.stt.realtime.create({ languageHint });
      expect(session.sessionId).toBeTruthy();
    }
  });

  it('an unlisted code is refused before sending, and by the service with the same field', async () => {
    const before = requestsTo(server, 'POST', '/stt/transcriptions').length;
    for (const languageHint of ['xx', 'xyz', 'FRA', 'fr-FR']) {
      const local = await rejectionOf(client.stt.transcriptions.create({ uploadId, languageHint }));
      expect(local).toBeInstanceOf(ValidationError);
      expect((local as ValidationError).violations.map((v) => v.field)).toEqual(['languageHint']);
      const remote = await raw({ uploadId, languageHint });
      expect(remote.body.errorCode).toBe('INPUT_INVALID');
      expect(remote.body.details.violations.map((v: { field: string }) => v.field)).toEqual(['languageHint']);
    }
    expect(await rejectionOf(client.stt.realtime.create({ languageHint: 'xyz' }))).toBeInstanceOf(ValidationError);
    expect(requestsTo(server, 'POST', '/stt/transcriptions').length - before).toBe(4); // only the raw calls
  });

  const REFUSED: Array<[string, string]> = [
    ['http://10.1.2.3/hook', 'private'],
    ['http://[::1]/', 'loopback'],
    ['http://169.254.169.254/', 'cloud-metadata'],
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['https://[fd00::1]/hook', 'unique-local'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
  ];

  it.each(REFUSED)('notifyUrl %s: the client refuses it before sending with the service\'s own rule', async (notifyUrl, refusal) => {
    expect(literalHostRefusal(notifyUrl)).toBe(refusal);
    const before = requestsTo(server, 'POST', '/stt/transcriptions').length;
    const local = await rejectionOf(client.stt.transcriptions.create({ uploadId, options: { notifyUrl } }));
    expect(local).toBeInstanceOf(ValidationError);
    expect(requestsTo(server, 'POST', '/stt/transcriptions').length).toBe(before);

    const remote = await raw({ uploadId, options: { notifyUrl } });
    expect(remote.status).toBe(400);
    expect(remote.body.details).toMatchObject({ reason: 'DESTINATION_NOT_ALLOWED', refusal });
    expect((local as ValidationError).violations).toEqual(remote.body.details.violations);
  });

  it('a host name or a public address passes both sides (host names are judged when the webhook connects)', async () => {
    for (const notifyUrl of ['https://hooks.example.invalid/x', 'http://localhost:9/x', 'http://93.184.215.14/x', 'http://[2606:4700::1]/x']) {
      expect(literalHostRefusal(notifyUrl)).toBeUndefined();
      const task = await client.stt.transcriptions.create({ uploadId, options: { notifyUrl, notifyOnCompletion: false } });
      expect(task.status).toBe('QUEUED');
    }
  });
});
