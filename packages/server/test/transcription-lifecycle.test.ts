import { beforeAll, describe, expect, it } from 'vitest';
import { idem, KEY_A, KEY_B, transcribe, upload, serverForSuite } from './support/server.js';
import { pcm, speechWav, wav } from './support/wav.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function checkBilling(b: Record<string, string>): void {
  for (const k of ['reservedCharacters', 'settledCharacters', 'releasedCharacters', 'billableCharacters', 'billableDurationMs', 'ratePerMinute']) {
    expect(b[k]).toMatch(/^(0|[1-9][0-9]*)$/);
  }
  expect(BigInt(b['reservedCharacters'] as string)).toBe(BigInt(b['settledCharacters'] as string) + BigInt(b['releasedCharacters'] as string));
  expect(b['billableCharacters']).toBe(b['settledCharacters']);
}

describe('batch transcription lifecycle', () => {
  const server = serverForSuite({ taskTiming: { queueMs: 80, processingMs: 250, reconcilingMs: 80 } });
  let uploadId: string;
  beforeAll(async () => {
    uploadId = await upload(server, speechWav());
  });

  const create = (body: Record<string, unknown>, key = idem(), account = KEY_A) =>
    server.call('POST', '/stt/transcriptions', { key: account, json: body, headers: { 'Idempotency-Key': key } });

  it('moves QUEUED -> PROCESSING -> RECONCILING -> COMPLETED, then stays', async () => {
    const r = await create({ uploadId, title: 'steps' });
    expect(r.body.data).toMatchObject({ status: 'QUEUED', modelId: 'svc_stt_v1', title: 'steps' });
    expect(r.body.data.requestId).toBe(r.headers.get('x-request-id'));
    expect(r.body.data.transcript).toBeNull();
    expect(r.body.data.billing.state).toBe('RESERVED');
    const seen: string[] = ['QUEUED'];
    for (let i = 0; i < 200; i++) {
      const g = await server.call('GET', `/stt/transcriptions/${r.body.data.transcriptionId}`);
      const status = g.body.data.status as string;
      if (seen[seen.length - 1] !== status) seen.push(status);
      if (status === 'COMPLETED') break;
      await sleep(10);
    }
    expect(seen).toEqual(['QUEUED', 'PROCESSING', 'RECONCILING', 'COMPLETED']);
    const done = await server.call('GET', `/stt/transcriptions/${r.body.data.transcriptionId}`);
    expect(done.body.data.error).toBeUndefined();
    expect(done.body.data.audioDurationMs).toBe('2600');
    expect(done.body.data.detectedLanguage).toBe('eng');
    expect(done.body.data.languageHint).toBe('auto');
    checkBilling(done.body.data.billing);
    expect(done.body.data.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '600', settledCharacters: '30', releasedCharacters: '570', billableDurationMs: '2600', planKey: 'pro' });
  });

  it('waitForCompletion returns the terminal task; a short waitTimeoutMs returns early and the task keeps running', async () => {
    const full = await create({ uploadId, waitForCompletion: true, waitTimeoutMs: 10_000 });
    expect(full.body.data.status).toBe('COMPLETED');
    expect(full.body.data.transcript.text).not.toBe('');
    const started = Date.now();
    const early = await create({ uploadId, waitForCompletion: true, waitTimeoutMs: 50 });
    expect(Date.now() - started).toBeLessThan(2000);
    expect(['QUEUED', 'PROCESSING', 'RECONCILING']).toContain(early.body.data.status);
    expect(early.body.data.transcriptionId).toMatch(/^tr_/);
    for (let i = 0; i < 100; i++) {
      const g = await server.call('GET', `/stt/transcriptions/${early.body.data.transcriptionId}`);
      if (g.body.data.status === 'COMPLETED') return;
      await sleep(20);
    }
    throw new Error('task did not keep running to completion');
  });

  it('replays the same task for the same key and body, refuses another body with 409', async () => {
    const key = idem();
    const first = await create({ uploadId, title: 'idem' }, key);
    const again = await create({ title: 'idem', uploadId }, key);
    expect(again.status).toBe(200);
    expect(again.body.data.transcriptionId).toBe(first.body.data.transcriptionId);
    expect(again.body.data.requestId).toBe(first.body.data.requestId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const conflict = await create({ uploadId, title: 'other' }, key);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: -1, errorCode: 'IDEMPOTENCY_CONFLICT' });
    // Keys are per account: another account may use the same key.
    const other = await create({ uploadId: await upload(server, speechWav(), KEY_B), title: 'idem' }, key, KEY_B);
    expect(other.body.data.transcriptionId).not.toBe(first.body.data.transcriptionId);
  });

  it('does not bind a key to a refused create', async () => {
    const key = idem();
    expect((await create({ uploadId, options: { maxSpeakerCount: 0 } }, key)).status).toBe(400);
    expect((await create({ uploadId }, key)).body.code).toBe(1);
  });

  it('lists batch tasks newest first with page, pageSize, total and totalPage', async () => {
    const list = await server.call('GET', '/stt/transcriptions?page=1&pageSize=2');
    expect(list.body.data).toMatchObject({ page: 1, pageSize: 2 });
    const total = list.body.data.total as number;
    expect(list.body.data.totalPage).toBe(Math.ceil(total / 2));
    expect(list.body.data.items).toHaveLength(2);
    const item = list.body.data.items[0];
    expect(Object.keys(item).sort()).toEqual(['audioDurationMs', 'characters', 'detectedLanguage', 'modelId', 'status', 'timestamps', 'title', 'transcriptionId']);
    const all = await server.call('GET', '/stt/transcriptions?pageSize=100');
    expect(all.body.data.items.map((i: any) => i.transcriptionId).slice(0, 2)).toEqual(list.body.data.items.map((i: any) => i.transcriptionId));
    const defaults = await server.call('GET', '/stt/transcriptions');
    expect(defaults.body.data).toMatchObject({ page: 1, pageSize: 20 });
    const past = await server.call('GET', `/stt/transcriptions?page=${list.body.data.totalPage + 1}&pageSize=2`);
    expect(past.body.data.items).toEqual([]);
    for (const q of ['page=0', 'pageSize=0', 'pageSize=101', 'page=x']) {
      const r = await server.call('GET', `/stt/transcriptions?${q}`);
      expect(r.status).toBe(400);
      expect(r.body.details.violations[0].field).toBe(q.split('=')[0]);
    }
    expect((await server.call('GET', '/stt/transcriptions?pageSize=100')).body.code).toBe(1);
  });

  it('never shows a task to another account', async () => {
    const r = await create({ uploadId });
    const foreign = await server.call('GET', `/stt/transcriptions/${r.body.data.transcriptionId}`, { key: KEY_B });
    expect(foreign.status).toBe(404);
    expect(foreign.body.errorCode).toBe('NOT_FOUND');
    const listB = await server.call('GET', '/stt/transcriptions?pageSize=100', { key: KEY_B });
    expect(listB.body.data.items.map((i: any) => i.transcriptionId)).not.toContain(r.body.data.transcriptionId);
  });

  it('fails a rejected entity category at run time with INPUT_INVALID and releases the reservation', async () => {
    // Earlier tests' tasks may still be settling; wait until nothing is reserved.
    for (let i = 0; i < 300; i++) {
      if ((await server.call('GET', '/stt/capabilities')).body.data.account.balances.reservedCharacters === '0') break;
      await sleep(10);
    }
    const before = (await server.call('GET', '/stt/capabilities')).body.data.account.balances;
    const data = await transcribe(server, { uploadId, options: { entityCategories: ['pii', 'favourite_colour'] } });
    expect(data.status).toBe('FAILED');
    expect(data.error).toMatchObject({ errorCode: 'INPUT_INVALID', retryable: false, action: 'FIX_INPUT', requestId: data.requestId });
    expect(data.error.message).toContain('favourite_colour');
    expect(data.transcript).toBeNull();
    checkBilling(data.billing);
    expect(data.billing).toMatchObject({ state: 'RELEASED', settledCharacters: '0', releasedCharacters: data.billing.reservedCharacters });
    const after = (await server.call('GET', '/stt/capabilities')).body.data.account.balances;
    expect(after.monthlyCharacters.used).toBe(before.monthlyCharacters.used);
  });
});

describe('reservation and concurrency', () => {
  const server = serverForSuite({ taskTiming: { queueMs: 1, processingMs: 1500, reconcilingMs: 1 }, accountOverrides: { [KEY_B]: { totalMonthlyChars: 0, totalOrderChars: 1000 } } });

  it('concurrent creates with one key make one task and one reservation', async () => {
    const uploadId = await upload(server, speechWav());
    const key = idem();
    const before = (await server.call('GET', '/stt/capabilities')).body.data.account.balances.reservedCharacters;
    const results = await Promise.all(
      Array.from({ length: 12 }, () => server.call('POST', '/stt/transcriptions', { json: { uploadId }, headers: { 'Idempotency-Key': key } })),
    );
    const ids = new Set(results.map((r) => r.body.data.transcriptionId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => r.headers.get('idempotent-replayed') === 'true')).toHaveLength(11);
    const reserved = (await server.call('GET', '/stt/capabilities')).body.data.account.balances.reservedCharacters;
    expect(BigInt(reserved) - BigInt(before)).toBe(600n);
    const list = await server.call('GET', '/stt/transcriptions?pageSize=100');
    expect(list.body.data.items.filter((i: any) => ids.has(i.transcriptionId))).toHaveLength(1);
  });

  it('settles exactly once and moves the characters into usage', async () => {
    const uploadId = await upload(server, wav([pcm([{ tone: 300, ms: 61_000, amp: 0.3 }])]));
    // Let the previous test's task settle first, so only this task moves the counters.
    for (let i = 0; i < 300; i++) {
      if ((await server.call('GET', '/stt/capabilities')).body.data.account.balances.reservedCharacters === '0') break;
      await sleep(10);
    }
    const info0 = (await server.call('GET', '/user/info')).body.data.benefit.usedMonthlyChars as number;
    const data = await transcribe(server, { uploadId });
    expect(data.billing).toMatchObject({ reservedCharacters: '1200', settledCharacters: '610', releasedCharacters: '590', billableDurationMs: '61000' });
    const info1 = (await server.call('GET', '/user/info')).body.data.benefit.usedMonthlyChars as number;
    expect(info1 - info0).toBe(610);
    const caps = (await server.call('GET', '/stt/capabilities')).body.data.account.balances;
    expect(caps.reservedCharacters).toBe('0');
  });

  it('refuses a create the balance cannot cover with INSUFFICIENT_CHARACTERS (402); order characters count', async () => {
    const short = await upload(server, speechWav(), KEY_B);
    const ok = await server.call('POST', '/stt/transcriptions', { key: KEY_B, json: { uploadId: short }, headers: { 'Idempotency-Key': idem() } });
    expect(ok.body.code).toBe(1);
    const refused = await server.call('POST', '/stt/transcriptions', { key: KEY_B, json: { uploadId: short, title: 'x' }, headers: { 'Idempotency-Key': idem() } });
    expect(refused.status).toBe(402);
    expect(refused.body.errorCode).toBe('INSUFFICIENT_CHARACTERS');
    expect(refused.body.details).toEqual({ requiredCharacters: '600', availableCharacters: '400' });
  });
});
