import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, PREFIX, idem, start, transcribe, upload, type TestServer } from './support/server.js';
import { speechWav } from './support/wav.js';
import type { DeliveryRow } from '../src/store/store.js';

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  readonly at: number;
}

const SECRET = 'whsec_test_0123456789abcdef';

/** Recomputes the signature as a receiver would (protocol.ts WEBHOOK), constant-time. */
function verify(raw: string, header: string, secret: string, toleranceSec = 300): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=') as [string, string]));
  const t = Number(parts['t']);
  if (!Number.isInteger(t) || Math.abs(Date.now() / 1000 - t) > toleranceSec) return false;
  const want = createHmac('sha256', secret).update(`${t}.${raw}`).digest();
  const got = Buffer.from(parts['v1'] ?? '', 'hex');
  return got.length === want.length && timingSafeEqual(got, want);
}

describe('completion webhooks', () => {
  let server: TestServer;
  let receiver: Server;
  let port: number;
  const received: Received[] = [];
  /** Path -> how many more times to answer 500. */
  const failures = new Map<string, number>();

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, headers: req.headers, raw: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        const left = failures.get(path) ?? 0;
        if (left > 0) {
          failures.set(path, left - 1);
          res.writeHead(500).end('try later');
        } else res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', () => r()));
    port = (receiver.address() as AddressInfo).port;
    server = await start({ allowMediaHosts: [`127.0.0.1:${port}`], webhookRetryDelaysMs: [50, 100, 150] });
  });
  afterAll(async () => {
    await server.close();
    await new Promise<void>((r) => receiver.close(() => r()));
  });

  const waitFor = async (path: string, count: number): Promise<Received[]> => {
    for (let i = 0; i < 200; i++) {
      const got = received.filter((r) => r.path === path);
      if (got.length >= count) return got;
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error(`webhook ${path}: fewer than ${count} deliveries`);
  };

  it('posts a signed completion event with clientMetadata echoed', async () => {
    const uploadId = await upload(server, speechWav());
    const data = await transcribe(server, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/signed`, notificationSigningSecret: SECRET, clientMetadata: { order: 'A-17', tags: { a: 1 } } } });
    const [hook] = await waitFor('/signed', 1);
    const event = JSON.parse(hook!.raw);
    expect(event).toMatchObject({
      id: expect.stringMatching(/^evt_/),
      type: 'transcription.completed',
      data: { transcriptionId: data.transcriptionId, status: 'COMPLETED', modelId: 'svc_stt_v1', clientMetadata: { order: 'A-17', tags: { a: 1 } } },
    });
    expect(event.data.billing.billableCharacters).toBe(data.billing.billableCharacters);
    expect(hook!.headers['soundclone-event-id']).toBe(event.id);
    expect(hook!.headers['soundclone-delivery-attempt']).toBe('1');
    const signature = hook!.headers['soundclone-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verify(hook!.raw, signature, SECRET)).toBe(true);
    expect(verify(hook!.raw.replace('A-17', 'A-18'), signature, SECRET)).toBe(false);
    expect(verify(hook!.raw, signature, 'other-secret')).toBe(false);
    expect(verify(hook!.raw, signature, SECRET, -1)).toBe(false);
  });

  it('retries with backoff: same event id and body, a fresh signature per attempt', async () => {
    failures.set('/flaky', 2);
    const uploadId = await upload(server, speechWav());
    await transcribe(server, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/flaky`, notificationSigningSecret: SECRET } });
    const hooks = await waitFor('/flaky', 3);
    expect(new Set(hooks.map((h) => h.headers['soundclone-event-id'])).size).toBe(1);
    expect(new Set(hooks.map((h) => h.raw)).size).toBe(1);
    expect(hooks.map((h) => h.headers['soundclone-delivery-attempt'])).toEqual(['1', '2', '3']);
    expect(hooks[1]!.at - hooks[0]!.at).toBeGreaterThanOrEqual(45);
    expect(hooks[2]!.at - hooks[1]!.at).toBeGreaterThanOrEqual(95);
    for (const h of hooks) expect(verify(h.raw, h.headers['soundclone-signature'] as string, SECRET)).toBe(true);
    // The receiver logs a request before the server has recorded the answer: wait for the outcome.
    const record = await settledDelivery(server, '/flaky');
    expect(record.outcome).toBe('delivered');
    expect(record.attempts.map((a) => a.status)).toEqual([500, 500, 204]);
  });

  it('gives up after the last retry', async () => {
    failures.set('/down', 99);
    const uploadId = await upload(server, speechWav());
    await transcribe(server, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/down` } });
    await waitFor('/down', 4);
    // The receiver logs a request before the server has recorded the answer: wait for the outcome.
    const record = await settledDelivery(server, '/down');
    expect(record.outcome).toBe('failed');
    expect(received.filter((r) => r.path === '/down')).toHaveLength(4);
  });

  it('sends transcription.failed for a FAILED task, unsigned without a secret; nothing with notifyOnCompletion false', async () => {
    const uploadId = await upload(server, speechWav());
    await transcribe(server, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/failed`, entityCategories: ['nonsense'] } });
    const [hook] = await waitFor('/failed', 1);
    const event = JSON.parse(hook!.raw);
    expect(event.type).toBe('transcription.failed');
    expect(event.data.error.errorCode).toBe('INPUT_INVALID');
    expect(event.data.clientMetadata).toBeNull();
    expect(hook!.headers['soundclone-signature']).toBeUndefined();
    await transcribe(server, { uploadId, options: { notifyUrl: `http://127.0.0.1:${port}/silent`, notifyOnCompletion: false } });
    await new Promise((r) => setTimeout(r, 100));
    expect(received.filter((r) => r.path === '/silent')).toHaveLength(0);
  });

  it('never returns the signing secret from any call', async () => {
    const uploadId = await upload(server, speechWav());
    const key = idem();
    const body = { uploadId, waitForCompletion: true, options: { notifyUrl: `http://127.0.0.1:${port}/secret`, notificationSigningSecret: SECRET } };
    const created = await server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    const replay = await server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    const id = created.body.data.transcriptionId;
    const texts = [
      JSON.stringify(created.body),
      JSON.stringify(replay.body),
      JSON.stringify((await server.call('GET', `/stt/transcriptions/${id}`)).body),
      JSON.stringify((await server.call('GET', '/stt/transcriptions?pageSize=100')).body),
      ...(await Promise.all(['json', 'txt', 'segmented_json', 'html'].map(async (f) => (await fetch(`${server.url}${PREFIX}/stt/transcriptions/${id}/download/${f}`, { headers: { accessKey: KEY_A } })).text()))),
    ];
    for (const text of texts) expect(text).not.toContain(SECRET);
    const [hook] = await waitFor('/secret', 1);
    expect(hook!.raw).not.toContain(SECRET);
  });
});

/** The outbox's delivery to `path`, once it is no longer pending (or after a second). */
async function settledDelivery(server: TestServer, path: string): Promise<DeliveryRow> {
  for (let i = 0; ; i++) {
    const record = (await server.services.store.outbox.list()).find((d) => d.url.endsWith(path));
    if ((record !== undefined && record.outcome !== 'pending') || i >= 100) return record as DeliveryRow;
    await new Promise((r) => setTimeout(r, 10));
  }
}
