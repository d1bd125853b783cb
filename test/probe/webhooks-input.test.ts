import { createHmac } from 'node:crypto';
import { SoundClone, ValidationError } from '@soundclone/core';
import { describe, expect, it } from 'vitest';

/**
 * Webhook verification given what a receiver gets wrong: a body its framework already parsed, no
 * headers, a broken clock. Each is a ValidationError naming it; none may pass a check by accident
 * (a NaN clock used to accept a signature of any age).
 */
const SECRET = 'whsec_probe';
const T = 1_790_000_000;
const body = JSON.stringify({
  id: 'evt_1', type: 'transcription.completed', createdAt: '2026-09-21T00:00:00.000Z',
  data: {
    transcriptionId: 'tr_1', status: 'COMPLETED', modelId: 'svc_stt_v1', clientMetadata: null,
    billing: { state: 'SETTLED', planKey: 'pro', rateVersion: 'v1', ratePerMinute: '600', reservedCharacters: '600', settledCharacters: '30', releasedCharacters: '570', billableCharacters: '30', billableDurationMs: '2600' },
  },
});
const headers = { 'SoundClone-Signature': `t=${T},v1=${createHmac('sha256', SECRET).update(`${T}.${body}`).digest('hex')}` };
const { webhooks } = new SoundClone({ accessKey: 'k', baseUrl: 'http://127.0.0.1:9' });

const fieldOf = async (promise: Promise<unknown>): Promise<string | undefined> => {
  try {
    await promise;
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(ValidationError);
    return (error as ValidationError).violations[0]?.field;
  }
};

describe('webhooks.verify: misuse', () => {
  it('verifies the raw body at the right time (the baseline the cases below break)', async () => {
    const verified = await webhooks.verify(body, headers, SECRET, { now: T * 1000 });
    expect(verified.event.data.transcriptionId).toBe('tr_1');
  });

  it('refuses a parsed body and missing headers as ValidationError, not a RangeError or TypeError', async () => {
    expect(await fieldOf(webhooks.verify(JSON.parse(body) as never, headers, SECRET, { now: T * 1000 }))).toBe('rawBody');
    expect(await fieldOf(webhooks.verify(body, null as never, SECRET, { now: T * 1000 }))).toBe('headers');
  });

  it('a clock that reads NaN fails closed: a signature an hour old is never accepted', async () => {
    expect(await fieldOf(webhooks.verify(body, headers, SECRET, { now: () => Number.NaN }))).toBe('now');
    expect(await fieldOf(webhooks.verify(body, headers, SECRET, { now: Number.NaN }))).toBe('now');
  });
});
