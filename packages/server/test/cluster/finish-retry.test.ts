import { afterEach, describe, expect, it } from 'vitest';
import { postgresForFile } from '../support/postgres.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, open, socketUrl, speech } from '../realtime/support.js';

/**
 * A realtime finish whose settlement the database does not take (PostgreSQL halted under it): the finish
 * answers 503 STORE_UNAVAILABLE, and the same settlement is written again, by a later finish or in the
 * background, once the database answers: the task ends COMPLETED, charged once.
 */
describe('a realtime finish the database could not settle', () => {
  const pgsql = postgresForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const streamed = async (): Promise<{ node: TestServer; databaseUrl: string; sessionId: string; transcriptionId: string; samples: number; usedBefore: bigint }> => {
    const databaseUrl = await pgsql.freshDatabase();
    const node = await start({ databaseUrl, realtimeTiming: { supplementWaitMs: 100 } });
    stops.push(() => node.close());
    const usedBefore = BigInt((await pgsql.query<{ used: string }>(databaseUrl, 'SELECT sum(monthly_used + order_used)::text AS used FROM account', []))[0]?.used ?? '0');
    const created = await createSession(node);
    const peer = await open(socketUrl(node, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    const pcm = speech(2, 3).subarray(0, 24_000);
    peer.stream(1, pcm);
    await peer.acked(pcm.length);
    peer.ws.terminate();
    await peer.closed;
    return { node, databaseUrl, ...created, samples: pcm.length, usedBefore };
  };
  const settles = async (databaseUrl: string, taskId: string) =>
    pgsql.query(databaseUrl, `SELECT kind, count(*)::int AS n FROM ledger_entry WHERE task_id = $1 AND kind IN ('settle', 'release') GROUP BY kind`, [taskId]);
  const used = async (databaseUrl: string) => BigInt((await pgsql.query<{ used: string }>(databaseUrl, 'SELECT sum(monthly_used + order_used)::text AS used FROM account', []))[0]?.used ?? '0');

  it('a later finish settles it once the database answers (before that, every finish answers 503), charged once', async () => {
    const { node, databaseUrl, sessionId, transcriptionId, samples, usedBefore } = await streamed();
    await pgsql.server.halt();
    try {
      const failed = await node.call('POST', `/stt/realtime/sessions/${sessionId}/finish`, { json: { capturedSamples: String(samples) } });
      expect(failed.status).toBe(503);
      expect(failed.body.errorCode).toBe('SERVICE_UNAVAILABLE');
      const again = await node.call('POST', `/stt/realtime/sessions/${sessionId}/finish`, { json: { capturedSamples: String(samples) } });
      expect(again.status).toBe(503);
    } finally {
      await pgsql.server.resume();
    }
    const finished = await node.call('POST', `/stt/realtime/sessions/${sessionId}/finish`, { json: { capturedSamples: String(samples) } });
    expect(finished.status).toBe(200);
    expect(finished.body.data).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: String(samples), billableCharacters: '20' } });
    const second = await node.call('POST', `/stt/realtime/sessions/${sessionId}/finish`, { json: { capturedSamples: String(samples) } });
    expect(second.body.data).toMatchObject({ status: 'COMPLETED', usage: { billableCharacters: '20' } });
    // The background retry ran meanwhile too: still one settlement.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const task = (await node.call('GET', `/stt/transcriptions/${transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'COMPLETED', billing: { state: 'SETTLED', settledCharacters: '20' } });
    expect(await settles(databaseUrl, transcriptionId)).toEqual([{ kind: 'settle', n: 1 }]);
    expect(await used(databaseUrl)).toBe(usedBefore + 20n);
  });

  it('with no later finish, the node writes the settlement again until the database answers: the task ends COMPLETED, charged once', async () => {
    const { node, databaseUrl, sessionId, transcriptionId, samples, usedBefore } = await streamed();
    await pgsql.server.halt();
    try {
      const failed = await node.call('POST', `/stt/realtime/sessions/${sessionId}/finish`, { json: { capturedSamples: String(samples) } });
      expect(failed.status).toBe(503);
      await new Promise((resolve) => setTimeout(resolve, 500));
    } finally {
      await pgsql.server.resume();
    }
    await expect.poll(async () => (await node.call('GET', `/stt/transcriptions/${transcriptionId}`)).body.data?.status, { timeout: 20_000, interval: 200 }).toBe('COMPLETED');
    const view = (await node.call('GET', `/stt/realtime/sessions/${sessionId}`)).body.data;
    expect(view).toMatchObject({ status: 'COMPLETED', usage: { billableCharacters: '20' } });
    expect(await settles(databaseUrl, transcriptionId)).toEqual([{ kind: 'settle', n: 1 }]);
    expect(await used(databaseUrl)).toBe(usedBefore + 20n);
  });
});
