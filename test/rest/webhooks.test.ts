import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServer } from '@soundclone/server';
import { SoundClone, WebhookVerificationError, createWebhookVerifier, verifyWebhook, type WebhookEvent } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, rejectionOf, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

interface Delivery {
  readonly path: string;
  readonly raw: string;
  readonly headers: IncomingHttpHeaders;
  readonly verified?: WebhookEvent;
  readonly refusal?: string;
}

const SECRET = 'whsec_e2e_current';
const OLD_SECRET = 'whsec_e2e_previous';

/** Completion webhooks posted by the reference server to a local receiver that verifies them. */
describe('completion webhooks', () => {
  let server: RunningServer;
  let receiver: Server;
  let origin: string;
  let client: SoundClone;
  let uploadId: string;
  const deliveries: Delivery[] = [];
  const verifier = createWebhookVerifier({ secrets: [OLD_SECRET, SECRET], toleranceSec: 300 });

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const path = req.url ?? '/';
        // A receiver as a user writes it: verify, act, answer; forget the id when acting failed.
        void verifier.verify(raw, req.headers).then(
          ({ event }) => {
            deliveries.push({ path, raw, headers: req.headers, verified: event });
            const failOnce = path === '/fail-once' && deliveries.filter((d) => d.path === path).length === 1;
            if (failOnce) verifier.forget(event.id);
            res.writeHead(failOnce ? 500 : 204).end();
          },
          (error: WebhookVerificationError) => {
            deliveries.push({ path, raw, headers: req.headers, refusal: error.code });
            res.writeHead(400).end();
          },
        );
      });
    });
    // The receiver is reached by name: the SDK refuses a notifyUrl whose host is a literal loopback
    // address before sending, while a name is judged by the service when it connects (allowed here).
    await new Promise<void>((r) => receiver.listen(0, 'localhost', () => r()));
    const port = (receiver.address() as AddressInfo).port;
    origin = `http://localhost:${port}`;
    server = await startTestServer({ allowMediaHosts: [`localhost:${port}`], webhookRetryDelaysMs: [50, 100] });
    client = clientFor(server);
    uploadId = (await client.uploads.create(wav(), { contentType: 'audio/wav' })).uploadId;
  });
  afterAll(async () => {
    await server.close();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const deliveriesTo = async (path: string, count: number): Promise<Delivery[]> => {
    for (let i = 0; i < 200; i++) {
      const got = deliveries.filter((d) => d.path === path);
      if (got.length >= count) return got;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`expected ${count} deliveries to ${path}`);
  };

  it('delivers a signed completion event that verifies, with clientMetadata echoed and typed billing', async () => {
    const created = await client.stt.transcriptions.create({
      uploadId,
      options: { notifyUrl: `${origin}/done`, notificationSigningSecret: SECRET, clientMetadata: { orderId: 'o-1', tags: { a: 1 } } },
    });
    const [delivery] = await deliveriesTo('/done', 1);
    expect(delivery?.refusal).toBeUndefined();
    const event = delivery?.verified as WebhookEvent;
    expect(event.type).toBe('transcription.completed');
    expect(event.data.transcriptionId).toBe(created.transcriptionId);
    expect(event.data.clientMetadata).toEqual({ orderId: 'o-1', tags: { a: 1 } });
    expect(typeof event.data.billing.billableCharacters).toBe('bigint');
    // Polling stays authoritative and agrees.
    const task = await client.stt.transcriptions.get(created.transcriptionId);
    expect(task.billing).toEqual(event.data.billing);
    // The secret is write-only: never returned.
    expect(JSON.stringify(task, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v))).not.toContain(SECRET);
  });

  it('rejects a tampered body, a wrong secret, a replay, a stale and a future timestamp', async () => {
    const [delivery] = await deliveriesTo('/done', 1);
    const { raw, headers } = delivery as Delivery;
    const code = async (p: Promise<unknown>): Promise<string> => ((await rejectionOf(p)) as WebhookVerificationError).code;
    expect(await code(client.webhooks.verify(raw.replace('o-1', 'o-2'), headers, SECRET))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(await code(client.webhooks.verify(raw, headers, 'whsec_wrong'))).toBe('WEBHOOK_SIGNATURE_MISMATCH');
    expect(await code(verifier.verify(raw, headers))).toBe('WEBHOOK_REPLAYED');
    const t = Number(/t=(\d+)/.exec(String(headers['soundclone-signature']))?.[1]);
    expect(await code(verifyWebhook(raw, headers, SECRET, { toleranceSec: 300, now: (t + 301) * 1000 }))).toBe('WEBHOOK_TIMESTAMP_TOO_OLD');
    expect(await code(verifyWebhook(raw, headers, SECRET, { toleranceSec: 300, now: (t - 301) * 1000 }))).toBe('WEBHOOK_TIMESTAMP_IN_FUTURE');
    // Within tolerance both ways, and with the rotated pair of secrets, it verifies.
    await expect(verifyWebhook(raw, headers, [OLD_SECRET, SECRET], { now: (t + 299) * 1000 })).resolves.toBeTruthy();
    await expect(verifyWebhook(raw, headers, [SECRET], { now: (t - 299) * 1000 })).resolves.toBeTruthy();
    expect(await code(client.webhooks.verify(raw, { 'soundclone-signature': 'v1=zz' }, SECRET))).toBe('WEBHOOK_MALFORMED_HEADER');
  });

  it('accepts the service retry of an event whose handling failed, once forgotten', async () => {
    await client.stt.transcriptions.create({ uploadId, options: { notifyUrl: `${origin}/fail-once`, notificationSigningSecret: SECRET } });
    const [first, second] = await deliveriesTo('/fail-once', 2);
    expect(first?.verified?.id).toBe(second?.verified?.id);
    expect(second?.headers['soundclone-delivery-attempt']).toBe('2');
    expect(second?.refusal).toBeUndefined();
  });

  it('signs failure events too, with the typed error', async () => {
    await client.stt.transcriptions.create({ uploadId, options: { entityCategories: ['bogus'], notifyUrl: `${origin}/failed`, notificationSigningSecret: SECRET } });
    const [delivery] = await deliveriesTo('/failed', 1);
    expect(delivery?.verified?.type).toBe('transcription.failed');
    expect(delivery?.verified?.data.error?.errorCode).toBe('INPUT_INVALID');
  });
});
