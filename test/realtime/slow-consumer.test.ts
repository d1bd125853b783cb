import type { RunningServer } from '@soundclone/server';
import { RealtimeError, isSoundCloneError } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

/**
 * Close 4429 SLOW_CONSUMER as the SDK sees it: a typed, reconnectable loss. The server's real
 * slow-consumer path is exercised in packages/server (test/realtime/flood.test.ts); here the server
 * closes with the same code through its fault injection so the client's side can be checked exactly.
 */
describe('realtime session: close 4429 SLOW_CONSUMER', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  it('reports REALTIME_SLOW_CONSUMER on the reconnecting event, reconnects and loses nothing', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ reconnect: { nextRetryDelayMs: () => 100 } });
    const events = new EventCapture(session);
    const pcm = speech(2, 51);
    await feed(session, pcm, 0, 12_000);
    server.faults.socket.closeSocket(session.sessionId, 4429, 'SLOW_CONSUMER');
    const info = await events.waitFor('reconnecting');
    expect(info.closeCode).toBe(4429);
    expect(isSoundCloneError(info.error, RealtimeError)).toBe(true);
    expect(info.error).toMatchObject({ name: 'RealtimeError', code: 'REALTIME_SLOW_CONSUMER', closeCode: 4429 });
    await feed(session, pcm, 12_000);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
  });
});
