import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Recognizer } from '../src/index.js';
import { idem, start, transcribe, upload, type TestServer } from './support/server.js';
import { speechWav } from './support/wav.js';

/** A recogniser that hears one fixed word per channel, or fails, to test the seam and INTERNAL. */
function fixed(word: string, fail = false): Recognizer {
  return {
    id: 'fixed',
    async recognize(request) {
      if (fail) throw new Error('engine crashed: secret internals');
      return {
        durationMs: 1000,
        channels: request.channels.map((_, channelIndex) => ({
          channelIndex,
          segments: [{ startMs: 0, endMs: 500, speakerIndex: 0, words: [{ text: word, startMs: 0, endMs: 500, confidence: 0.5, speakerIndex: 0 }] }],
          languageCode: 'deu',
          languageConfidence: 0.7,
        })),
      };
    },
    openStream() {
      if (fail) throw new Error('engine crashed: secret internals');
      return { partial: '', push: () => [], flush: () => [] };
    },
  };
}

describe('recognizer injection and internal failures', () => {
  let good: TestServer;
  let bad: TestServer;
  beforeAll(async () => {
    good = await start({ recognizer: fixed('hallo') });
    bad = await start({ recognizer: fixed('x', true) });
  });
  afterAll(async () => {
    await good.close();
    await bad.close();
  });

  it('uses the injected recognizer for batch results', async () => {
    const data = await transcribe(good, { uploadId: await upload(good, speechWav()) });
    expect(data.transcript.text).toBe('hallo');
    expect(data.detectedLanguage).toBe('deu');
  });

  it('fails a task whose recognition crashed with INTERNAL, retryable, and releases the reservation', async () => {
    const data = await transcribe(bad, { uploadId: await upload(bad, speechWav()) });
    expect(data.status).toBe('FAILED');
    expect(data.error).toMatchObject({ errorCode: 'INTERNAL', retryable: true, action: 'RETRY' });
    expect(data.billing).toMatchObject({ state: 'RELEASED', settledCharacters: '0', releasedCharacters: '600' });
  });

  it('answers an unexpected failure with 500 INTERNAL without leaking internals', async () => {
    const r = await bad.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(r.status).toBe(500);
    expect(r.body).toMatchObject({ code: -1, errorCode: 'INTERNAL', message: 'internal error' });
    expect(JSON.stringify(r.body)).not.toContain('secret');
  });
});
