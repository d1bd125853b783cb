import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, start, upload, type TestServer } from './support/server.js';
import { speechWav } from './support/wav.js';

/**
 * Names, titles and other short strings are text every store keeps as sent: U+0000 (which PostgreSQL's
 * text refuses) and unpaired surrogates (which have no UTF-8 form) are refused with INPUT_INVALID, on
 * every engine alike, before anything is written.
 */
describe('text fields', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await start();
  });
  afterAll(async () => {
    await server.close();
  });

  const refused = (r: Awaited<ReturnType<TestServer['call']>>, field: string): void => {
    expect(r.status).toBe(400);
    expect(r.body.errorCode).toBe('INPUT_INVALID');
    expect(r.body.details.violations).toContainEqual({ field, rule: expect.stringContaining('U+0000') });
  };

  it('refuses U+0000 and unpaired surrogates in a transcription title, vocabulary hints and a realtime title', async () => {
    const uploadId = await upload(server, speechWav());
    for (const bad of ['a\u0000b', 'x\uD800', '\uDC00y']) {
      refused(await server.call('POST', '/stt/transcriptions', { json: { uploadId, title: bad }, headers: { 'Idempotency-Key': idem() } }), 'title');
      refused(await server.call('POST', '/stt/transcriptions', { json: { uploadId, options: { vocabularyHints: ['ok', bad] } }, headers: { 'Idempotency-Key': idem() } }), 'options.vocabularyHints[1]');
      refused(await server.call('POST', '/stt/realtime/sessions', { json: { title: bad }, headers: { 'Idempotency-Key': idem() } }), 'title');
    }
    expect((await server.call('GET', '/stt/transcriptions')).body.data.total).toBe(0);
    // A pair is text: an emoji title is kept as sent.
    const kept = await server.call('POST', '/stt/transcriptions', { json: { uploadId, title: 'caf\u00e9 \uD83C\uDFA4' }, headers: { 'Idempotency-Key': idem() } });
    expect(kept.status).toBe(200);
    expect(kept.body.data.title).toBe('caf\u00e9 \uD83C\uDFA4');
  });

  it('refuses them in an upload filename before the body is read, and in voice names', async () => {
    const storage = async () => (await server.call('GET', '/stt/capabilities')).body.data.account.storage.usedBytes;
    const before = await storage();
    const r = await server.call('POST', '/uploads?filename=a%00b.wav', { body: new Uint8Array(speechWav()), headers: { 'Content-Type': 'audio/wav' } });
    refused(r, 'filename');
    expect(await storage()).toBe(before);
    const voices = (await server.call('GET', '/voices')).body.data;
    const own = (voices.voices ?? voices.items ?? voices).find((v: { channel: string }) => v.channel === 'web');
    refused(await server.call('PUT', `/voices/rename/${own.id}`, { json: { name: 'n\u0000' } }), 'name');
  });
});
