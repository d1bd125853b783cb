import { beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, PREFIX, idem, upload, serverForSuite } from './support/server.js';
import { speechWav } from './support/wav.js';

/** Fault injection, observed with plain fetch (the typed client's retry tests reuse these). */
describe('fault injection', () => {
  const server = serverForSuite();
  let uploadId: string;
  beforeAll(async () => {
    uploadId = await upload(server, speechWav());
  });

  const post = (key: string) =>
    fetch(`${server.url}${PREFIX}/stt/transcriptions`, {
      method: 'POST',
      headers: { accessKey: KEY_A, 'Content-Type': 'application/json', 'Idempotency-Key': key },
      body: JSON.stringify({ uploadId, title: 'faults' }),
    });

  it('answers the next N matching requests with 503 and Retry-After, then serves normally', async () => {
    const handle = server.faults.inject({ method: 'GET', path: '/user/info', times: 2, action: { kind: 'status', status: 503, retryAfterSec: 2 } });
    for (let i = 0; i < 2; i++) {
      const r = await fetch(`${server.url}${PREFIX}/user/info`, { headers: { accessKey: KEY_A } });
      expect(r.status).toBe(503);
      expect(r.headers.get('retry-after')).toBe('2');
      expect(await r.json()).toMatchObject({ code: -1, errorCode: 'SERVICE_UNAVAILABLE' });
    }
    expect(handle.hits).toBe(2);
    expect(handle.remaining).toBe(0);
    expect((await fetch(`${server.url}${PREFIX}/user/info`, { headers: { accessKey: KEY_A } })).status).toBe(200);
  });

  it('answers 429 with Retry-After and only for the matching method and path', async () => {
    server.faults.inject({ method: 'POST', path: `${PREFIX}/stt/transcriptions`, action: { kind: 'status', status: 429, retryAfterSec: 1 } });
    expect((await fetch(`${server.url}${PREFIX}/stt/transcriptions`, { headers: { accessKey: KEY_A } })).status).toBe(200);
    const r = await post(idem());
    expect(r.status).toBe(429);
    expect((await r.json()).errorCode).toBe('RATE_LIMITED');
    expect(r.headers.get('retry-after')).toBe('1');
  });

  it('drops the connection after processing: a retry with the same key gets the same task', async () => {
    server.faults.inject({ method: 'POST', path: '/stt/transcriptions', action: { kind: 'dropAfterProcessing' } });
    const key = idem();
    await expect(post(key)).rejects.toThrow();
    const retry = await post(key);
    expect(retry.status).toBe(200);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    const data = (await retry.json()).data;
    const list = await (await fetch(`${server.url}${PREFIX}/stt/transcriptions?pageSize=100`, { headers: { accessKey: KEY_A } })).json();
    expect(list.data.items.filter((i: any) => i.title === 'faults' && i.transcriptionId === data.transcriptionId)).toHaveLength(1);
    expect(server.requests.filter((r) => r.idempotencyKey === key).map((r) => r.status)).toEqual(['dropped', 200]);
  });

  it('drops the connection before processing: nothing was created', async () => {
    server.faults.inject({ method: 'POST', path: /\/stt\/transcriptions$/, action: { kind: 'dropBeforeProcessing' } });
    const key = idem();
    const before = (await (await fetch(`${server.url}${PREFIX}/stt/transcriptions`, { headers: { accessKey: KEY_A } })).json()).data.total;
    await expect(post(key)).rejects.toThrow();
    const after = (await (await fetch(`${server.url}${PREFIX}/stt/transcriptions`, { headers: { accessKey: KEY_A } })).json()).data.total;
    expect(after).toBe(before);
    const retry = await post(key);
    expect(retry.headers.get('idempotent-replayed')).toBeNull();
    expect((await post(key)).headers.get('idempotent-replayed')).toBe('true');
  });

  it('delays a request, and rules can be removed or cleared', async () => {
    server.faults.inject({ path: '/voices', action: { kind: 'delay', ms: 150 } });
    const started = Date.now();
    expect((await fetch(`${server.url}${PREFIX}/voices`, { headers: { accessKey: KEY_A } })).status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const handle = server.faults.inject({ path: '/voices', action: { kind: 'status', status: 503 } });
    handle.remove();
    server.faults.inject({ path: '/voices', times: 5, action: { kind: 'status', status: 500 } });
    server.faults.clear();
    expect((await fetch(`${server.url}${PREFIX}/voices`, { headers: { accessKey: KEY_A } })).status).toBe(200);
  });
});
