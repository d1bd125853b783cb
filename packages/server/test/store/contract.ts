import { afterEach, describe, expect, it, vi } from 'vitest';
import { isExistingKey, isRefusal, type ExistingKey, type LedgerRow, type NewTask, type Refusal, type SeedInput, type Store, type TaskRow, type UploadRow, type VoiceRow, type DeliveryRow } from '../../src/store/store.js';

/**
 * The Store contract (src/store/store.ts): every engine runs this suite. `open` gives a fresh store;
 * `reopen`, when the engine keeps state, closes it and opens it again on the same place (the caller
 * seeds it again, as a start does).
 */
export interface StoreUnderTest {
  readonly open: () => Promise<Store>;
  readonly reopen?: (store: Store) => Promise<Store>;
  /**
   * How the engine answers the realtime spending guard: 'sync' (a plain bigint: memory, journal; the
   * default) or 'async' (a Promise: a database engine). The suite awaits it either way.
   */
  readonly spending?: 'sync' | 'async';
  /**
   * Several nodes share the engine (PostgreSQL): recoverInterrupted fails nothing there, since running
   * tasks belong to the nodes whose leases they hold.
   */
  readonly shared?: boolean;
}

const A = 'acct_aaaaaaaaaaaaaaaa';
const B = 'acct_bbbbbbbbbbbbbbbb';
const T0 = 1_700_000_000_000;

function ledger(accountId: string, orderTotal: bigint, monthlyTotal = 0n): LedgerRow {
  return { accountId, planKey: 'pro', periodEndsAt: T0 + 30 * 86_400_000, chars: { monthlyTotal, monthlyUsed: 0n, orderTotal, orderUsed: 0n, reserved: 0n } };
}

function seedInput(aChars = 1000n, bChars = 1000n): SeedInput {
  const system: VoiceRow = { id: '100001', ownerId: null, name: 'Aria', type: 'system', feature: 'tts', channel: 'system', fileCount: 0, totalFileSize: 0 };
  const web = (id: string, ownerId: string): VoiceRow => ({ id, ownerId, name: 'My website voice', type: 'clone', feature: 'tts', channel: 'web', fileCount: 3, totalFileSize: 1 });
  return {
    ledgers: [ledger(A, aChars), ledger(B, bChars)],
    voices: [system, web('100002', A), web('100003', B)],
    designs: [{ designId: 'design-1-01', accountId: A }, { designId: 'design-1-02', accountId: A }, { designId: 'design-2-01', accountId: B }],
  };
}

let taskSeq = 0;
function newTask(ownerId: string, kind: 'batch' | 'realtime' = 'batch', at = T0): NewTask {
  taskSeq++;
  return {
    id: `tr_contract_${taskSeq}`, ownerId, kind, modelId: 'm', title: `t${taskSeq}`, languageHint: 'auto', requestId: `req_${taskSeq}`,
    createdAt: at, status: kind === 'batch' ? 'QUEUED' : 'PROCESSING', detectedLanguage: null, audioDurationMs: 0n, transcript: null,
    updatedAt: at, completedAt: null,
  };
}

/** The row of an answer that must be one (a refusal or 'already' fails the test, saying what it was). */
function row<T extends object>(value: T | 'already' | 'lost-lease'): Exclude<T, Refusal | ExistingKey> {
  if (value === 'already' || value === 'lost-lease' || isRefusal(value) || isExistingKey(value)) throw new Error(`expected a row, got ${JSON.stringify(value, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
  return value as Exclude<T, Refusal | ExistingKey>;
}

const transcript = { text: 'hi', languageCode: null, languageConfidence: null, speakers: [], segments: [], channelResults: [], entities: [], revisionStatus: 'NOT_REQUESTED', revisedText: null, revisionErrorCode: null } as unknown as NonNullable<TaskRow['transcript']>;

export function describeStoreContract(name: string, engine: StoreUnderTest): void {
  describe(`Store contract: ${name}`, () => {
    const opened: Store[] = [];
    const open = async (seed: SeedInput = seedInput()): Promise<Store> => {
      const store = await engine.open();
      opened.push(store);
      await store.seed(seed);
      return store;
    };
    afterEach(async () => {
      for (const store of opened.splice(0)) await store.close();
    });

    describe('seed and ledgers', () => {
      it('creates what is missing and keeps what is there: seeding again changes nothing', async () => {
        const store = await open();
        expect(await store.accounts.ledger(A)).toEqual(ledger(A, 1000n));
        expect(await store.accounts.ledger('acct_none')).toBeUndefined();
        await store.seed(seedInput(5n, 5n));
        expect((await store.accounts.ledger(A))?.chars.orderTotal).toBe(1000n);
        expect((await store.voices.listFor(A)).map((v) => v.id)).toEqual(['100001', '100002']);
      });

      it('a ledger read is a copy: later changes do not reach it', async () => {
        const store = await open();
        const before = await store.accounts.ledger(A);
        row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        expect(before?.chars.reserved).toBe(0n);
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(600n);
      });
    });

    describe('voices', () => {
      it('lists system voices and the account\'s own in creation order; new ids follow the seeded ones', async () => {
        const store = await open();
        const made = row(await store.voices.createClone(A, 5, { name: 'mine', type: 'clone', feature: 'tts', channel: 'api', fileCount: 1, totalFileSize: 10 }));
        expect(made).toMatchObject({ id: '100004', ownerId: A, name: 'mine' });
        expect((await store.voices.listFor(A)).map((v) => v.id)).toEqual(['100001', '100002', '100004']);
        expect((await store.voices.listFor(B)).map((v) => v.id)).toEqual(['100001', '100003']);
        expect(await store.voices.countOwned(A)).toBe(2);
      });

      it('refuses a clone past the quota with the counts, and creates nothing', async () => {
        const store = await open();
        expect(await store.voices.createClone(A, 1, { name: 'x', type: 'clone', feature: 'tts', channel: 'api', fileCount: 1, totalFileSize: 1 })).toEqual({ refused: 'quota', used: 1, limit: 1 });
        expect(await store.voices.countOwned(A)).toBe(1);
      });

      it('saves each design once, only for its account, within the quota', async () => {
        const store = await open();
        expect(await store.voices.saveDesign(B, 5, 'design-1-01', 'n')).toEqual({ refused: 'unknown-design' });
        expect(await store.voices.saveDesign(A, 5, 'design-9-99', 'n')).toEqual({ refused: 'unknown-design' });
        expect(await store.voices.saveDesign(A, 1, 'design-1-01', 'n')).toEqual({ refused: 'quota', used: 1, limit: 1 });
        const saved = row(await store.voices.saveDesign(A, 5, 'design-1-01', 'n'));
        expect(saved).toMatchObject({ ownerId: A, type: 'design', channel: 'api', name: 'n' });
        expect(await store.voices.saveDesign(A, 5, 'design-1-01', 'n')).toEqual({ refused: 'unknown-design' });
      });

      it('renames only an owned voice and replaces the row', async () => {
        const store = await open();
        const before = (await store.voices.listFor(A)).find((v) => v.id === '100002');
        expect(await store.voices.rename(B, '100002', 'theirs')).toBeUndefined();
        expect(await store.voices.rename(A, '100001', 'system')).toBeUndefined();
        expect(await store.voices.rename(A, '100002', 'renamed')).toMatchObject({ id: '100002', name: 'renamed' });
        expect(before?.name).toBe('My website voice');
        expect((await store.voices.listFor(A)).map((v) => v.name)).toEqual(['Aria', 'renamed']);
      });
    });

    describe('covers', () => {
      it('deletes each id once and says which it deleted now', async () => {
        const store = await open();
        expect([...(await store.covers.deleteOwned(A, ['c1', 'c2']))]).toEqual(['c1', 'c2']);
        expect([...(await store.covers.deleteOwned(A, ['c2', 'c3']))]).toEqual(['c3']);
        expect([...(await store.covers.deletedAmong(['c1', 'c4', 'c3']))].sort()).toEqual(['c1', 'c3']);
      });
    });

    describe('uploads and the storage quota', () => {
      const upload = (id: string, ownerId: string, sizeBytes: number): UploadRow => ({ id, ownerId, filename: `${id}.wav`, contentType: 'audio/wav', sizeBytes, createdAt: T0 });
      const bytesOf = (n: number, fill: number): Buffer => Buffer.alloc(n, fill);

      it('keeps an upload and its bytes for its owner only, and counts them', async () => {
        const store = await open();
        const made = row(await store.uploads.create(upload('up_1', A, 300), bytesOf(300, 7), 1000));
        expect(made).toEqual(upload('up_1', A, 300));
        expect(await store.uploads.get(A, 'up_1')).toEqual(made);
        expect(await store.uploads.get(B, 'up_1')).toBeUndefined();
        expect(await store.uploads.get(A, 'up_none')).toBeUndefined();
        expect((await store.uploads.bytes('up_1'))?.equals(bytesOf(300, 7))).toBe(true);
        expect(await store.uploads.usedBytes(A)).toBe(300);
        expect(await store.uploads.usedBytes(B)).toBe(0);
      });

      it('refuses past the quota with the counts, uploads and holds together, and writes nothing', async () => {
        const store = await open();
        row(await store.uploads.create(upload('up_1', A, 600), bytesOf(600, 1), 1000));
        expect(await store.uploads.hold(A, 'hold_1', 300, 1000)).toBeUndefined();
        expect(await store.uploads.create(upload('up_2', A, 101), bytesOf(101, 2), 1000)).toEqual({ refused: 'storage', used: 900, requested: 101, limit: 1000 });
        expect(await store.uploads.hold(A, 'hold_2', 101, 1000)).toEqual({ refused: 'storage', used: 900, requested: 101, limit: 1000 });
        expect(await store.uploads.get(A, 'up_2')).toBeUndefined();
        expect(await store.uploads.bytes('up_2')).toBeUndefined();
        expect(await store.uploads.usedBytes(A)).toBe(900);
        // Exactly at the quota is allowed; another account's quota is its own.
        row(await store.uploads.create(upload('up_3', A, 100), bytesOf(100, 3), 1000));
        row(await store.uploads.create(upload('up_4', B, 1000), bytesOf(1000, 4), 1000));
        expect(await store.uploads.usedBytes(A)).toBe(1000);
      });

      it('deletes an owned upload once and frees its share; a foreign delete changes nothing', async () => {
        const store = await open();
        row(await store.uploads.create(upload('up_1', A, 400), bytesOf(400, 1), 1000));
        expect(await store.uploads.delete(B, 'up_1')).toBeUndefined();
        expect(await store.uploads.usedBytes(A)).toBe(400);
        expect(await store.uploads.delete(A, 'up_1')).toEqual(upload('up_1', A, 400));
        expect(await store.uploads.delete(A, 'up_1')).toBeUndefined();
        expect(await store.uploads.get(A, 'up_1')).toBeUndefined();
        expect(await store.uploads.bytes('up_1')).toBeUndefined();
        expect(await store.uploads.usedBytes(A)).toBe(0);
      });

      it('releases a hold once; releasing an unknown hold frees nothing', async () => {
        const store = await open();
        expect(await store.uploads.hold(A, 'hold_1', 250, 1000)).toBeUndefined();
        expect(await store.uploads.hold(A, 'hold_2', 250, 1000)).toBeUndefined();
        await store.uploads.releaseHold('hold_1');
        await store.uploads.releaseHold('hold_1');
        await store.uploads.releaseHold('hold_none');
        expect(await store.uploads.usedBytes(A)).toBe(250);
        await store.uploads.releaseHold('hold_2');
        expect(await store.uploads.usedBytes(A)).toBe(0);
      });

      it('concurrent creates near the quota never pass it together', async () => {
        const store = await open();
        const outcomes = await Promise.all([0, 1, 2, 3, 4].map((i) => store.uploads.create(upload(`up_c${i}`, A, 300), bytesOf(300, i), 1000)));
        expect(outcomes.filter((o) => !isRefusal(o))).toHaveLength(3);
        expect(await store.uploads.usedBytes(A)).toBe(900);
      });
    });

    describe('the webhook outbox', () => {
      const notifying = (url = 'https://hooks.example/done'): NewTask => ({ ...newTask(A), options: { notify: true, notifyUrl: url } as unknown as NonNullable<TaskRow['options']> });
      const attempt = (n: number, status?: number) => ({ attempt: n, at: T0 + n, ...(status !== undefined ? { status } : { error: 'refused' }) });

      it('ending a task that asks for it adds one delivery, in the same step; others add none', async () => {
        const store = await open(seedInput(100_000n));
        let heard = 0;
        store.events.onDeliveryAdded(() => heard++);
        const settled = row(await store.createBatchTask({ task: notifying(), durationMs: 1n }));
        const failed = row(await store.createBatchTask({ task: notifying('https://hooks.example/failed'), durationMs: 1n }));
        const quiet = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const live = row(await store.openRealtime({ task: { ...newTask(A, 'realtime'), options: notifying().options }, minimum: 10n }));
        row(await store.settleBatch(settled.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 5 }));
        row(await store.failTask(failed.id, { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' }, T0 + 6));
        row(await store.settleBatch(quiet.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 7 }));
        row(await store.failTask(live.id, { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' }, T0 + 8));
        // A second ending is 'already' and adds nothing.
        expect(await store.settleBatch(settled.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 9 })).toBe('already');
        expect(await store.failTask(failed.id, { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' }, T0 + 9)).toBe('already');
        const deliveries = await store.outbox.list();
        expect(deliveries.map((d) => [d.taskId, d.url, d.createdAt, d.outcome, d.attempts.length])).toEqual([
          [settled.id, 'https://hooks.example/done', T0 + 5, 'pending', 0],
          [failed.id, 'https://hooks.example/failed', T0 + 6, 'pending', 0],
        ]);
        expect(new Set(deliveries.map((d) => d.eventId)).size).toBe(2);
        expect(heard).toBe(2);
      });

      it('a claim holds a delivery until its lease passes; attempts are recorded in order; an ended delivery is never claimed', async () => {
        const store = await open(seedInput(100_000n));
        for (let i = 0; i < 3; i++) {
          const t = row(await store.createBatchTask({ task: notifying(`https://hooks.example/${i}`), durationMs: 1n }));
          row(await store.settleBatch(t.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + i }));
        }
        const first = await store.outbox.claimDue(T0 + 100, 2, 1_000);
        expect(first.map((d) => d.url)).toEqual(['https://hooks.example/0', 'https://hooks.example/1']);
        const rest = await store.outbox.claimDue(T0 + 100, 5, 1_000);
        expect(rest.map((d) => d.url)).toEqual(['https://hooks.example/2']);
        expect(await store.outbox.claimDue(T0 + 1_099, 5, 1_000)).toEqual([]);
        const [a, b] = first as [DeliveryRow, DeliveryRow];
        expect(await store.outbox.recordAttempt(a.eventId, attempt(1, 500), 'pending', T0 + 5_000)).toMatchObject({ outcome: 'pending', attempts: [attempt(1, 500)] });
        expect(await store.outbox.recordAttempt(a.eventId, attempt(2, 204), 'delivered', T0 + 5_000)).toMatchObject({ outcome: 'delivered', attempts: [attempt(1, 500), attempt(2, 204)] });
        expect(await store.outbox.recordAttempt(b.eventId, attempt(1), 'pending', T0 + 2_000)).toMatchObject({ outcome: 'pending' });
        // b's sender went away: once its hold has passed, another sender claims it with its attempts so far.
        const again = await store.outbox.claimDue(T0 + 2_001, 5, 1_000);
        expect(again.map((d) => [d.eventId, d.attempts.length])).toEqual([[b.eventId, 1], [(rest[0] as DeliveryRow).eventId, 0]]);
        expect(await store.outbox.claimDue(T0 + 100_000, 5, 1_000)).not.toContainEqual(expect.objectContaining({ eventId: a.eventId }));
        await expect(store.outbox.recordAttempt('ev_none', attempt(1, 204), 'delivered', 0)).rejects.toMatchObject({ name: 'StoreError', code: 'DELIVERY_NOT_FOUND' });
      });
    });

    describe('batch tasks and money', () => {
      it('createBatchTask reserves the quote (whole minutes) and creates the task QUEUED with its key', async () => {
        const store = await open(seedInput(10_000n));
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 61_000n, idempotency: { scope: `${A}/transcriptions`, key: 'k1', bodyHash: 'h', requestId: 'r' } }));
        expect(task.billing).toEqual({ state: 'RESERVED', planKey: 'pro', reserved: 1200n, settled: 0n, released: 0n, billableDurationMs: 0n });
        expect(task.status).toBe('QUEUED');
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(1200n);
        expect(await store.tasks.get(task.id)).toEqual(task);
        expect(await store.idempotency.find(`${A}/transcriptions`, 'k1')).toEqual({ scope: `${A}/transcriptions`, key: 'k1', bodyHash: 'h', taskId: task.id, requestId: 'r' });
        expect(await store.idempotency.find(`${A}/transcriptions`, 'k2')).toBeUndefined();
      });

      it('refuses a quote past the balance with nothing written', async () => {
        const store = await open(seedInput(1000n));
        const t = newTask(A);
        expect(await store.createBatchTask({ task: t, durationMs: 120_000n, idempotency: { scope: 's', key: 'k', bodyHash: 'h', requestId: 'r' } })).toEqual({ refused: 'insufficient', required: 1200n, available: 1000n });
        expect(await store.tasks.get(t.id)).toBeUndefined();
        expect(await store.idempotency.find('s', 'k')).toBeUndefined();
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(0n);
      });

      it('settleBatch charges whole seconds, releases the rest, draws monthly before order, once', async () => {
        const store = await open({ ...seedInput(), ledgers: [ledger(A, 1000n, 5n), ledger(B, 1000n)] });
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 2_500n }));
        const settled = row(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 2_500n, now: T0 + 5 }));
        expect(settled.billing).toEqual({ state: 'SETTLED', planKey: 'pro', reserved: 600n, settled: 30n, released: 570n, billableDurationMs: 2_500n });
        expect(settled).toMatchObject({ status: 'COMPLETED', updatedAt: T0 + 5, completedAt: T0 + 5 });
        expect((await store.accounts.ledger(A))?.chars).toEqual({ monthlyTotal: 5n, monthlyUsed: 5n, orderTotal: 1000n, orderUsed: 25n, reserved: 0n });
        expect(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 2_500n, now: T0 + 6 })).toBe('already');
        expect(await store.failTask(task.id, { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' }, T0 + 7)).toBe('already');
        expect((await store.accounts.ledger(A))?.chars.orderUsed).toBe(25n);
        // The row read before the settlement is as it was: rows are replaced, never changed.
        expect(task.billing.state).toBe('RESERVED');
      });

      it('failTask releases the whole reservation, FAILED with the error, once', async () => {
        const store = await open();
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const error = { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY' as const, requestId: 'r' };
        const failed = row(await store.failTask(task.id, error, T0 + 9));
        expect(failed).toMatchObject({ status: 'FAILED', error, completedAt: T0 + 9, billing: { state: 'RELEASED', reserved: 600n, released: 600n, settled: 0n } });
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(0n);
        expect(await store.failTask(task.id, error, T0 + 10)).toBe('already');
      });

      it('update moves status (stamping updatedAt, completedAt when terminal) and content; unknown ids throw TASK_NOT_FOUND', async () => {
        const store = await open();
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const moved = await store.tasks.update(task.id, { status: 'RECONCILING', transcript, detectedLanguage: 'en', audioDurationMs: 10n }, T0 + 3);
        expect(moved).toMatchObject({ status: 'RECONCILING', updatedAt: T0 + 3, completedAt: null, detectedLanguage: 'en', audioDurationMs: 10n, transcript });
        expect((await store.tasks.update(task.id, { detectedLanguage: 'de' }, T0 + 4)).updatedAt).toBe(T0 + 3);
        await expect(store.tasks.update('tr_missing', { status: 'PROCESSING' }, T0)).rejects.toMatchObject({ name: 'StoreError', code: 'TASK_NOT_FOUND' });
      });

      it('keeps options, transcripts and errors exactly, strings with U+0000 and unpaired surrogates included', async () => {
        const store = await open();
        const odd = 'a\u0000b\ud800c\udfff';
        const options = { vocabularyHints: [odd], separateSpeakers: false } as unknown as NonNullable<TaskRow['options']>;
        const task = row(await store.createBatchTask({ task: { ...newTask(A), options }, durationMs: 1n }));
        await store.tasks.update(task.id, { transcript: { ...transcript, text: odd } }, T0);
        const error = { errorCode: 'INTERNAL', message: odd, retryable: true, action: 'RETRY' as const, requestId: 'r' };
        await store.failTask(task.id, error, T0 + 1);
        const kept = await store.tasks.get(task.id);
        expect(kept?.options).toEqual(options);
        expect(kept?.transcript?.text).toBe(odd);
        expect(kept?.error).toEqual(error);
      });

      it('pages an owner\'s tasks newest first', async () => {
        const store = await open(seedInput(100_000n));
        const ids: string[] = [];
        for (let i = 0; i < 5; i++) ids.push(row(await store.createBatchTask({ task: newTask(A), durationMs: 1n })).id);
        row(await store.createBatchTask({ task: newTask(B), durationMs: 1n }));
        const first = await store.tasks.page(A, 1, 2);
        expect(first.total).toBe(5);
        expect(first.items.map((t) => t.id)).toEqual([ids[4], ids[3]]);
        expect((await store.tasks.page(A, 3, 2)).items.map((t) => t.id)).toEqual([ids[0]]);
        expect((await store.tasks.page(A, 4, 2)).items).toEqual([]);
        expect((await store.tasks.page('acct_none', 1, 2)).total).toBe(0);
      });

      it('events: a listener hears the row as it stands, then every change of its task until it unsubscribes', async () => {
        const store = await open();
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const heard: string[] = [];
        const off = store.events.onTaskChanged(task.id, (r) => heard.push(r.status));
        // Never told before onTaskChanged returned (a caller may need its unsubscribe in the listener).
        expect(heard).toEqual([]);
        await until(() => heard.length === 1);
        await store.tasks.update(task.id, { status: 'PROCESSING' }, T0 + 1);
        await store.settleBatch(task.id, { status: 'PARTIAL', durationMs: 1n, now: T0 + 2 });
        off();
        await store.tasks.update(task.id, { detectedLanguage: 'x' }, T0 + 3);
        expect(heard).toEqual(['QUEUED', 'PROCESSING', 'PARTIAL']);
      });

      it('events: a change made right after subscribing is heard, and a second listener of a watched task starts where it stands', async () => {
        const store = await open();
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const first: string[] = [];
        const offFirst = store.events.onTaskChanged(task.id, (r) => first.push(r.status));
        // No wait for the first row: the change races it.
        await store.tasks.update(task.id, { status: 'PROCESSING' }, T0 + 1);
        await until(() => first.at(-1) === 'PROCESSING');
        // Whatever came first, nothing goes back and nothing repeats.
        expect([['PROCESSING'], ['QUEUED', 'PROCESSING']]).toContainEqual(first);
        const second: string[] = [];
        const offSecond = store.events.onTaskChanged(task.id, (r) => second.push(r.status));
        await until(() => second.length === 1);
        await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 1n, now: T0 + 2 });
        await until(() => second.length === 2);
        expect(second).toEqual(['PROCESSING', 'COMPLETED']);
        expect(first.slice(-2)).toEqual(['PROCESSING', 'COMPLETED']);
        offFirst();
        offSecond();
      });
    });

    describe('realtime and money', () => {
      it('openRealtime refuses below the minimum and creates an ACCRUING task otherwise', async () => {
        const store = await open(seedInput(9n));
        const t = newTask(A, 'realtime');
        expect(await store.openRealtime({ task: t, minimum: 10n })).toEqual({ refused: 'insufficient', required: 10n, available: 9n });
        expect(await store.tasks.get(t.id)).toBeUndefined();
        const other = row(await store.openRealtime({ task: newTask(B, 'realtime'), minimum: 10n }));
        expect(other.billing).toEqual({ state: 'ACCRUING', planKey: 'pro', reserved: 0n, settled: 0n, released: 0n, billableDurationMs: 0n });
      });

      it(`accrueRealtime answers ${engine.spending === 'async' ? 'with a Promise of' : 'synchronously with'} the limit in whole seconds and reserves what it grants`, async () => {
        const store = await open(seedInput(25n));
        const task = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        const answer = store.accrueRealtime(task.id, 320n);
        expect(answer instanceof Promise).toBe(engine.spending === 'async');
        const limit = await answer;
        expect(limit).toBe(32_000n);
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(10n);
        expect(await store.accrueRealtime(task.id, 16_001n)).toBe(32_000n);
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(20n);
        // Past the limit only the limit is reserved.
        expect(await store.accrueRealtime(task.id, 99_000n)).toBe(32_000n);
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(20n);
      });

      it('two sessions of one account share the balance: what one reserved the other cannot have', async () => {
        const store = await open(seedInput(30n));
        const a = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        const b = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        expect(await store.accrueRealtime(a.id, 24_000n)).toBe(48_000n);
        expect(await store.accrueRealtime(b.id, 64_000n)).toBe(16_000n);
        expect(await store.accrueRealtime(a.id, 99_000n)).toBe(32_000n);
        expect((await store.accounts.ledger(A))?.chars).toMatchObject({ reserved: 30n });
      });

      it('settleRealtime charges the received duration once; failTask of a session releases its reservation', async () => {
        const store = await open(seedInput(100n));
        const a = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        await store.accrueRealtime(a.id, 24_000n);
        const settled = row(await store.settleRealtime(a.id, { status: 'COMPLETED', durationMs: 1_500n, transcript, detectedLanguage: null, now: T0 + 1 }));
        expect(settled).toMatchObject({ status: 'COMPLETED', audioDurationMs: 1_500n, transcript, billing: { state: 'SETTLED', reserved: 20n, settled: 20n, released: 0n, billableDurationMs: 1_500n } });
        expect(await store.settleRealtime(a.id, { status: 'COMPLETED', durationMs: 1_500n, transcript, detectedLanguage: null, now: T0 + 2 })).toBe('already');
        const b = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        await store.accrueRealtime(b.id, 16_000n);
        const failed = row(await store.failTask(b.id, { errorCode: 'RECOGNIZER_UNAVAILABLE', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' }, T0 + 3));
        expect(failed.billing).toMatchObject({ state: 'RELEASED', reserved: 10n, released: 10n, settled: 0n });
        expect((await store.accounts.ledger(A))?.chars).toMatchObject({ orderUsed: 20n, reserved: 0n });
      });
    });

    describe('nodes and where realtime sessions live', () => {
      const node = (id: string) => ({ id, internalUrl: `http://127.0.0.1:1/${id}`, publicUrl: 'http://lb.example' });
      const orphaned = (task: TaskRow) => ({ errorCode: 'INTERNAL', message: 'node gone', retryable: true, action: 'RETRY' as const, requestId: task.requestId });

      it('registers, beats, drains and leaves; ages are the store\'s', async () => {
        const store = await open();
        await store.nodes.register(node('n1'));
        await store.nodes.register(node('n2'));
        await store.nodes.setDraining('n2');
        const listed = await store.nodes.list();
        expect(listed.map((n) => [n.id, n.internalUrl, n.publicUrl, n.draining])).toEqual([
          ['n1', 'http://127.0.0.1:1/n1', 'http://lb.example', false],
          ['n2', 'http://127.0.0.1:1/n2', 'http://lb.example', true],
        ]);
        for (const n of listed) expect(n.heartbeatAgeMs).toBeGreaterThanOrEqual(0);
        await new Promise((resolve) => setTimeout(resolve, 60));
        await store.nodes.heartbeat('n1', node('n1'));
        const [n1, n2] = await store.nodes.list();
        expect(n1?.heartbeatAgeMs).toBeLessThan(n2?.heartbeatAgeMs as number);
        expect(n2?.heartbeatAgeMs).toBeGreaterThanOrEqual(50);
        await store.nodes.leave('n2');
        expect((await store.nodes.list()).map((n) => n.id)).toEqual(['n1']);
        // A node that left and beats again is entered again (it was only thought gone).
        await store.nodes.heartbeat('n2', node('n2'));
        expect((await store.nodes.list()).map((n) => n.id)).toEqual(['n1', 'n2']);
      });

      it('hands out one socket token secret', async () => {
        const store = await open();
        const secret = await store.nodes.socketTokenSecret();
        expect(secret.length).toBe(32);
        expect((await store.nodes.socketTokenSecret()).equals(secret)).toBe(true);
      });

      it('openRealtime records the session\'s node and refuses past the open-session limit; closed or ended sessions do not count', async () => {
        const store = await open(seedInput(10_000n));
        await store.nodes.register(node('n1'));
        const place = (id: string, nodeId = 'n1') => ({ id, nodeId, maxOpen: 2 });
        const a = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_1') }));
        row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_2', 'n2') }));
        const refusedTask = newTask(A, 'realtime');
        expect(await store.openRealtime({ task: refusedTask, minimum: 10n, session: place('rs_3') })).toEqual({ refused: 'sessions', open: 2, limit: 2 });
        expect(await store.tasks.get(refusedTask.id)).toBeUndefined();
        expect(await store.nodes.session('rs_3')).toBeUndefined();
        // Another account has its own count.
        row(await store.openRealtime({ task: newTask(B, 'realtime'), minimum: 10n, session: place('rs_b') }));
        expect(await store.nodes.openSessions(A)).toBe(2);
        const held = await store.nodes.session('rs_1');
        expect(held).toMatchObject({ id: 'rs_1', taskId: a.id, accountId: A, nodeId: 'n1', node: { id: 'n1', internalUrl: 'http://127.0.0.1:1/n1' } });
        expect((await store.nodes.session('rs_2'))?.node).toBeUndefined();
        // A session taken over by another node (the live state) is recorded as that node's.
        await store.nodes.moveSession('rs_2', 'n1');
        expect(await store.nodes.session('rs_2')).toMatchObject({ id: 'rs_2', nodeId: 'n1', node: { id: 'n1' } });
        await store.nodes.moveSession('rs_unknown', 'n1');
        expect(await store.nodes.session('rs_unknown')).toBeUndefined();
        await store.nodes.closeSession('rs_2');
        expect(await store.nodes.openSessions(A)).toBe(1);
        row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_4') }));
        expect(isRefusal(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_5') }))).toBe(true);
        await store.settleRealtime(a.id, { status: 'COMPLETED', durationMs: 0n, transcript, detectedLanguage: null, now: T0 });
        expect(await store.nodes.openSessions(A)).toBe(1);
        row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_6') }));
      });

      it('openRealtime keeps its Idempotency-Key with the task and session; a taken key answers with it before any refusal, writing nothing', async () => {
        const store = await open(seedInput(10_000n));
        const k = { scope: `${A}/realtime`, key: 'rk1', bodyHash: 'h', requestId: 'r1' };
        const place = (id: string) => ({ id, nodeId: 'n1', maxOpen: 1 });
        const first = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_k1'), idempotency: k }));
        const kept = { ...k, taskId: first.id, sessionId: 'rs_k1' };
        expect(await store.idempotency.find(k.scope, k.key)).toEqual(kept);
        // The account is at its limit (maxOpen 1): the key still answers, for the same body or another.
        const again = newTask(A, 'realtime');
        expect(await store.openRealtime({ task: again, minimum: 10n, session: place('rs_k2'), idempotency: { ...k, bodyHash: 'other', requestId: 'r2' } })).toEqual({ existing: kept });
        expect(await store.tasks.get(again.id)).toBeUndefined();
        expect(await store.nodes.session('rs_k2')).toBeUndefined();
        expect(await store.nodes.openSessions(A)).toBe(1);
        // Without a key, the limit refuses as before.
        expect(isRefusal(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: place('rs_k3') }))).toBe(true);
      });

      it('two openRealtime racing with one Idempotency-Key make one task and one session; the other answers with its key', async () => {
        const store = await open(seedInput(10_000n));
        const k = { scope: `${A}/realtime`, key: 'race', bodyHash: 'h', requestId: 'r' };
        const [x, y] = await Promise.all([
          store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_x', nodeId: 'n1', maxOpen: 8 }, idempotency: k }),
          store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_y', nodeId: 'n2', maxOpen: 8 }, idempotency: k }),
        ]);
        const made = [x, y].filter((o) => !isExistingKey(o));
        const taken = [x, y].filter(isExistingKey);
        expect(made).toHaveLength(1);
        expect(taken).toHaveLength(1);
        const task = row(made[0] as TaskRow);
        const rows = [await store.nodes.session('rs_x'), await store.nodes.session('rs_y')].filter((r) => r !== undefined);
        expect(rows.map((r) => r.taskId)).toEqual([task.id]);
        expect(taken[0]?.existing).toEqual({ ...k, taskId: task.id, sessionId: rows[0]?.id });
        expect((await store.tasks.page(A, 1, 10)).total).toBe(1);
        expect(await store.nodes.openSessions(A)).toBe(1);
      });

      it('failOrphanedSessions fails the running sessions of nodes that stopped beating or left, releasing their reservations, once', async () => {
        const store = await open(seedInput(10_000n));
        await store.nodes.register(node('live'));
        await store.nodes.register(node('dead'));
        const onLive = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_live', nodeId: 'live', maxOpen: 8 } }));
        const onDead = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_dead', nodeId: 'dead', maxOpen: 8 } }));
        const onGone = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_gone', nodeId: 'gone', maxOpen: 8 } }));
        await store.accrueRealtime(onDead.id, 16_000n);
        await store.accrueRealtime(onLive.id, 16_000n);
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(20n);
        await new Promise((resolve) => setTimeout(resolve, 120));
        await store.nodes.heartbeat('live', node('live'));
        const failed = await store.nodes.failOrphanedSessions(100, orphaned, T0 + 5);
        expect([...failed].sort()).toEqual([onDead.id, onGone.id].sort());
        expect(await store.tasks.get(onDead.id)).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true, action: 'RETRY' }, billing: { state: 'RELEASED', settled: 0n, released: 10n } });
        expect((await store.tasks.get(onLive.id))?.status).toBe('PROCESSING');
        expect((await store.accounts.ledger(A))?.chars).toMatchObject({ reserved: 10n, orderUsed: 0n });
        expect(await store.nodes.openSessions(A)).toBe(1);
        expect(await store.nodes.failOrphanedSessions(100, orphaned, T0 + 6)).toEqual([]);
      });

      it('orphanedSessions lists the running sessions of nodes that stopped beating or left, and those recorded as the asking node\'s own, and changes nothing', async () => {
        const store = await open(seedInput(10_000n));
        await store.nodes.register(node('live'));
        await store.nodes.register(node('self'));
        await store.nodes.register(node('dead'));
        row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_live', nodeId: 'live', maxOpen: 8 } }));
        const onSelf = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_self', nodeId: 'self', maxOpen: 8 } }));
        const onDead = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_dead', nodeId: 'dead', maxOpen: 8 } }));
        const ended = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_ended', nodeId: 'dead', maxOpen: 8 } }));
        await store.failTask(ended.id, { ...orphaned(ended) }, T0 + 1);
        await new Promise((resolve) => setTimeout(resolve, 120));
        await store.nodes.heartbeat('live', node('live'));
        await store.nodes.heartbeat('self', node('self'));
        const found = await store.nodes.orphanedSessions(100, 'self');
        expect(found.map((r) => ({ id: r.id, taskId: r.taskId, nodeId: r.nodeId })).sort((x, y) => x.id.localeCompare(y.id))).toEqual([
          { id: 'rs_dead', taskId: onDead.id, nodeId: 'dead' },
          { id: 'rs_self', taskId: onSelf.id, nodeId: 'self' },
        ]);
        expect((await store.tasks.get(onDead.id))?.status).toBe('PROCESSING');
        expect(await store.nodes.openSessions(A)).toBe(3);
      });
    });

    describe('batch leases', () => {
      const error = { errorCode: 'INTERNAL', message: 'm', retryable: true, action: 'RETRY', requestId: 'r' } as const;
      const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

      it('the creator claims a new task at once; a held lease cannot be claimed again; only runnable batch tasks can be', async () => {
        const store = await open(seedInput(10_000n));
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const claimed = await store.leases.claim(task.id, 60_000);
        expect(claimed).toEqual({ task, lease: { taskId: task.id, token: 1n } });
        expect(await store.leases.claim(task.id, 60_000)).toBeUndefined();
        // A new task is its creator's: no other node's claimDue takes it in the meantime.
        const fresh = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        expect(await store.leases.claimDue(10, 60_000)).toEqual([]);
        expect((await store.leases.claim(fresh.id, 60_000))?.lease.token).toBe(1n);
        const live = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 1n }));
        expect(await store.leases.claim(live.id, 60_000)).toBeUndefined();
        const done = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        row(await store.settleBatch(done.id, { status: 'COMPLETED', durationMs: 1n, now: T0 }));
        expect(await store.leases.claim(done.id, 60_000)).toBeUndefined();
        expect(await store.leases.claim('tr_missing', 60_000)).toBeUndefined();
      });

      it('a lease that passed is claimed again with the next token; the old lease\'s writes answer lost-lease and change nothing', async () => {
        const store = await open(seedInput(10_000n));
        const task = row(await store.createBatchTask({ task: newTask(A, 'batch'), durationMs: 61_000n }));
        const first = (await store.leases.claim(task.id, 50))?.lease;
        if (first === undefined) throw new Error('not claimed');
        row(await store.leases.update(first, { status: 'PROCESSING' }, T0 + 1));
        await sleep(150);
        const [second, ...more] = await store.leases.claimDue(10, 60_000);
        expect(more).toEqual([]);
        expect(second?.lease).toEqual({ taskId: task.id, token: 2n });
        expect(second?.task.status).toBe('PROCESSING');
        expect(await store.leases.update(first, { status: 'RECONCILING' }, T0 + 2)).toBe('lost-lease');
        expect(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 3 }, first)).toBe('lost-lease');
        expect(await store.failTask(task.id, error, T0 + 3, first)).toBe('lost-lease');
        expect(await store.leases.heartbeat([first], 60_000)).toEqual([task.id]);
        expect(await store.tasks.get(task.id)).toMatchObject({ status: 'PROCESSING', billing: { state: 'RESERVED', reserved: 1200n } });
        const lease = (second as { lease: { taskId: string; token: bigint } }).lease;
        row(await store.leases.update(lease, { status: 'RECONCILING' }, T0 + 4));
        expect(row(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 5 }, lease)).billing).toMatchObject({ state: 'SETTLED', settled: 10n });
        expect(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 6 }, lease)).toBe('already');
        expect((await store.accounts.ledger(A))?.chars).toMatchObject({ reserved: 0n, orderUsed: 10n });
      });

      it('a heartbeat keeps a lease from passing; a released lease is claimed at once; a stale release changes nothing', async () => {
        const store = await open(seedInput(10_000n));
        const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const lease = (await store.leases.claim(task.id, 300))?.lease;
        if (lease === undefined) throw new Error('not claimed');
        for (let i = 0; i < 4; i++) {
          await sleep(100);
          expect(await store.leases.heartbeat([lease], 300)).toEqual([]);
        }
        // 400 ms after a claim of 300 ms: held only because of the heartbeats.
        expect(await store.leases.claimDue(10, 60_000)).toEqual([]);
        await store.leases.release([{ taskId: task.id, token: 7n }]);
        expect(await store.leases.claimDue(10, 60_000)).toEqual([]);
        await store.leases.release([lease]);
        const [again] = await store.leases.claimDue(10, 60_000);
        expect(again?.lease).toEqual({ taskId: task.id, token: 2n });
      });

      it('claimDue takes runnable tasks whose lease passed, oldest first, at most max', async () => {
        const store = await open(seedInput(10_000n));
        const tasks = [];
        for (let i = 0; i < 3; i++) {
          const t = row(await store.createBatchTask({ task: newTask(i === 1 ? B : A, 'batch', T0 + i), durationMs: 1n }));
          await store.leases.claim(t.id, 1);
          tasks.push(t);
        }
        await sleep(20);
        const firstTwo = await store.leases.claimDue(2, 60_000);
        expect(firstTwo.map((c) => c.task.id)).toEqual([tasks[0]?.id, tasks[1]?.id]);
        expect((await store.leases.claimDue(5, 60_000)).map((c) => c.task.id)).toEqual([tasks[2]?.id]);
        expect(await store.leases.claimDue(5, 60_000)).toEqual([]);
      });

      it('a create whose Idempotency-Key is taken answers with the kept key and writes nothing', async () => {
        const store = await open(seedInput(10_000n));
        const k = { scope: `${A}/transcriptions`, key: 'k1', bodyHash: 'h', requestId: 'r1' };
        const first = row(await store.createBatchTask({ task: newTask(A), durationMs: 61_000n, idempotency: k }));
        const second = await store.createBatchTask({ task: newTask(A), durationMs: 61_000n, idempotency: { ...k, bodyHash: 'other', requestId: 'r2' } });
        expect(second).toEqual({ existing: { ...k, taskId: first.id } });
        expect((await store.accounts.ledger(A))?.chars.reserved).toBe(1200n);
        expect((await store.tasks.page(A, 1, 10)).total).toBe(1);
      });

      it('fetched media is kept with its hold until the hold is released', async () => {
        const store = await open();
        const bytes = Buffer.from([1, 2, 3, 0, 255]);
        expect(await store.uploads.hold(A, 'hold_k', bytes.length, 1000, { bytes, contentType: 'audio/wav' })).toBeUndefined();
        expect(await store.uploads.hold(A, 'hold_n', 1, 1000)).toBeUndefined();
        const kept = await store.uploads.heldBytes('hold_k');
        expect(kept?.contentType).toBe('audio/wav');
        expect(Buffer.compare(kept?.bytes ?? Buffer.alloc(0), bytes)).toBe(0);
        expect(await store.uploads.heldBytes('hold_n')).toBeUndefined();
        await store.uploads.releaseHold('hold_k');
        expect(await store.uploads.heldBytes('hold_k')).toBeUndefined();
        expect(await store.uploads.usedBytes(A)).toBe(1);
      });
    });

    describe('recoverInterrupted', () => {
      if (engine.shared === true) {
        it('fails nothing on a shared store: running tasks belong to the nodes holding their leases', async () => {
          const store = await open(seedInput(10_000n));
          const queued = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
          const live = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
          expect(await store.recoverInterrupted([A], T0 + 1)).toBe(0);
          expect((await store.tasks.get(queued.id))?.status).toBe('QUEUED');
          expect((await store.tasks.get(live.id))?.status).toBe('PROCESSING');
        });
        return;
      }
      it('fails the running tasks of the given accounts, releases them and leaves nothing reserved, once', async () => {
        const store = await open(seedInput(10_000n));
        const queued = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        const reconciling = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        await store.tasks.update(reconciling.id, { status: 'RECONCILING', transcript, detectedLanguage: 'en', audioDurationMs: 5n }, T0);
        const live = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n }));
        await store.accrueRealtime(live.id, 16_000n);
        const done = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n }));
        await store.settleBatch(done.id, { status: 'COMPLETED', durationMs: 1n, now: T0 });
        const other = row(await store.createBatchTask({ task: newTask(B), durationMs: 1n }));
        expect(await store.recoverInterrupted([A], T0 + 1)).toBe(3);
        expect(await store.tasks.get(reconciling.id)).toMatchObject({ status: 'FAILED', transcript: null, detectedLanguage: null, audioDurationMs: 0n });
        expect(await store.tasks.get(queued.id)).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true, action: 'RETRY' }, billing: { state: 'RELEASED' } });
        expect(await store.tasks.get(live.id)).toMatchObject({ status: 'FAILED', billing: { state: 'RELEASED', settled: 0n } });
        expect((await store.tasks.get(done.id))?.status).toBe('COMPLETED');
        expect((await store.tasks.get(other.id))?.status).toBe('QUEUED');
        expect((await store.accounts.ledger(A))?.chars).toMatchObject({ reserved: 0n, orderUsed: 10n });
        expect(await store.recoverInterrupted([A], T0 + 2)).toBe(0);
      });
    });

    if (engine.reopen !== undefined) {
      const reopen = engine.reopen;
      describe('kept across a reopen', () => {
        it('keeps ledgers, voices, saved designs, deleted covers, tasks and keys; a kept ledger wins over the seed', async () => {
          let store = await open(seedInput(100_000n));
          const voice = row(await store.voices.createClone(A, 5, { name: 'mine', type: 'clone', feature: 'tts', channel: 'api', fileCount: 1, totalFileSize: 1 }));
          await store.voices.rename(A, '100002', 'web renamed');
          row(await store.voices.saveDesign(A, 5, 'design-1-02', 'd'));
          await store.covers.deleteOwned(A, ['c1']);
          const task = row(await store.createBatchTask({ task: newTask(A), durationMs: 1n, idempotency: { scope: 's', key: 'k', bodyHash: 'h', requestId: 'r' } }));
          const settled = row(await store.settleBatch(task.id, { status: 'COMPLETED', durationMs: 1_000n, now: T0 + 1 }));
          const kept = await store.accounts.ledger(A);
          opened.splice(opened.indexOf(store), 1);
          store = await reopen(store);
          opened.push(store);
          await store.seed(seedInput(5n, 5n));
          expect(await store.accounts.ledger(A)).toEqual(kept);
          expect((await store.voices.listFor(A)).map((v) => [v.id, v.name])).toEqual([['100001', 'Aria'], ['100002', 'web renamed'], [voice.id, 'mine'], [String(Number(voice.id) + 1), 'd']]);
          expect(await store.voices.saveDesign(A, 5, 'design-1-02', 'again')).toEqual({ refused: 'unknown-design' });
          expect([...(await store.covers.deletedAmong(['c1', 'c2']))]).toEqual(['c1']);
          expect(await store.tasks.get(task.id)).toEqual(settled);
          expect((await store.idempotency.find('s', 'k'))?.taskId).toBe(task.id);
          // The id sequence goes on past what was kept.
          expect(row(await store.voices.createClone(A, 9, { name: 'next', type: 'clone', feature: 'tts', channel: 'api', fileCount: 1, totalFileSize: 1 })).id).toBe(String(Number(voice.id) + 2));
        });

        it('keeps a realtime session\'s Idempotency-Key with the session it made', async () => {
          let store = await open(seedInput(10_000n));
          const k = { scope: `${A}/realtime`, key: 'rk', bodyHash: 'h', requestId: 'r' };
          const task = row(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_kept', nodeId: 'n1', maxOpen: 8 }, idempotency: k }));
          opened.splice(opened.indexOf(store), 1);
          store = await reopen(store);
          opened.push(store);
          await store.seed(seedInput(10_000n));
          expect(await store.idempotency.find(k.scope, k.key)).toEqual({ ...k, taskId: task.id, sessionId: 'rs_kept' });
          expect(await store.openRealtime({ task: newTask(A, 'realtime'), minimum: 10n, session: { id: 'rs_new', nodeId: 'n1', maxOpen: 8 }, idempotency: k })).toEqual({ existing: { ...k, taskId: task.id, sessionId: 'rs_kept' } });
        });
      });
    }
  });
}

/** Resolves once `ok()` holds (checked every 5 ms), failing the test after 3 s. */
function until(ok: () => boolean): Promise<void> {
  return vi.waitFor(() => {
    if (!ok()) throw new Error('not yet');
  }, { timeout: 3000, interval: 5 });
}
