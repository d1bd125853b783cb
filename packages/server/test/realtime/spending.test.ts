import { afterEach, describe, expect, it } from 'vitest';
import { idem, KEY_A, KEY_B, start, type TestServer } from '../support/server.js';
import { createSession, open, socketUrl, speech, storedAudio, type Peer } from './support.js';
import { Accounts, initialLedger, type Account } from '../../src/domain/accounts/accounts.js';
import { accrue, accruing, affordableSamples, available, chargeFor, receivedDurationMs } from '../../src/domain/accounts/billing.js';

/**
 * Realtime spending stays within the balance (docs/protocol.md "Realtime spending"): the rate is 600
 * Characters a minute, so 10 Characters pay for exactly one started second, 16,000 samples.
 */
describe('realtime spending within the balance', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  /** A server where KEY_A has exactly `characters` available (no plan characters, only purchased ones). */
  async function serverWith(characters: number, options: Parameters<typeof start>[0] = {}): Promise<TestServer> {
    const server = await start({
      accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: characters } },
      retainRealtimeAudioSamples: 10 * 16_000,
      realtimeTiming: { supplementWaitMs: 200 },
      ...options,
    });
    servers.push(server);
    return server;
  }

  async function attach(server: TestServer, sessionId: string, key = KEY_A): Promise<Peer> {
    const peer = await open(socketUrl(server, { sessionId }), { accessKey: key });
    await peer.waitFor('session.ready');
    return peer;
  }

  const ledger = async (server: TestServer, key = KEY_A): Promise<{ used: number; available: string; reserved: string }> => {
    const info = (await server.call('GET', '/user/info', { key })).body.data.benefit;
    const balances = (await server.call('GET', '/stt/capabilities', { key })).body.data.account.balances;
    return { used: info.usedMonthlyChars + info.usedOrderChars, available: balances.availableCharacters, reserved: balances.reservedCharacters };
  };

  it('with 10 Characters a session takes exactly 16,000 samples, says BALANCE_EXHAUSTED, settles 10 and ends PARTIAL', async () => {
    const server = await serverWith(10);
    const created = await createSession(server);
    const peer = await attach(server, created.sessionId);
    const signal = speech(4);
    // 300-sample frames: the limit falls inside the frame at 15,900, which is trimmed to 100 samples.
    peer.stream(1, signal, 0, 3 * 16_000, 300);
    const notice = await peer.waitFor('session.notice', (m) => m.notice.code === 'BALANCE_EXHAUSTED');
    expect(notice.notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '16000' });
    const finished = await peer.waitFor('session.finished');
    expect((await peer.closed).code).toBe(4409);
    expect(finished.session).toMatchObject({ status: 'PARTIAL', accepting: false, usage: { receivedSamples: '16000', sentSamples: '16000', billableCharacters: '10' } });
    expect(finished.session.notices.map((n: { code: string }) => n.code)).toEqual(['BALANCE_EXHAUSTED']);
    // Frames past the limit that the server read before the session ended were refused with their own
    // code, never NOT_ACCEPTING noise or a fatal error (the server reads one message per socket per
    // event-loop turn, so a session that settles at once may close before it reads any of them; the
    // refusal itself is shown by 'frames still arriving while the session settles ...' below).
    const refusals = peer.all('error');
    expect(refusals.every((e) => e.code === 'BALANCE_EXHAUSTED')).toBe(true);
    expect(refusals.every((e) => e.fatal === false)).toBe(true);
    // Stored (recognised) audio is the first 16,000 samples, bit for bit, and nothing more.
    expect(await storedAudio(server, created.sessionId)).toEqual(signal.subarray(0, 16_000));
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'PARTIAL', audioDurationMs: '1000' });
    expect(task.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '10', settledCharacters: '10', releasedCharacters: '0', billableDurationMs: '1000' });
    expect(await ledger(server)).toEqual({ used: 10, available: '0', reserved: '0' });
    // Nothing left: a new session is refused at creation.
    const refused = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(refused.status).toBe(402);
  });

  it('the limit is whole seconds: 25 Characters pay for 2 s (32,000 samples), the rest stays available', async () => {
    const server = await serverWith(25);
    const created = await createSession(server);
    const peer = await attach(server, created.sessionId);
    const signal = speech(4);
    peer.stream(1, signal, 0, 3 * 16_000, 320);
    await peer.waitFor('session.notice', (m) => m.notice.code === 'BALANCE_EXHAUSTED' && m.notice.receivedSamples === '32000');
    const finished = await peer.waitFor('session.finished');
    expect(finished.session.usage).toMatchObject({ receivedSamples: '32000', billableCharacters: '20' });
    expect(await ledger(server)).toEqual({ used: 20, available: '5', reserved: '0' });
  });

  it('audio that ends below the limit finishes normally, charged as before', async () => {
    const server = await serverWith(30);
    const created = await createSession(server);
    const peer = await attach(server, created.sessionId);
    const signal = speech(2).subarray(0, 20_000);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    // While open the session holds what it would settle at: 2 started seconds, 20 Characters.
    expect(await ledger(server)).toEqual({ used: 0, available: '10', reserved: '20' });
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '20000', billableCharacters: '20' } });
    expect(peer.all('session.notice')).toEqual([]);
    expect(await ledger(server)).toEqual({ used: 20, available: '10', reserved: '0' });
  });

  it('two open sessions of one account share the balance: together they never take more than it pays for', async () => {
    const server = await serverWith(30);
    const a = await createSession(server);
    const b = await createSession(server);
    const peerA = await attach(server, a.sessionId);
    const peerB = await attach(server, b.sessionId);
    const signal = speech(6);
    // A takes 1.5 s: it holds 20 Characters (two started seconds), leaving 10 for B.
    peerA.stream(1, signal, 0, 24_000);
    await peerA.acked(24_000);
    expect(await ledger(server)).toMatchObject({ available: '10', reserved: '20' });
    // B gets one second, then its notice.
    peerB.stream(1, signal, 0, 48_000);
    expect((await peerB.waitFor('session.notice')).notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '16000' });
    expect((await peerB.waitFor('session.finished')).session.usage).toMatchObject({ receivedSamples: '16000', billableCharacters: '10' });
    // A may still fill the second it already pays for (to 32,000), not one sample more.
    peerA.stream(1, signal, 24_000, 48_000);
    expect((await peerA.waitFor('session.notice')).notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '32000' });
    expect((await peerA.waitFor('session.finished')).session.usage).toMatchObject({ receivedSamples: '32000', billableCharacters: '20' });
    expect(await ledger(server)).toEqual({ used: 30, available: '0', reserved: '0' });
  });

  it('concurrent sessions streaming at once settle at most the balance in total, and the balance never goes negative', async () => {
    const server = await serverWith(35);
    const created = await Promise.all([createSession(server), createSession(server), createSession(server)]);
    const peers = await Promise.all(created.map((c) => attach(server, c.sessionId)));
    const signal = speech(6);
    // Interleaved 20 ms frames from all three, 3 s each: 9 s asked, 3 s (35 Characters) available.
    for (let at = 0; at < 48_000; at += 320) for (const peer of peers) peer.frame(1, at, signal.subarray(at, at + 320));
    const finished = await Promise.all(peers.map((p) => p.waitFor('session.finished', () => true, 10_000)));
    const received = finished.map((f) => Number(f.session.usage.receivedSamples));
    const charged = finished.map((f) => Number(f.session.usage.billableCharacters));
    // Each session settles whole started seconds; together they fit in 35 (three seconds, 30).
    expect(charged.reduce((x, y) => x + y, 0)).toBe(30);
    expect(received.reduce((x, y) => x + y, 0)).toBe(48_000);
    for (const [i, f] of finished.entries()) {
      expect(f.session.status).toBe('PARTIAL');
      expect(charged[i]).toBe(Math.ceil((received[i] as number) / 16_000) * 10);
    }
    expect(await ledger(server)).toEqual({ used: 30, available: '5', reserved: '0' });
  });

  it('creation is refused with 402 INSUFFICIENT_CHARACTERS below the one-second minimum, and nothing is created', async () => {
    const server = await serverWith(9);
    const refused = await server.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ code: -1, errorCode: 'INSUFFICIENT_CHARACTERS', details: { requiredCharacters: '10', availableCharacters: '9' } });
    expect((await server.call('GET', '/stt/transcriptions')).body.data.total).toBe(0);
    // Another account with its own balance is unaffected.
    expect((await server.call('POST', '/stt/realtime/sessions', { key: KEY_B, json: {}, headers: { 'Idempotency-Key': idem() } })).status).toBe(200);
  });

  it('frames still arriving while the session settles are refused without ever closing it for a protocol violation', async () => {
    // Supplements held back: the settle waits, so the frames below arrive before session.finished.
    const server = await serverWith(10, { realtimeTiming: { supplementWaitMs: 1500 } });
    const created = await createSession(server);
    server.faults.socket.inject({ kind: 'delaySupplements', ms: 1000, sessionId: created.sessionId });
    const peer = await attach(server, created.sessionId);
    const signal = speech(2);
    peer.stream(1, signal, 0, 16_320);
    await peer.waitFor('session.notice');
    // More refused frames than maxConsecutiveErrors (256) allows for mistakes.
    for (let i = 0; i < 300; i++) peer.frame(1, 16_000, signal.subarray(16_000, 16_100));
    const finished = await peer.waitFor('session.finished', () => true, 10_000);
    expect((await peer.closed).code).toBe(4409);
    expect(finished.session.usage).toMatchObject({ receivedSamples: '16000', billableCharacters: '10' });
    expect(peer.all('error').filter((e) => e.fatal)).toEqual([]);
    expect(peer.all('error').length).toBeGreaterThan(256);
  });

  it('a REST finish after BALANCE_EXHAUSTED answers the same final view; pause is refused as closed', async () => {
    const server = await serverWith(10);
    const created = await createSession(server);
    const peer = await attach(server, created.sessionId);
    peer.stream(1, speech(3), 0, 20_000);
    const finished = await peer.waitFor('session.finished');
    const again = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '20000' } });
    expect(again.body.data).toMatchObject({ status: 'PARTIAL', usage: { receivedSamples: '16000', billableCharacters: '10' } });
    expect(again.body.data.notices).toEqual(finished.session.notices);
    const paused = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/pause`, { json: { capturedSamples: '20000' } });
    expect(paused.body.errorCode).toBe('SESSION_CLOSED');
    expect(await ledger(server)).toEqual({ used: 10, available: '0', reserved: '0' });
  });
});

describe('realtime spending arithmetic', () => {
  it('affordableSamples is exact: the charge of N samples fits the budget and of N + 1 does not, for every budget 0..200', () => {
    for (let budget = 0; budget <= 200; budget++) {
      const account = initialLedger(new Accounts(['k'], { k: { totalMonthlyChars: 0, totalOrderChars: budget } }).all[0] as Account, 0, 0n);
      const record = accruing(account);
      const n = affordableSamples(account, record);
      expect(chargeFor(receivedDurationMs(n)) <= BigInt(budget), `budget ${budget}`).toBe(true);
      expect(chargeFor(receivedDurationMs(n + 1n)) > BigInt(budget), `budget ${budget}`).toBe(true);
      // Growing the reservation to N never leaves the account below zero, and the limit stays put.
      accrue(account, record, n);
      expect(available(account) >= 0n).toBe(true);
      expect(affordableSamples(account, record)).toBe(n);
    }
  });
});
