import WebSocket from 'ws';
import { describe, expect, it } from 'vitest';
import { KEY_A, KEY_B, start, serverForSuite } from '../support/server.js';
import { createSession, open, socketUrl, speech } from './support.js';

describe('realtime socket: handshake and refusals', () => {
  const server = serverForSuite();

  it('accepts the accessKey header with sessionId and answers session.ready with everything needed to resume', async () => {
    const created = await createSession(server);
    expect(created.socket.url).toBe(socketUrl(server, {}).replace(/\?$/, ''));
    const peer = await open(socketUrl(server, { sessionId: created.sessionId }), { accessKey: KEY_A });
    const ready = await peer.waitFor('session.ready');
    expect(ready).toEqual({
      type: 'session.ready',
      connectionId: expect.stringMatching(/^cn_/),
      sessionId: created.sessionId,
      transcriptionId: created.transcriptionId,
      status: 'ACTIVE',
      epoch: 1,
      accepting: true,
      awaitingResume: false,
      receivedSamples: '0',
      sentSamples: '0',
      capturedSamples: '0',
      recoveryWindowMs: 60_000,
      recoveryDeadline: expect.any(String),
      heartbeatIntervalMs: 10_000,
      heartbeatTimeoutMs: 25_000,
      ackIntervalMs: 50,
      maxFrameSamples: 16_000,
      socketLifetimeMs: null,
      features: ['skip-frames'],
      session: expect.objectContaining({ sessionId: created.sessionId, connection: { attached: true, recoveryDeadline: null, recoveryExpired: false } }),
    });
    await peer.close();
  });

  it('accepts the browser token alone (the API key never reaches the page), bound to its session', async () => {
    const created = await createSession(server);
    const peer = await open(socketUrl(server, { token: created.socket.token }));
    expect((await peer.waitFor('session.ready')).sessionId).toBe(created.sessionId);
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    await peer.close();
    const other = await createSession(server);
    await expect(open(socketUrl(server, { token: created.socket.token, sessionId: other.sessionId }))).rejects.toMatchObject({ status: 400, body: { errorCode: 'INPUT_INVALID' } });
  });

  it('refuses unauthenticated upgrades with HTTP 401 and the failure envelope (no socket is opened)', async () => {
    const created = await createSession(server);
    const url = socketUrl(server, { sessionId: created.sessionId });
    await expect(open(url)).rejects.toMatchObject({ status: 401, body: { code: -1, errorCode: 'UNAUTHORIZED', message: 'missing accessKey header' } });
    await expect(open(url, { accessKey: 'nope' })).rejects.toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED' } });
    const forged = created.socket.token.slice(0, -3) + 'AAA';
    await expect(open(socketUrl(server, { token: forged }))).rejects.toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED', message: 'invalid or expired socket token' } });
    await expect(open(socketUrl(server, {}), { accessKey: KEY_A })).rejects.toMatchObject({ status: 400, body: { errorCode: 'INPUT_INVALID' } });
    await expect(open(`${server.url.replace('http', 'ws')}/sound_clone/api/v1/elsewhere`, { accessKey: KEY_A })).rejects.toMatchObject({ status: 404 });
  });

  it('reports an unknown or foreign session on the socket: error SESSION_NOT_FOUND, close 4404', async () => {
    const created = await createSession(server);
    for (const [sessionId, key] of [['rs_missing', KEY_A], [created.sessionId, KEY_B]] as const) {
      const peer = await open(socketUrl(server, { sessionId }), { accessKey: key });
      expect(await peer.waitFor('error')).toMatchObject({ code: 'SESSION_NOT_FOUND', fatal: true });
      expect((await peer.closed).code).toBe(4404);
    }
  });

  it('answers a finished session with its final view and close 4409', async () => {
    const created = await createSession(server);
    await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '0' } });
    const peer = await open(socketUrl(server, { token: created.socket.token }));
    expect((await peer.waitFor('session.finished')).session).toMatchObject({ status: 'COMPLETED' });
    expect((await peer.closed).code).toBe(4409);
  });

  it('replaces an older socket of the same session (close 4001): the newer one owns the session', async () => {
    const created = await createSession(server);
    const first = await open(socketUrl(server, { token: created.socket.token }));
    await first.waitFor('session.ready');
    const second = await open(socketUrl(server, { token: created.socket.token }));
    await second.waitFor('session.ready');
    expect((await first.closed).code).toBe(4001);
    expect(second.ws.readyState).toBe(WebSocket.OPEN);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.connection).toEqual({ attached: true, recoveryDeadline: null, recoveryExpired: false });
    await second.close();
  });

  it('tells attached sockets the server is going away (4503) when it closes', async () => {
    const other = await start();
    const created = await createSession(other);
    const peer = await open(socketUrl(other, { token: created.socket.token }));
    await peer.waitFor('session.ready');
    await other.close();
    expect((await peer.closed).code).toBe(4503);
    expect(other.sockets.size).toBe(0);
  });

  it('refuses an expired token (10 minutes) and applies HTTP faults to the upgrade', async () => {
    let offsetMs = 0;
    const clocked = await start({ clock: { now: () => Date.now() + offsetMs } });
    try {
      const created = await createSession(clocked);
      offsetMs = 11 * 60_000;
      await expect(open(socketUrl(clocked, { token: created.socket.token }))).rejects.toMatchObject({ status: 401, body: { errorCode: 'UNAUTHORIZED' } });
      offsetMs = 0;
      clocked.faults.inject({ path: '/stt/realtime/socket', action: { kind: 'status', status: 503, retryAfterSec: 1 } });
      await expect(open(socketUrl(clocked, { token: created.socket.token }))).rejects.toMatchObject({ status: 503, body: { errorCode: 'SERVICE_UNAVAILABLE' } });
      const peer = await open(socketUrl(clocked, { token: created.socket.token }));
      await peer.waitFor('session.ready');
      await peer.close();
    } finally {
      await clocked.close();
    }
  });
});
