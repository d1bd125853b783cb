import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { MemoryStore } from '../../src/store/memory-store.js';
import { asyncSpendingStore, type AsyncSpendingStore, type SpendingDelay } from '../support/async-spending-store.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, open, socketUrl, speech, storedAudio, sleep, type Peer } from './support.js';

/**
 * The realtime frame path when the store answers the spending check asynchronously
 * (docs/protocol.md "Realtime spending" and "Errors on the socket"). What stands in for a database
 * engine: the real in-memory store whose accrueRealtime answers with a Promise after a delay, or
 * rejects (support/async-spending-store.ts). No database runs in these tests; the socket only ever
 * sees the check's answer come later, or fail as it does when the database is unreachable, and that
 * is what the wrapper produces, on top of the engine whose arithmetic the other suites pin down.
 *
 * 600 Characters a minute: 10 pay for exactly one started second, 16,000 samples. The numbers are
 * those of spending.test.ts, which runs the same cases on the synchronous engine.
 */
describe('realtime spending with an asynchronous store', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serverWith(characters: number, delay: SpendingDelay = { ms: 20 }): Promise<{ server: TestServer; store: AsyncSpendingStore }> {
    const store = asyncSpendingStore(new MemoryStore(), delay);
    const server = await start({
      store,
      accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: characters } },
      retainRealtimeAudioSamples: 20 * 16_000,
      realtimeTiming: { supplementWaitMs: 200 },
    });
    servers.push(server);
    return { server, store };
  }

  async function attach(server: TestServer, sessionId: string): Promise<{ peer: Peer; ready: any }> {
    const peer = await open(socketUrl(server, { sessionId }), { accessKey: KEY_A });
    return { peer, ready: await peer.waitFor('session.ready') };
  }

  const ledger = async (server: TestServer): Promise<{ used: number; available: string; reserved: string }> => {
    const info = (await server.call('GET', '/user/info')).body.data.benefit;
    const balances = (await server.call('GET', '/stt/capabilities')).body.data.account.balances;
    return { used: info.usedMonthlyChars + info.usedOrderChars, available: balances.availableCharacters, reserved: balances.reservedCharacters };
  };

  const digest = (samples: Int16Array): string => createHash('sha256').update(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength)).digest('hex');

  async function settled(store: AsyncSpendingStore): Promise<void> {
    for (let i = 0; i < 200 && store.pending > 0; i++) await sleep(5);
    expect(store.pending).toBe(0);
  }

  it('asks only when a frame reaches a second not paid for yet, and stores every sample once, in order', async () => {
    const { server, store } = await serverWith(1000);
    const created = await createSession(server);
    const { peer } = await attach(server, created.sessionId);
    const signal = speech(4).subarray(0, 51_200);
    // All 160 frames at once: the frames behind each awaited check wait for it.
    peer.stream(1, signal);
    await peer.acked(signal.length);
    // The same questions as the synchronous engine gets (spending.test.ts, spending-guard.test.ts).
    expect(store.asked).toEqual([320n, 16_000n, 16_320n, 32_000n, 32_320n, 48_000n, 48_320n]);
    const acks = peer.all('audio.ack').map((m) => Number(m.receivedSamples));
    expect(acks).toEqual([...acks].sort((a, b) => a - b));
    expect(peer.all('error')).toEqual([]);
    expect(await ledger(server)).toMatchObject({ reserved: '40' });
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '51200', sentSamples: '51200', billableCharacters: '40' } });
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal));
    expect(await ledger(server)).toEqual({ used: 40, available: '960', reserved: '0' });
  });

  it('with 10 Characters a session takes exactly 16,000 samples, says BALANCE_EXHAUSTED, settles 10 and ends PARTIAL', async () => {
    const { server } = await serverWith(10);
    const created = await createSession(server);
    const { peer } = await attach(server, created.sessionId);
    const signal = speech(4);
    peer.stream(1, signal, 0, 3 * 16_000, 300);
    const notice = await peer.waitFor('session.notice', (m) => m.notice.code === 'BALANCE_EXHAUSTED');
    expect(notice.notice).toMatchObject({ receivedSamples: '16000' });
    const finished = await peer.waitFor('session.finished');
    expect((await peer.closed).code).toBe(4409);
    expect(finished.session).toMatchObject({ status: 'PARTIAL', accepting: false, usage: { receivedSamples: '16000', sentSamples: '16000', billableCharacters: '10' } });
    expect(peer.all('error').every((e) => e.code === 'BALANCE_EXHAUSTED' && e.fatal === false)).toBe(true);
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal.subarray(0, 16_000)));
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '10', settledCharacters: '10', releasedCharacters: '0', billableDurationMs: '1000' });
    expect(await ledger(server)).toEqual({ used: 10, available: '0', reserved: '0' });
  });

  it('two sessions share 30 Characters exactly: A holds 20 at 24,000, B gets 16,000, A fills to 32,000 and not one sample more', async () => {
    const { server } = await serverWith(30);
    const a = await createSession(server);
    const b = await createSession(server);
    const peerA = (await attach(server, a.sessionId)).peer;
    const peerB = (await attach(server, b.sessionId)).peer;
    const signal = speech(6);
    peerA.stream(1, signal, 0, 24_000);
    await peerA.acked(24_000);
    expect(await ledger(server)).toMatchObject({ available: '10', reserved: '20' });
    peerB.stream(1, signal, 0, 48_000);
    expect((await peerB.waitFor('session.notice')).notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '16000' });
    expect((await peerB.waitFor('session.finished')).session.usage).toMatchObject({ receivedSamples: '16000', billableCharacters: '10' });
    peerA.stream(1, signal, 24_000, 48_000);
    expect((await peerA.waitFor('session.notice')).notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '32000' });
    expect((await peerA.waitFor('session.finished')).session.usage).toMatchObject({ receivedSamples: '32000', billableCharacters: '20' });
    expect(await ledger(server)).toEqual({ used: 30, available: '0', reserved: '0' });
  });

  it('concurrent sessions answered out of order settle at most the balance in total', async () => {
    // Macrotask delays: the three sessions' checks interleave with each other's frames.
    const { server } = await serverWith(35, { macrotasks: 3 });
    const created = await Promise.all([createSession(server), createSession(server), createSession(server)]);
    const peers = await Promise.all(created.map(async (c) => (await attach(server, c.sessionId)).peer));
    const signal = speech(6);
    for (let at = 0; at < 48_000; at += 320) for (const peer of peers) peer.frame(1, at, signal.subarray(at, at + 320));
    const finished = await Promise.all(peers.map((p) => p.waitFor('session.finished', () => true, 10_000)));
    const received = finished.map((f) => Number(f.session.usage.receivedSamples));
    const charged = finished.map((f) => Number(f.session.usage.billableCharacters));
    expect(charged.reduce((x, y) => x + y, 0)).toBe(30);
    expect(received.reduce((x, y) => x + y, 0)).toBe(48_000);
    for (const [i, f] of finished.entries()) {
      expect(f.session.status).toBe('PARTIAL');
      expect(charged[i]).toBe(Math.ceil((received[i] as number) / 16_000) * 10);
    }
    expect(await ledger(server)).toEqual({ used: 30, available: '5', reserved: '0' });
  });

  it('a finish and a ping sent behind a waiting frame are handled after it, in order: nothing sent before them is lost', async () => {
    const { server, store } = await serverWith(100, { ms: 60 });
    const created = await createSession(server);
    const { peer } = await attach(server, created.sessionId);
    const signal = speech(2).subarray(0, 16_320);
    // The first frame waits for the store; every frame after it, the ping and the finish wait behind it.
    peer.stream(1, signal);
    peer.json({ type: 'ping', id: 'behind' });
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect(store.asked).toEqual([320n, 16_000n, 16_320n]);
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '16320', sentSamples: '16320', capturedSamples: '16320', billableCharacters: '20' } });
    expect(finished.session.notices).toEqual([]);
    // The ping waited too: its pong follows the ack of the frame that waited for the second check (acks
    // themselves are throttled, so the last one may come after it).
    const order = peer.messages.map((m) => (m.type === 'pong' ? 'pong' : m.type === 'audio.ack' ? `ack ${m.receivedSamples}` : m.type));
    expect(order.indexOf('ack 16000')).toBeGreaterThan(0);
    expect(order.indexOf('pong')).toBeGreaterThan(order.indexOf('ack 16000'));
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal));
    expect(await ledger(server)).toEqual({ used: 20, available: '80', reserved: '0' });
  });

  it('a socket replaced while a frame waits drops it and those behind it unstored: the next socket resends from the cursor, nothing doubled', async () => {
    // Long enough for the replacement to happen before the answer.
    const { server, store } = await serverWith(100, { ms: 250 });
    const created = await createSession(server);
    const first = (await attach(server, created.sessionId)).peer;
    const signal = speech(3).subarray(0, 40_000);
    first.stream(1, signal, 0, 16_000);
    await first.acked(16_000);
    // The frame from 16,000 waits; the socket goes before the answer, with frames behind it. (A
    // socket with frames held is paused, so a close the client sends is read after them; a newer socket,
    // the heartbeat or shutdown end it at once.)
    first.stream(1, signal, 16_000, 20_000);
    await sleep(10);
    expect(store.pending).toBe(1);
    const second = await attach(server, created.sessionId);
    expect((await first.closed).code).toBe(4001);
    const cursor = Number(second.ready.receivedSamples);
    expect(cursor).toBe(16_000);
    await settled(store);
    // The store reserved for the frame that waited, a second ahead of what was stored (16,000 samples
    // settle at 10); the next frames use it, and a settle would correct it.
    expect(await ledger(server)).toMatchObject({ reserved: '20' });
    second.peer.stream(1, signal, cursor);
    await second.peer.acked(signal.length);
    second.peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await second.peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '40000', billableCharacters: '30' } });
    expect(second.peer.all('error')).toEqual([]);
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal));
    expect(await ledger(server)).toEqual({ used: 30, available: '70', reserved: '0' });
  });

  it('a socket replaced while a failing check waits leaves no unhandled rejection and nothing stored', async () => {
    const { server, store } = await serverWith(100, { ms: 100 });
    const created = await createSession(server);
    const first = (await attach(server, created.sessionId)).peer;
    const signal = speech(2).subarray(0, 16_000);
    store.failNext(1);
    first.stream(1, signal, 0, 3200);
    await sleep(5);
    const second = await attach(server, created.sessionId);
    expect((await first.closed).code).toBe(4001);
    await settled(store);
    expect(second.ready.receivedSamples).toBe('0');
    second.peer.stream(1, signal);
    await second.peer.acked(signal.length);
    expect(second.peer.all('error')).toEqual([]);
    expect(first.all('error')).toEqual([]);
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal));
    // The failure reached no socket (the one that asked was gone) and nothing failed unhandled (vitest fails
    // the run on an unhandled rejection).
    expect(server.sockets.log.filter((e) => e.kind === 'internal-error' || e.kind === 'store-unavailable')).toEqual([]);
  });

  it('a store failure refuses the frame with a retryable SERVICE_UNAVAILABLE, never BALANCE_EXHAUSTED; resent, everything is stored and charged once', async () => {
    const { server, store } = await serverWith(100);
    const created = await createSession(server);
    const { peer } = await attach(server, created.sessionId);
    const signal = speech(3).subarray(0, 24_000);
    peer.stream(1, signal, 0, 8000);
    await peer.acked(8000);
    store.failNext(1);
    peer.stream(1, signal, 8000, 24_000);
    const refused = await peer.waitFor('error', (m) => m.code === 'SERVICE_UNAVAILABLE');
    expect(refused).toMatchObject({ fatal: false, details: { reason: 'STORE_UNAVAILABLE', epoch: 1, receivedSamples: '15680', frameEpoch: 1, startSample: '15680', accepting: true } });
    // The 25 frames behind it start past the cursor: refused as such, never fatal, never a balance refusal.
    for (let i = 0; i < 100 && peer.all('error').length < 26; i++) await sleep(10);
    const errors = peer.all('error');
    expect(errors.every((e) => e.fatal === false && (e.code === 'SERVICE_UNAVAILABLE' || e.code === 'BEYOND_CURSOR'))).toBe(true);
    expect(errors.filter((e) => e.code === 'BEYOND_CURSOR').length).toBe(25);
    expect(server.sockets.log.some((e) => e.kind === 'store-unavailable')).toBe(true);
    // The client resends from the cursor, as our SDK does on this error.
    peer.stream(1, signal, Number(refused.details.receivedSamples));
    await peer.acked(signal.length);
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '24000', billableCharacters: '20' } });
    expect(digest(await storedAudio(server, created.sessionId))).toBe(digest(signal));
    expect(await ledger(server)).toEqual({ used: 20, available: '80', reserved: '0' });
  });

  it('refusals behind a store failure are not counted toward PROTOCOL_VIOLATION', async () => {
    const { server, store } = await serverWith(1000, { ms: 5 });
    const created = await createSession(server);
    const { peer } = await attach(server, created.sessionId);
    const signal = speech(2).subarray(0, 3200);
    store.failNext(1);
    peer.frame(1, 0, signal.subarray(0, 320));
    // More frames past the cursor than maxConsecutiveErrors (256) allows for mistakes.
    for (let i = 0; i < 300; i++) peer.frame(1, 320, signal.subarray(320, 640));
    await peer.waitFor('error', (m) => m.code === 'SERVICE_UNAVAILABLE');
    await sleep(100);
    expect(peer.all('error').filter((e) => e.fatal)).toEqual([]);
    peer.stream(1, signal);
    await peer.acked(signal.length);
  });
});

describe('the SDK against an asynchronous store', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serverWith(characters: number, delay: SpendingDelay): Promise<{ server: TestServer; store: AsyncSpendingStore }> {
    const store = asyncSpendingStore(new MemoryStore(), delay);
    const server = await start({ store, accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: characters } }, retainRealtimeAudioSamples: 20 * 16_000, realtimeTiming: { supplementWaitMs: 200 } });
    servers.push(server);
    return { server, store };
  }

  const client = (server: TestServer): SoundClone => new SoundClone({ accessKey: KEY_A, baseUrl: server.url, retryDelay: { baseMs: 20, maxMs: 100 } });
  const digest = (samples: Int16Array): string => createHash('sha256').update(new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength)).digest('hex');

  /** Writes PCM in 20 ms blocks, yielding to the event loop every 25 blocks (faster than real time). */
  async function feed(session: RealtimeSocketSession, pcm: Int16Array, from = 0, to = pcm.length): Promise<void> {
    let blocks = 0;
    for (let at = from; at < to; at += 320) {
      session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
      if (++blocks % 25 === 0) await sleep(1);
    }
  }

  it('stores exactly the samples sent (digest) and charges the received seconds once', async () => {
    const { server, store } = await serverWith(1000, { ms: 15 });
    const session = await client(server).stt.realtime.connect({});
    const pcm = speech(5).subarray(0, 5 * 16_000 + 4000);
    await feed(session, pcm);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.billableCharacters).toBe(60n);
    expect(store.asked.length).toBeLessThanOrEqual(12);
    expect(digest(await storedAudio(server, session.sessionId))).toBe(digest(pcm));
    const info = await client(server).user.info();
    expect(info.benefit.usedOrderChars).toBe(60);
  });

  it('ends at exactly 16,000 samples with 10 Characters, as on the synchronous engine', async () => {
    const { server } = await serverWith(10, { macrotasks: 5 });
    const session = await client(server).stt.realtime.connect({});
    const exhausted = new Promise<{ receivedSamples: number }>((resolve) => session.on('balance.exhausted', resolve));
    const pcm = speech(3, 5);
    await feed(session, pcm, 0, 40_000);
    expect((await exhausted).receivedSamples).toBe(16_000);
    const failure: unknown = await session.finish().then(() => undefined, (caught: unknown) => caught);
    expect(failure).toMatchObject({ code: 'REALTIME_BALANCE_EXHAUSTED', receivedSamples: 16_000, session: { status: 'PARTIAL', usage: { receivedSamples: 16_000n, billableCharacters: 10n } } });
    expect(digest(await storedAudio(server, session.sessionId))).toBe(digest(pcm.subarray(0, 16_000)));
  });

  it('a store failure mid-stream: the SDK resends from the cursor on SERVICE_UNAVAILABLE, nothing is lost, the session completes, charged once', async () => {
    const { server, store } = await serverWith(1000, { ms: 10 });
    const session = await client(server).stt.realtime.connect({});
    const refused: string[] = [];
    session.on('debug', (d) => {
      if (d.kind === 'refused' && typeof d.detail?.['code'] === 'string') refused.push(d.detail['code']);
    });
    const gaps: unknown[] = [];
    session.on('gap', (g) => gaps.push(g));
    const pcm = speech(4).subarray(0, 4 * 16_000);
    await feed(session, pcm, 0, 8000);
    // The next two checks (the seconds from 16,000 and, resent, the same again) find the database unreachable.
    store.failNext(2);
    await feed(session, pcm, 8000);
    const result = await session.finish();
    expect(refused).toContain('SERVICE_UNAVAILABLE');
    expect(server.sockets.log.filter((e) => e.kind === 'store-unavailable').length).toBe(2);
    expect(gaps).toEqual([]);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.billableCharacters).toBe(40n);
    expect(digest(await storedAudio(server, session.sessionId))).toBe(digest(pcm));
    const task = (await server.call('GET', `/stt/transcriptions/${result.session.transcriptionId}`)).body.data;
    expect(task.billing).toMatchObject({ state: 'SETTLED', settledCharacters: '40', reservedCharacters: '40', releasedCharacters: '0' });
    const info = await client(server).user.info();
    expect(info.benefit.usedOrderChars).toBe(40);
  });

  it('the last frame in flight failing is resent too: SERVICE_UNAVAILABLE alone brings it back, no gap, no transport notice', async () => {
    const { server, store } = await serverWith(1000, { ms: 10 });
    const session = await client(server).stt.realtime.connect({});
    const pcm = speech(2).subarray(0, 16_000);
    await feed(session, pcm, 0, 8000);
    await sleep(100);
    // Only the last frame, [15,680, 16,000), asks the store (it ends on the paid second): nothing follows it
    // to be refused BEYOND_CURSOR, so only this error can tell the client to resend it.
    store.failNext(1);
    await feed(session, pcm, 8000);
    const result = await session.finish();
    expect(server.sockets.log.filter((e) => e.kind === 'store-unavailable').length).toBe(1);
    expect(result.session).toMatchObject({ status: 'COMPLETED', notices: [], usage: { receivedSamples: 16_000n, billableCharacters: 10n } });
    expect(digest(await storedAudio(server, session.sessionId))).toBe(digest(pcm));
  });
});
