import { afterEach, describe, expect, it } from 'vitest';
import { isSoundCloneError, ServiceUnavailableError, SoundClone } from '@soundclone/core';
import { parseServerFlags } from '../../src/index.js';
import { idem, KEY_A, KEY_B, start, type TestServer } from '../support/server.js';
import { createSession } from './support.js';

/**
 * Node admission (docs/protocol.md "Node admission"): a node keeps at most maxRealtimeSessionsPerNode
 * sessions live, every account's; past it a creation is a typed, retryable 503 that leaves nothing
 * behind, so a retry (through a balancer: on another node) makes the session.
 */
describe('a full node refuses new realtime sessions', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  const server = async (options: Parameters<typeof start>[0]): Promise<TestServer> => {
    const s = await start(options);
    cleanup.push(() => s.close());
    return s;
  };
  const create = (s: TestServer, key: string, idempotencyKey = idem()) => s.call('POST', '/stt/realtime/sessions', { key, json: {}, headers: { 'Idempotency-Key': idempotencyKey } });
  const realtimeTasks = async (s: TestServer, key: string) => ((await s.call('GET', '/stt/transcriptions?pageSize=100', { key })).body.data.items as Array<{ modelId: string }>).filter((t) => t.modelId === 'svc_stt_realtime_v1').length;

  it('past maxRealtimeSessionsPerNode, whichever account asks: 503 NODE_FULL with Retry-After 1, nothing created, the key still free', async () => {
    const s = await server({ maxRealtimeSessionsPerNode: 2 });
    // One session per account: the node's limit counts every account's.
    const first = await createSession(s, {}, KEY_A);
    await createSession(s, {}, KEY_B);
    const key = idem();
    for (const account of [KEY_A, KEY_B]) {
      const refused = await create(s, account, key);
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: -1, errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'NODE_FULL', limit: 2 } });
      expect(refused.headers.get('retry-after')).toBe('1');
    }
    expect(await realtimeTasks(s, KEY_A)).toBe(1);
    expect(await realtimeTasks(s, KEY_B)).toBe(1);
    // A finished session frees its place; the refused key then makes a new session (not a replay).
    await s.call('POST', `/stt/realtime/sessions/${first.sessionId}/finish`, { json: { capturedSamples: '0' } });
    const made = await create(s, KEY_A, key);
    expect(made.status).toBe(200);
    expect(made.headers.get('idempotent-replayed')).toBeNull();
    expect(await realtimeTasks(s, KEY_A)).toBe(2);
  });

  it('a session whose recovery window passed no longer takes a place', async () => {
    const s = await server({ maxRealtimeSessionsPerNode: 1, realtimeTiming: { recoveryWindowMs: 100 } });
    await createSession(s, {}, KEY_A);
    expect((await create(s, KEY_B)).status).toBe(503);
    await expect.poll(async () => (await create(s, KEY_B)).status, { timeout: 5000, interval: 50 }).toBe(200);
  });

  it('refusals every node would give come first: the account\'s limit is 429, not a retryable 503', async () => {
    const s = await server({ maxRealtimeSessionsPerNode: 1, maxRealtimeSessionsPerAccount: 1 });
    await createSession(s, {}, KEY_A);
    expect((await create(s, KEY_A)).body).toMatchObject({ errorCode: 'RATE_LIMITED', details: { reason: 'ACCOUNT_SESSION_LIMIT' } });
    expect((await create(s, KEY_B)).body).toMatchObject({ errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'NODE_FULL' } });
  });

  it('the SDK retries the create with its one key and reports ServiceUnavailableError NODE_FULL once its retries are used up', async () => {
    const s = await server({ maxRealtimeSessionsPerNode: 1 });
    await createSession(s, {}, KEY_B);
    const before = s.requests.length;
    const client = new SoundClone({ accessKey: KEY_A, baseUrl: s.url, maxRetries: 1 });
    const error = await client.stt.realtime.create({}).catch((e: unknown) => e);
    expect(isSoundCloneError(error, ServiceUnavailableError)).toBe(true);
    expect(error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, details: { reason: 'NODE_FULL' } });
    const tries = s.requests.slice(before).filter((r) => r.path.endsWith('/stt/realtime/sessions'));
    expect(tries.map((r) => r.status)).toEqual([503, 503]);
    expect(new Set(tries.map((r) => r.idempotencyKey)).size).toBe(1);
  });

  it('--max-sessions-per-node sets it; 0 is refused, by the flag and by startServer', async () => {
    expect(parseServerFlags(['--access-key', 'k', '--max-sessions-per-node', '40']).options).toMatchObject({ maxRealtimeSessionsPerNode: 40 });
    expect(() => parseServerFlags(['--access-key', 'k', '--max-sessions-per-node', '0'])).toThrow(/--max-sessions-per-node/);
    await expect(start({ maxRealtimeSessionsPerNode: 0 })).rejects.toThrow(/maxRealtimeSessionsPerNode/);
  });
});
