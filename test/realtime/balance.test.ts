import type { RunningServer } from '@soundclone/server';
import { InsufficientCharactersError, RateLimitError, SoundClone, RealtimeError, isSoundCloneError } from '@soundclone/core';
import { afterEach, describe, expect, it } from 'vitest';
import { EventCapture, KEY, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/**
 * The SDK against the reference server when the account's balance runs out mid-session
 * (docs/protocol.md "Realtime spending"): a typed event and error, the refused range as a gap, and
 * no reconnect. 10 Characters pay for exactly one second (16,000 samples) at 600 a minute.
 */
describe('realtime session: balance used up', () => {
  const servers: RunningServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
  });

  async function serverWith(characters: number, options: Parameters<typeof startRealtimeServer>[0] = {}): Promise<RunningServer> {
    const server = await startRealtimeServer({ accountOverrides: { [KEY]: { totalMonthlyChars: 0, totalOrderChars: characters } }, realtimeTiming: { supplementWaitMs: 200 }, ...options });
    servers.push(server);
    return server;
  }

  it('ends with balance.exhausted and REALTIME_BALANCE_EXHAUSTED, reports the refused range, and never reconnects', async () => {
    const server = await serverWith(10);
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session, ['state', 'gap', 'reconnecting', 'notice', 'message', 'balance.exhausted', 'debug']);
    const pcm = speech(3, 5);
    // Written at once (no yield): all 40,000 samples are captured before the server can answer.
    await feed(session, pcm, 0, 40_000, 1000);
    const exhausted = await events.waitFor('balance.exhausted');
    expect(exhausted.receivedSamples).toBe(16_000);
    expect(exhausted.notice).toMatchObject({ code: 'BALANCE_EXHAUSTED', receivedSamples: '16000' });
    expect(exhausted.error.code).toBe('REALTIME_BALANCE_EXHAUSTED');
    // The refused range is what was captured past the limit, declared as a gap like any lost audio.
    expect(exhausted.notAccepted).toEqual({ from: 16_000, to: 40_000 });
    expect(events.all('gap')).toEqual([{ from: 16_000, to: 40_000, serverSample: 16_000, cause: 'refused', epoch: 1 }]);
    expect(session.writePcm16(pcm.subarray(40_000, 40_320))).toBe(0);

    const failure: unknown = await session.finish().then(() => undefined, (caught: unknown) => caught);
    expect(isSoundCloneError(failure, RealtimeError)).toBe(true);
    const error = failure as RealtimeError;
    expect(error).toMatchObject({ name: 'RealtimeError', code: 'REALTIME_BALANCE_EXHAUSTED', receivedSamples: 16_000, notAccepted: { from: 16_000, to: 40_000 } });
    expect(error.message).toContain('1.00 s');
    expect(error.session).toMatchObject({ status: 'PARTIAL', usage: { receivedSamples: 16_000n, billableCharacters: 10n } });
    expect(session.state).toBe('failed');
    expect(events.states().at(-1)).toBe('failed');
    // Not a network fault: no reconnect, one socket for the whole session.
    expect(events.all('reconnecting')).toEqual([]);
    const connections = new Set(server.sockets.log.filter((e) => e.sessionId === session.sessionId).map((e) => e.connectionId));
    expect(connections.size).toBe(1);
    // The server refused the frames in flight past the limit with their own code, and the SDK took them in stride.
    expect(events.all('debug').filter((d) => d.kind === 'refused').every((d) => d.detail?.['code'] === 'BALANCE_EXHAUSTED')).toBe(true);
    expect(session.notices.map((n) => n.code)).toEqual(['BALANCE_EXHAUSTED']);
    // Told live and again in the final view: the \`notice\` event says it once.
    expect(events.all('notice').map((n) => n.code)).toEqual(['BALANCE_EXHAUSTED']);
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm.subarray(0, 16_000));
    // A second finish answers the same error at once.
    await expect(session.finish()).rejects.toBe(error);
    const info = await client.user.info();
    expect(info.benefit.usedOrderChars + info.benefit.usedMonthlyChars).toBe(10);
  });

  it('creation below the minimum is InsufficientCharactersError; an account at its session limit is RateLimitError', async () => {
    const poor = await serverWith(9);
    const refused: unknown = await clientFor(poor).stt.realtime.connect({}).then(() => undefined, (caught: unknown) => caught);
    expect(refused).toBeInstanceOf(InsufficientCharactersError);
    expect(refused).toMatchObject({ code: 'INSUFFICIENT_CHARACTERS', status: 402 });

    const limited = await serverWith(100_000, { maxRealtimeSessionsPerAccount: 1 });
    const client = new SoundClone({ accessKey: KEY, baseUrl: limited.url, maxRetries: 0 });
    const first = await client.stt.realtime.connect({});
    const second: unknown = await client.stt.realtime.connect({}).then(() => undefined, (caught: unknown) => caught);
    expect(second).toBeInstanceOf(RateLimitError);
    expect(second).toMatchObject({ code: 'RATE_LIMITED', status: 429, details: { reason: 'ACCOUNT_SESSION_LIMIT', limit: 1 } });
    await first.finish();
  });
});
