import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { WebhookVerificationError } from '../../src/errors/webhook-errors.js';
import { isSoundCloneError } from '../../src/errors/guards.js';
import { signWebhookPayload, timingSafeEqual } from '../../src/webhooks/hmac.js';
import { ReplayCache } from '../../src/webhooks/replay-cache.js';
import { createWebhookVerifier } from '../../src/webhooks/verifier.js';
import { verifyWebhook } from '../../src/webhooks/verify.js';

/** Webhook verification (protocol.ts WEBHOOK), signed independently with node:crypto as the service does. */
const SECRET = 'whsec_unit_secret';
const T = 1_790_000_000;
const NOW = T * 1000;
const body = JSON.stringify({
  id: 'evt_1',
  type: 'transcription.completed',
  createdAt: '2026-09-21T00:00:00.000Z',
  data: {
    transcriptionId: 'tr_1', status: 'COMPLETED', modelId: 'svc_stt_v1', clientMetadata: { order: 7 },
    billing: { state: 'SETTLED', planKey: 'pro', rateVersion: 'v1', ratePerMinute: '600', reservedCharacters: '600', settledCharacters: '30', releasedCharacters: '570', billableCharacters: '30', billableDurationMs: '2600' },
  },
});

function sign(secret: string, t: number, raw: string): string {
  return createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex');
}
const header = (t: number, ...digests: string[]): Record<string, string> => ({ 'SoundClone-Signature': [`t=${t}`, ...digests.map((d) => `v1=${d}`)].join(',') });

async function codeOf(promise: Promise<unknown>): Promise<string | undefined> {
  try {
    await promise;
    return undefined;
  } catch (error) {
    expect(isSoundCloneError(error, WebhookVerificationError)).toBe(true);
    return (error as WebhookVerificationError).code;
  }
}

describe('verifyWebhook', () => {
  it('accepts a valid signature and returns the typed event', async () => {
    const { event, timestampSec } = await verifyWebhook(body, header(T, sign(SECRET, T, body)), SECRET, { now: NOW });
    expect(timestampSec).toBe(T);
    expect(event.id).toBe('evt_1');
    expect(event.data.billing.billableCharacters).toBe(30n);
    expect(event.data.clientMetadata).toEqual({ order: 7 });
  });

  it('accepts the raw body as bytes, and a fetch Headers bag', async () => {
    const headers = new Headers(header(T, sign(SECRET, T, body)));
    await expect(verifyWebhook(new TextEncoder().encode(body), headers, SECRET, { now: NOW })).resolves.toBeTruthy();
  });

  it('refuses a tampered body and a wrong secret', async () => {
    const h = header(T, sign(SECRET, T, body));
    expect(await codeOf(verifyWebhook(body.replace('"order":7', '"order":8'), h, SECRET, { now: NOW }))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(await codeOf(verifyWebhook(body + ' ', h, SECRET, { now: NOW }))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(await codeOf(verifyWebhook(body, h, 'whsec_other', { now: NOW }))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    // The timestamp is signed: moving it breaks the signature.
    expect(await codeOf(verifyWebhook(body, header(T + 1, sign(SECRET, T, body)), SECRET, { now: NOW }))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
  });

  it('supports rotation: several secrets on the receiver, several signatures in the header', async () => {
    const h = header(T, sign('whsec_new', T, body));
    await expect(verifyWebhook(body, h, ['whsec_old', 'whsec_new'], { now: NOW })).resolves.toBeTruthy();
    await expect(verifyWebhook(body, header(T, sign('whsec_old', T, body), sign('whsec_new', T, body)), 'whsec_old', { now: NOW })).resolves.toBeTruthy();
    expect(await codeOf(verifyWebhook(body, h, ['whsec_old'], { now: NOW }))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
  });

  it('enforces the tolerance in both directions, inclusive at the boundary', async () => {
    const h = header(T, sign(SECRET, T, body));
    await expect(verifyWebhook(body, h, SECRET, { toleranceSec: 300, now: NOW + 300_000 })).resolves.toBeTruthy();
    await expect(verifyWebhook(body, h, SECRET, { toleranceSec: 300, now: NOW - 300_000 })).resolves.toBeTruthy();
    expect(await codeOf(verifyWebhook(body, h, SECRET, { toleranceSec: 300, now: NOW + 301_000 }))).toBe('WEBHOOK_TIMESTAMP_TOO_OLD');
    expect(await codeOf(verifyWebhook(body, h, SECRET, { toleranceSec: 300, now: NOW - 301_000 }))).toBe('WEBHOOK_TIMESTAMP_IN_FUTURE');
    expect(await codeOf(verifyWebhook(body, h, SECRET, { toleranceSec: 10, now: () => NOW + 11_000 }))).toBe('WEBHOOK_TIMESTAMP_TOO_OLD');
  });

  it('refuses malformed headers', async () => {
    const good = sign(SECRET, T, body);
    const cases: Array<Record<string, string>> = [
      {},
      { 'SoundClone-Signature': '' },
      { 'SoundClone-Signature': `v1=${good}` },
      { 'SoundClone-Signature': `t=${T}` },
      { 'SoundClone-Signature': `t=abc,v1=${good}` },
      { 'SoundClone-Signature': `t=${T},t=${T},v1=${good}` },
      { 'SoundClone-Signature': `t=${T},v1=${good.slice(2)}` },
      { 'SoundClone-Signature': `t=${T},v1=${'zz'.repeat(32)}` },
      { 'SoundClone-Signature': `t=${T};v1=${good}` },
      { 'SoundClone-Signature': `garbage` },
    ];
    for (const h of cases) expect(await codeOf(verifyWebhook(body, h, SECRET, { now: NOW })), JSON.stringify(h)).toBe('WEBHOOK_MALFORMED_HEADER');
    // Unknown schemes are ignored, not refused.
    await expect(verifyWebhook(body, { 'soundclone-signature': `t=${T},v0=abc,v1=${good}` }, SECRET, { now: NOW })).resolves.toBeTruthy();
  });

  it('refuses a signed body that is not an event, and a call without secrets', async () => {
    expect(await codeOf(verifyWebhook('{"no":"id"}', header(T, sign(SECRET, T, '{"no":"id"}')), SECRET, { now: NOW }))).toBe('WEBHOOK_MALFORMED_PAYLOAD');
    expect(await codeOf(verifyWebhook(body, header(T, sign(SECRET, T, body)), [], { now: NOW }))).toBe('WEBHOOK_NO_SECRET');
    expect(await codeOf(verifyWebhook(body, header(T, sign(SECRET, T, body)), '', { now: NOW }))).toBe('WEBHOOK_NO_SECRET');
  });

  it('signs exactly as the service does', async () => {
    expect(await signWebhookPayload(SECRET, T, body)).toBe(`t=${T},v1=${sign(SECRET, T, body)}`);
  });
});

describe('createWebhookVerifier', () => {
  it('rejects a replay of an accepted event within the window, and accepts it again once forgotten', async () => {
    let now = NOW;
    const verifier = createWebhookVerifier({ secrets: SECRET, toleranceSec: 300, now: () => now });
    const h = header(T, sign(SECRET, T, body));
    await expect(verifier.verify(body, h)).resolves.toBeTruthy();
    expect(await codeOf(verifier.verify(body, h))).toBe('WEBHOOK_REPLAYED');
    // A retry of the same event (new timestamp, new signature) is a replay too.
    now += 60_000;
    expect(await codeOf(verifier.verify(body, header(T + 60, sign(SECRET, T + 60, body))))).toBe('WEBHOOK_REPLAYED');
    verifier.forget('evt_1');
    await expect(verifier.verify(body, header(T + 60, sign(SECRET, T + 60, body)))).resolves.toBeTruthy();
    // The original copy, replayed after the window, is refused as too old.
    now = NOW + 400_000;
    expect(await codeOf(verifier.verify(body, h))).toBe('WEBHOOK_TIMESTAMP_TOO_OLD');
  });

  it('checks the signature before remembering: a forged copy does not burn the id', async () => {
    const verifier = createWebhookVerifier({ secrets: SECRET, now: () => NOW });
    expect(await codeOf(verifier.verify(body, header(T, sign('forger', T, body))))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    await expect(verifier.verify(body, header(T, sign(SECRET, T, body)))).resolves.toBeTruthy();
  });

  it('rotates secrets in place', async () => {
    const verifier = createWebhookVerifier({ secrets: 'old', now: () => NOW });
    expect(await codeOf(verifier.verify(body, header(T, sign('new', T, body))))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    verifier.setSecrets(['old', 'new']);
    await expect(verifier.verify(body, header(T, sign('new', T, body)))).resolves.toBeTruthy();
  });
});

describe('ReplayCache and timingSafeEqual', () => {
  it('forgets expired ids and stays within its bound, oldest first', () => {
    const cache = new ReplayCache(3);
    cache.add('a', 1000, 0);
    cache.add('b', 5000, 0);
    expect(cache.has('a', 999)).toBe(true);
    expect(cache.has('a', 1000)).toBe(false);
    cache.add('c', 5000, 2000); // prunes a
    cache.add('d', 5000, 2000);
    cache.add('e', 5000, 2000); // evicts b, the oldest
    expect(cache.size).toBe(3);
    expect(cache.has('b', 2000)).toBe(false);
    expect(cache.has('e', 2000)).toBe(true);
    expect(() => new ReplayCache(0)).toThrow(RangeError);
  });

  it('compares bytes without early exit semantics leaking into results', () => {
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 3]))).toBe(true);
    expect(timingSafeEqual(new Uint8Array([1, 2, 3]), new Uint8Array([1, 2, 4]))).toBe(false);
    expect(timingSafeEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
