import { describe, expect, it } from 'vitest';
import { SOCKET_TOKEN } from '../../src/protocol.js';
import { serverForSuite } from '../support/server.js';
import { createSession, open, socketUrl } from './support.js';

/**
 * faults.socket.expireTokens: a session's socket tokens expire early, as if their ten minutes had
 * passed; the open socket goes on, the next upgrade with an old token is refused, a fresh token works.
 */
describe('realtime socket: tokens expired by a fault', () => {
  const server = serverForSuite();

  it('refuses the tokens issued so far, accepts one issued afterwards, and leaves other sessions alone', async () => {
    const created = await createSession(server);
    const bystander = await createSession(server);
    const first = await open(socketUrl(server, { token: created.socket.token }));
    await first.waitFor('session.ready');
    const refreshed = (await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/socket-token`)).body.data.token as string;

    server.faults.socket.expireTokens(created.sessionId);

    // The open socket outlives its token.
    first.json({ type: 'ping', id: 'still-open' });
    await first.waitFor('pong', (m) => m.id === 'still-open');
    for (const old of [created.socket.token, refreshed]) {
      await expect(open(socketUrl(server, { token: old }))).rejects.toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED', message: 'invalid or expired socket token' } });
    }
    const fresh = (await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/socket-token`)).body.data;
    expect(fresh.token).not.toBe(refreshed);
    // Dated from the session's moved token time: ten minutes and a second past the usual expiry at least.
    expect(Date.parse(fresh.expiresAt) - Date.now()).toBeGreaterThan((2 * SOCKET_TOKEN.ttlSec) * 1000);
    const second = await open(socketUrl(server, { token: fresh.token }));
    expect((await second.waitFor('session.ready')).sessionId).toBe(created.sessionId);
    await second.close();
    await first.close();

    const other = await open(socketUrl(server, { token: bystander.socket.token }));
    await other.waitFor('session.ready');
    await other.close();

    // Expiring again expires the fresh one too.
    server.faults.socket.expireTokens(created.sessionId);
    await expect(open(socketUrl(server, { token: fresh.token }))).rejects.toMatchObject({ status: 401 });
  });
});
