import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, start, type TestServer } from './support/server.js';
import { startMediaHost, startTrickleHost, type MediaHost } from './support/media-host.js';

/**
 * mediaUrl over real loopback connections. Only loopback destinations appear here; refusals of any
 * other address run inside a private network namespace (ssrf-namespace.test.ts).
 */
describe('mediaUrl fetching', () => {
  let server: TestServer;
  let media: MediaHost;
  let victim: MediaHost;
  let closedPort: number;
  beforeAll(async () => {
    victim = await startMediaHost();
    media = await startMediaHost({
      'to-victim': `http://127.0.0.1:${victimPort()}/ok.wav`,
      'to-localhost': `http://localhost:${victimPort()}/ok.wav`,
      'to-self-by-name': '/ok.wav',
      'to-file': 'file:///etc/passwd',
    });
    const probe = await startMediaHost();
    closedPort = probe.port;
    await probe.close();
    server = await start({
      allowMediaHosts: [`127.0.0.1:${media.port}`, `127.0.0.1:${closedPort}`, `media.test:${media.port}`],
      // Names only ever resolve to loopback here; names resolving elsewhere are tested in the namespace.
      resolveHost: async (name) => (name === 'media.test' || name === 'rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : [{ address: '::1', family: 6 }]),
      mediaFetchTimeoutMs: 3000,
    });
    function victimPort(): number {
      return victim.port;
    }
  });
  afterAll(async () => {
    await server.close();
    await media.close();
    await victim.close();
  });

  const create = (mediaUrl: string, extra: Record<string, unknown> = {}) =>
    server.call('POST', '/stt/transcriptions', { json: { mediaUrl, waitForCompletion: true, waitTimeoutMs: 10_000, ...extra }, headers: { 'Idempotency-Key': idem() } });

  it('fetches an allowed host and transcribes it (title from the URL)', async () => {
    const r = await create(`${media.origin}/ok.wav`);
    expect(r.body.data).toMatchObject({ status: 'COMPLETED', title: 'ok.wav', audioDurationMs: '2600' });
  });

  it('follows up to 5 redirects and refuses the 6th with TOO_MANY_REDIRECTS', async () => {
    expect((await create(`${media.origin}/chain/5`)).body.data.status).toBe('COMPLETED');
    const six = await create(`${media.origin}/chain/6`);
    expect(six.status).toBe(422);
    expect(six.body).toMatchObject({ errorCode: 'MEDIA_FETCH_FAILED', details: { reason: 'TOO_MANY_REDIRECTS', sourceStatus: 302 } });
    expect((await create(`${media.origin}/loop`)).body.details.reason).toBe('TOO_MANY_REDIRECTS');
  });

  it('maps remote answers: 4xx SOURCE_REFUSED, 5xx and 429 SOURCE_UNAVAILABLE, with sourceStatus', async () => {
    for (const [path, reason, status] of [['/missing', 'SOURCE_REFUSED', 404], ['/forbidden', 'SOURCE_REFUSED', 403], ['/busy', 'SOURCE_UNAVAILABLE', 503], ['/limited', 'SOURCE_UNAVAILABLE', 429]] as const) {
      const r = await create(`${media.origin}${path}`);
      expect(r.status).toBe(422);
      expect(r.body.details).toMatchObject({ reason, sourceStatus: status });
    }
  });

  it('refuses content it cannot decode with UNSUPPORTED_TYPE', async () => {
    const r = await create(`${media.origin}/page.html`);
    expect(r.body.details).toMatchObject({ reason: 'UNSUPPORTED_TYPE', sourceStatus: 200, contentType: 'text/html' });
  });

  it('reports a closed port as SOURCE_UNREACHABLE without sourceStatus', async () => {
    const r = await create(`http://127.0.0.1:${closedPort}/ok.wav`);
    expect(r.body.details).toMatchObject({ reason: 'SOURCE_UNREACHABLE', cause: 'ECONNREFUSED' });
    expect(r.body.details.sourceStatus).toBeUndefined();
  });

  it('allows exactly the listed host:port: another loopback port, and a redirect to it, are refused unseen', async () => {
    const direct = await create(`http://127.0.0.1:${victim.port}/ok.wav`);
    expect(direct.body.details).toMatchObject({ reason: 'DESTINATION_NOT_ALLOWED', refusal: 'loopback' });
    for (const hop of ['to-victim', 'to-localhost']) {
      const r = await create(`${media.origin}/redirect/${hop}`);
      expect(r.body.details.reason).toBe('DESTINATION_NOT_ALLOWED');
    }
    expect((await create(`${media.origin}/redirect/to-file`)).body.details.reason).toBe('DESTINATION_NOT_ALLOWED');
    expect(victim.hits).toEqual([]);
  });

  it('checks the address a name resolves to, at connection time', async () => {
    const refused = await create(`http://rebind.test:${media.port}/ok.wav`);
    expect(refused.body.details).toMatchObject({ reason: 'DESTINATION_NOT_ALLOWED', refusal: 'loopback', host: 'rebind.test' });
    const privateName = await create(`http://elsewhere.test:${media.port}/ok.wav`);
    expect(privateName.body.details).toMatchObject({ reason: 'DESTINATION_NOT_ALLOWED', refusal: 'loopback' });
    const before = media.hits.length;
    const allowedName = await create(`http://media.test:${media.port}/ok.wav`);
    expect(allowedName.body.data.status).toBe('COMPLETED');
    expect(media.hits.length).toBe(before + 1);
  });

  it('does not bind the idempotency key to a failed fetch', async () => {
    const key = idem();
    const body = { mediaUrl: `${media.origin}/busy` };
    const first = await server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(422);
    const again = await server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(422);
    expect(media.hits.filter((h) => h === '/busy').length).toBeGreaterThanOrEqual(2);
  });

  it('bounds a source that trickles bytes by the fetch deadline (SOURCE_UNREACHABLE, ETIMEDOUT)', async () => {
    const trickle = await startTrickleHost();
    const quick = await start({ allowMediaHosts: [`127.0.0.1:${trickle.port}`], mediaFetchTimeoutMs: 400 });
    try {
      const started = Date.now();
      const r = await quick.call('POST', '/stt/transcriptions', { json: { mediaUrl: `http://127.0.0.1:${trickle.port}/slow.wav` }, headers: { 'Idempotency-Key': idem() } });
      expect(Date.now() - started).toBeLessThan(3000);
      expect(r.body.details).toMatchObject({ reason: 'SOURCE_UNREACHABLE' });
    } finally {
      await quick.close();
      await trickle.close();
    }
  });
});
