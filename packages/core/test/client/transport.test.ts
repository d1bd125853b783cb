import { describe, expect, it } from 'vitest';
import { AbortError, ConnectionError, RequestTimeoutError } from '../../src/errors/client-errors.js';
import { Transport, type TransportConfig } from '../../src/http/transport.js';

/**
 * Transport timing with a fake fetch (pure transport behaviour; everything against the real server is
 * in test/rest). The fake answers only when told, or never, and honours the signal as fetch does.
 */
type FakeFetch = typeof globalThis.fetch;

function hangingFetch(calls: { count: number }): FakeFetch {
  return (_input, init) =>
    new Promise<Response>((_resolve, reject) => {
      calls.count += 1;
      const signal = init?.signal;
      signal?.addEventListener('abort', () => reject(signal.reason ?? new DOMException('aborted', 'AbortError')), { once: true });
    });
}

function transport(fetch: FakeFetch, extra: Partial<TransportConfig> = {}): Transport {
  return new Transport({ accessKey: 'k', baseUrl: 'http://127.0.0.1:1', fetch, timeoutMs: 1000, maxRetries: 2, backoff: { baseMs: 1, maxMs: 2 }, maxRetryAfterMs: 60_000, ...extra });
}

/** Counts abort listeners a caller's signal holds, to prove the transport removes its own. */
function countingSignal(): { controller: AbortController; live: () => number } {
  const controller = new AbortController();
  const signal = controller.signal;
  const listeners = new Set<unknown>();
  const add = signal.addEventListener.bind(signal);
  const remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((type: string, listener: EventListenerOrEventListenerObject, options?: AddEventListenerOptions | boolean) => {
    listeners.add(listener);
    add(type, listener, options);
  }) as typeof signal.addEventListener;
  signal.removeEventListener = ((type: string, listener: EventListenerOrEventListenerObject, options?: EventListenerOptions | boolean) => {
    listeners.delete(listener);
    remove(type, listener, options);
  }) as typeof signal.removeEventListener;
  return { controller, live: () => listeners.size };
}

const GET = { method: 'GET', path: '/x', retry: 'repeatable' } as const;

describe('transport timing', () => {
  it('a per-call timeout settles promptly as RequestTimeoutError and leaves no listener', async () => {
    const calls = { count: 0 };
    const { controller, live } = countingSignal();
    const started = Date.now();
    const error = await transport(hangingFetch(calls)).request(GET, { signal: controller.signal, timeoutMs: 50, maxRetries: 0 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect((error as RequestTimeoutError).timeoutMs).toBe(50);
    // It would hang forever otherwise; the bound is loose because CI machines stall.
    expect(Date.now() - started).toBeLessThan(2000);
    expect(calls.count).toBe(1);
    expect(live()).toBe(0);
  });

  it('a repeatable call retries after timeouts; every attempt gets its own deadline', async () => {
    const calls = { count: 0 };
    const error = await transport(hangingFetch(calls)).request(GET, { timeoutMs: 20 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RequestTimeoutError);
    expect(calls.count).toBe(3);
  });

  it('a call that may have arrived is not retried after a timeout', async () => {
    const calls = { count: 0 };
    await transport(hangingFetch(calls)).request({ method: 'POST', path: '/x', retry: 'once' }, { timeoutMs: 20 }).catch(() => undefined);
    expect(calls.count).toBe(1);
  });

  it('an abort settles promptly as AbortError with the reason, and leaves no listener', async () => {
    const calls = { count: 0 };
    const { controller, live } = countingSignal();
    const pending = transport(hangingFetch(calls)).request(GET, { signal: controller.signal }).catch((e: unknown) => e);
    setTimeout(() => controller.abort(new Error('stop')), 30);
    const started = Date.now();
    const error = await pending;
    expect(error).toBeInstanceOf(AbortError);
    expect((error as AbortError).cause).toEqual(new Error('stop'));
    expect(Date.now() - started).toBeLessThan(2000);
    expect(calls.count).toBe(1);
    expect(live()).toBe(0);
  });

  it('an abort during the retry delay ends the wait at once', async () => {
    let calls = 0;
    const fetch: FakeFetch = async () => {
      calls += 1;
      return new Response('{}', { status: 503, headers: { 'Retry-After': '30' } });
    };
    const { controller, live } = countingSignal();
    setTimeout(() => controller.abort(), 40);
    const started = Date.now();
    const error = await transport(fetch).request(GET, { signal: controller.signal }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AbortError);
    // Retry-After asked for 30 s.
    expect(Date.now() - started).toBeLessThan(5000);
    expect(calls).toBe(1);
    expect(live()).toBe(0);
  });

  it('classifies a platform error as ConnectionError, never-connected only for refusals', async () => {
    const refused: FakeFetch = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const reset: FakeFetch = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('other side closed'), { code: 'UND_ERR_SOCKET' }) });
    };
    const a = (await transport(refused, { maxRetries: 0 }).request(GET).catch((e: unknown) => e)) as ConnectionError;
    expect(a).toBeInstanceOf(ConnectionError);
    expect(a.requestMayHaveArrived).toBe(false);
    expect(a.message).toContain('ECONNREFUSED');
    const b = (await transport(reset, { maxRetries: 0 }).request(GET).catch((e: unknown) => e)) as ConnectionError;
    expect(b.requestMayHaveArrived).toBe(true);
  });

  it('names method and URL in a ConnectionError without user info, query or the access key', async () => {
    const refused: FakeFetch = async () => {
      throw new TypeError('fetch failed', { cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }) });
    };
    const t = transport(refused, { maxRetries: 0, accessKey: 'secret-key', baseUrl: 'https://user:pw@api.example.com:8443/base/' });
    const error = (await t.request({ method: 'POST', path: '/uploads', query: { token: 'tok_123', filename: 'a.wav' }, retry: 'once' }).catch((e: unknown) => e)) as ConnectionError;
    expect(error.message).toBe('POST https://api.example.com:8443/base/uploads failed: fetch failed (ECONNREFUSED)');
    for (const hidden of ['secret-key', 'user', 'pw@', 'tok_123', 'a.wav', '?']) expect(error.message).not.toContain(hidden);
  });

  it('reads a non-envelope success as a format error, and a non-JSON failure by its status', async () => {
    const html: FakeFetch = async () => new Response('<html>', { status: 200 });
    expect(await transport(html).request(GET).catch((e: unknown) => e)).toMatchObject({ name: 'ResponseFormatError', code: 'MALFORMED_RESPONSE' });
    const wrongCode: FakeFetch = async () => new Response('{"code":0}', { status: 200 });
    expect(await transport(wrongCode).request(GET).catch((e: unknown) => e)).toMatchObject({ code: 'MALFORMED_RESPONSE', path: 'body.code' });
    const proxy: FakeFetch = async () => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'X-Request-Id': 'req_proxy' } });
    expect(await transport(proxy, { maxRetries: 0 }).request(GET).catch((e: unknown) => e)).toMatchObject({ name: 'ServerError', code: 'INTERNAL', status: 502, requestId: 'req_proxy' });
  });
});
