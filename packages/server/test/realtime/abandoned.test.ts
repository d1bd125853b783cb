import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAbandoned, sweepIntervalMs } from '../../src/realtime/session/abandoned.js';
import type { ServerOptions } from '../../src/index.js';
import { KEY_A, start, type TestServer } from '../support/server.js';
import { createSession, open, reconnect, socketUrl, speech, type Peer } from './support.js';

/**
 * Abandoned sessions end (docs/protocol.md "Abandoned sessions"): a session with no socket and no finish
 * `abandonAfterMs` after its recovery window passed is finished by the service, once, for the audio it
 * received, and its task ends PARTIAL: no History task stays PROCESSING and no reservation stays held.
 * Windows here are short (a server option) so the tests take milliseconds, not minutes.
 */
const engines: ReadonlyArray<{ readonly name: string; readonly options: () => { options: Partial<ServerOptions>; cleanup: () => void } }> = [
  { name: 'in memory', options: () => ({ options: {}, cleanup: () => undefined }) },
  {
    name: 'with the journal (dataDir)',
    options: () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'abandoned-'));
      return { options: { dataDir }, cleanup: () => rmSync(dataDir, { recursive: true, force: true }) };
    },
  },
];

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

const ledger = async (server: TestServer): Promise<{ used: number; reserved: string }> => {
  const info = (await server.call('GET', '/user/info')).body.data.benefit;
  const balances = (await server.call('GET', '/stt/capabilities')).body.data.account.balances;
  return { used: info.usedMonthlyChars + info.usedOrderChars, reserved: balances.reservedCharacters };
};

const task = async (server: TestServer, id: string): Promise<any> => (await server.call('GET', `/stt/transcriptions/${id}`)).body.data;
const view = async (server: TestServer, id: string): Promise<any> => (await server.call('GET', `/stt/realtime/sessions/${id}`)).body.data;
const ended = (server: TestServer, sessionId: string) => until(`session ${sessionId} to end`, async () => {
  const v = await view(server, sessionId);
  return ['COMPLETED', 'PARTIAL', 'FAILED'].includes(v.status) ? v : undefined;
});

async function attach(server: TestServer, sessionId: string): Promise<Peer> {
  const peer = await open(socketUrl(server, { sessionId }), { accessKey: KEY_A });
  await peer.waitFor('session.ready');
  return peer;
}

/** Streams `samples` of speech on the socket, waits until all are acknowledged, then cuts the TCP connection (no close frame). */
async function streamAndCut(peer: Peer, samples: number, seed = 1): Promise<void> {
  peer.stream(1, speech(4, seed), 0, samples);
  await peer.acked(samples);
  peer.ws.terminate();
  await peer.closed;
}

describe.each(engines)('abandoned realtime sessions end, $name', ({ options: engine }) => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });
  const server = async (options: Partial<ServerOptions>): Promise<TestServer> => {
    const { options: more, cleanup: remove } = engine();
    cleanup.push(remove);
    const s = await start({ ...more, ...options, realtimeTiming: { supplementWaitMs: 100, ...options.realtimeTiming } });
    cleanup.push(() => s.close());
    return s;
  };

  it('a socket cut and never resumed: the service finishes the session PARTIAL, charged once for the audio received, the reservation released', async () => {
    const s = await server({ realtimeTiming: { recoveryWindowMs: 150, abandonAfterMs: 100 } });
    const before = await ledger(s);
    const created = await createSession(s);
    const peer = await attach(s, created.sessionId);
    // 1.5 s: two started seconds, 20 Characters.
    await streamAndCut(peer, 24_000);
    const v = await ended(s, created.sessionId);
    expect(v).toMatchObject({ status: 'PARTIAL', accepting: false, usage: { receivedSamples: '24000', billableCharacters: '20' } });
    expect(v.notices.map((n: { code: string }) => n.code)).toContain('SESSION_ABANDONED');
    // Never before the window and the wait after it had both passed.
    const t = await task(s, created.transcriptionId);
    expect(t).toMatchObject({ status: 'PARTIAL', modelId: 'svc_stt_realtime_v1', audioDurationMs: '1500' });
    expect(t.billing).toMatchObject({ state: 'SETTLED', settledCharacters: '20' });
    expect(Date.parse(t.timestamps.completedAt) - Date.parse(t.timestamps.createdAt)).toBeGreaterThanOrEqual(250);
    // The lines it recognised are kept in History, as a finish keeps them.
    expect(v.lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(t.transcript)).toContain(v.lines[0].text);
    expect(await ledger(s)).toEqual({ used: before.used + 20, reserved: '0' });
    // A finish that comes later answers the same view and charges nothing more.
    const late = await s.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '24000' } });
    expect(late.status).toBe(200);
    expect(late.body.data).toMatchObject({ status: 'PARTIAL', usage: { billableCharacters: '20' } });
    await sleep(300);
    expect(await ledger(s)).toEqual({ used: before.used + 20, reserved: '0' });
    // History lists it ended.
    const items = (await s.call('GET', '/stt/transcriptions?pageSize=100')).body.data.items as Array<{ transcriptionId: string; status: string }>;
    expect(items.find((i) => i.transcriptionId === created.transcriptionId)?.status).toBe('PARTIAL');
  });

  it('a session no socket ever reached ends too, charged nothing', async () => {
    const s = await server({ realtimeTiming: { recoveryWindowMs: 50, abandonAfterMs: 50 } });
    const before = await ledger(s);
    const created = await createSession(s);
    const v = await ended(s, created.sessionId);
    expect(v).toMatchObject({ status: 'PARTIAL', usage: { receivedSamples: '0', billableCharacters: '0' } });
    expect((await task(s, created.transcriptionId)).billing).toMatchObject({ state: 'SETTLED', settledCharacters: '0' });
    expect(await ledger(s)).toEqual({ used: before.used, reserved: '0' });
  });

  it('a socket that resumes within the window continues the session; attached, it is never ended however long it stays', async () => {
    const s = await server({ realtimeTiming: { recoveryWindowMs: 400, abandonAfterMs: 50 } });
    const created = await createSession(s);
    const first = await attach(s, created.sessionId);
    await streamAndCut(first, 16_000);
    await sleep(150);
    const { peer, ready } = await reconnect(s, created.sessionId);
    cleanup.push(() => peer.close());
    expect(ready.receivedSamples).toBe('16000');
    peer.stream(1, speech(4), 16_000, 32_000);
    await peer.acked(32_000);
    // Longer than the window and the wait after it, attached all along.
    await sleep(700);
    expect(await view(s, created.sessionId)).toMatchObject({ status: 'ACTIVE', accepting: true, connection: { attached: true, recoveryExpired: false } });
    peer.json({ type: 'session.finish', capturedSamples: '32000' });
    const finished = await peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '32000', billableCharacters: '20' } });
    expect(finished.session.notices.map((n: { code: string }) => n.code)).not.toContain('SESSION_ABANDONED');
  });

  it('an expired session finished over REST before the service ends it stays the client\'s finish', async () => {
    const s = await server({ realtimeTiming: { recoveryWindowMs: 50, abandonAfterMs: 60_000 } });
    const created = await createSession(s);
    const peer = await attach(s, created.sessionId);
    await streamAndCut(peer, 16_000);
    await until('the window to pass', async () => ((await view(s, created.sessionId)).connection.recoveryExpired ? true : undefined));
    const finished = await s.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '16000' } });
    expect(finished.body.data).toMatchObject({ status: 'COMPLETED', usage: { billableCharacters: '10' } });
    expect(finished.body.data.notices.map((n: { code: string }) => n.code)).not.toContain('SESSION_ABANDONED');
  });
});

describe('an abandoned session kept in the journal', () => {
  it('stays PARTIAL across a restart: nothing is left running for the next start to fail', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'abandoned-kept-'));
    try {
      const first = await start({ dataDir, realtimeTiming: { recoveryWindowMs: 50, abandonAfterMs: 50, supplementWaitMs: 50 } });
      let created;
      try {
        created = await createSession(first);
        await streamAndCut(await attach(first, created.sessionId), 16_000);
        await ended(first, created.sessionId);
      } finally {
        await first.close();
      }
      const again = await start({ dataDir });
      try {
        expect(again.state?.interruptedTasks).toBe(0);
        expect(await task(again, created.transcriptionId)).toMatchObject({ status: 'PARTIAL', billing: { state: 'SETTLED', settledCharacters: '10' } });
        expect((await ledger(again)).reserved).toBe('0');
      } finally {
        await again.close();
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a finish racing the service\'s end settles once', () => {
  const cleanup: Array<() => unknown> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  /**
   * The service's time is a clock the test moves (startServer `clock`; timers stay real), so the sweep
   * and the REST finish can be made to meet exactly: the abandon wait passes on the clock, and the
   * sweep (endAbandoned, what the sweep's timer calls) and the finish go out in the same turn.
   */
  it('the sweep first, a finish in the same turn: both see one settlement, PARTIAL, charged once', async () => {
    let offset = 0;
    const s = await start({ clock: { now: () => Date.now() + offset }, realtimeTiming: { recoveryWindowMs: 50, abandonAfterMs: 3_600_000, supplementWaitMs: 100 } });
    cleanup.push(() => s.close());
    const before = await ledger(s);
    const created = await createSession(s);
    const peer = await attach(s, created.sessionId);
    await streamAndCut(peer, 24_000);
    await until('the window to pass', async () => ((await view(s, created.sessionId)).connection.recoveryExpired ? true : undefined));
    expect(s.services.realtime.endAbandoned()).toEqual([]);
    offset += 3_600_000;
    const finishing = s.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '24000' } });
    expect(s.services.realtime.endAbandoned()).toEqual([created.sessionId]);
    // A second sweep finds it ending already.
    expect(s.services.realtime.endAbandoned()).toEqual([]);
    const answered = await finishing;
    expect(answered.body.data).toMatchObject({ status: 'PARTIAL', usage: { billableCharacters: '20' } });
    expect(answered.body.data).toEqual(await view(s, created.sessionId));
    expect(await ledger(s)).toEqual({ used: before.used + 20, reserved: '0' });
  });

  it('a finish sent at the moment the real sweep ends the session: one charge, and the answer is the final view', async () => {
    const s = await start({ realtimeTiming: { recoveryWindowMs: 100, abandonAfterMs: 40, supplementWaitMs: 100 } });
    cleanup.push(() => s.close());
    const before = await ledger(s);
    const results: string[] = [];
    // Several sessions, each finished at a slightly different moment around its end: whichever wins,
    // each settles once.
    for (let i = 0; i < 6; i++) {
      const created = await createSession(s);
      const peer = await attach(s, created.sessionId);
      await streamAndCut(peer, 16_000, i + 1);
      await sleep(100 + 10 * i);
      const answered = await s.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '16000' } });
      expect(answered.status).toBe(200);
      expect(answered.body.data.usage.billableCharacters).toBe('10');
      expect(answered.body.data).toEqual(await view(s, created.sessionId));
      results.push(answered.body.data.status);
    }
    expect(results.every((r) => r === 'COMPLETED' || r === 'PARTIAL')).toBe(true);
    await sleep(200);
    expect(await ledger(s)).toEqual({ used: before.used + 60, reserved: '0' });
  });
});

describe('many abandoned sessions', () => {
  it('200 sessions left behind (20 of them after streaming) leave no PROCESSING task and no reservation', async () => {
    const s = await start({ maxRealtimeSessionsPerAccount: 1000, realtimeTiming: { recoveryWindowMs: 200, abandonAfterMs: 50, supplementWaitMs: 50 } });
    try {
      const before = await ledger(s);
      const tasks: string[] = [];
      for (let i = 0; i < 200; i++) {
        const created = await createSession(s);
        tasks.push(created.transcriptionId);
        if (i % 10 === 0) {
          const peer = await attach(s, created.sessionId);
          // Half a second: one started second, 10 Characters.
          await streamAndCut(peer, 8_000, i);
        }
      }
      const statuses = await until('every task to end', async () => {
        const all = await Promise.all(tasks.map(async (id) => (await task(s, id)).status as string));
        return all.includes('PROCESSING') ? undefined : all;
      }, 20_000);
      expect(statuses.filter((x) => x === 'PARTIAL')).toHaveLength(200);
      expect(await ledger(s)).toEqual({ used: before.used + 200, reserved: '0' });
      expect((await s.call('GET', '/stt/capabilities')).body.data.realtimeParameters.limits.openSessions).toBe(0);
    } finally {
      await s.close();
    }
  });
});

describe('the abandon rule and its settings', () => {
  const recovery = (expiredAt: number | null) => ({ expired: expiredAt !== null, expiredAt });

  it('ends only a detached, unfinished session whose window passed at least abandonAfterMs ago', () => {
    expect(isAbandoned({ recovery: recovery(1000), attachedSockets: 0 }, 1999, 1000)).toBe(false);
    expect(isAbandoned({ recovery: recovery(1000), attachedSockets: 0 }, 2000, 1000)).toBe(true);
    expect(isAbandoned({ recovery: recovery(null), attachedSockets: 0 }, 1e12, 0)).toBe(false);
    expect(isAbandoned({ recovery: recovery(1000), attachedSockets: 1 }, 1e12, 0)).toBe(false);
    expect(isAbandoned({ recovery: recovery(1000), attachedSockets: 0, finishing: Promise.resolve() }, 1e12, 0)).toBe(false);
    expect(sweepIntervalMs(300_000)).toBe(1000);
    expect(sweepIntervalMs(100)).toBe(25);
    expect(sweepIntervalMs(0)).toBe(10);
  });

  it('--abandon-after-ms sets it; a negative or fractional value is refused', async () => {
    const { parseServerFlags } = await import('../../src/index.js');
    expect(parseServerFlags(['--access-key', 'k', '--abandon-after-ms', '1500']).options.realtimeTiming).toMatchObject({ abandonAfterMs: 1500 });
    expect(() => parseServerFlags(['--access-key', 'k', '--abandon-after-ms', '-1'])).toThrow(/--abandon-after-ms/);
    await expect(start({ realtimeTiming: { abandonAfterMs: 1.5 } })).rejects.toThrow(/abandonAfterMs/);
  });
});
