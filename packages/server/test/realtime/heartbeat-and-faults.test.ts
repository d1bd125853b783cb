import { describe, expect, it } from 'vitest';
import { serverForSuite } from '../support/server.js';
import { connect, sleep, speech } from './support.js';

/** Liveness and the socket faults users test their apps with (server.faults.socket). */
describe('realtime socket: heartbeat and fault injection', () => {
  // A timeout well above the interval: a busy test machine must not look like a dead peer.
  const server = serverForSuite({ socket: { heartbeatIntervalMs: 40, heartbeatTimeoutMs: 400 } });

  it('pings every interval and answers client pings; a live client stays connected', async () => {
    const { peer, ready } = await connect(server);
    expect(ready).toMatchObject({ heartbeatIntervalMs: 40, heartbeatTimeoutMs: 400 });
    await sleep(400);
    const pings = peer.all('ping');
    expect(pings.length).toBeGreaterThanOrEqual(3);
    expect(pings.map((p) => p.id)).toEqual(pings.map((_p, i) => i + 1));
    peer.json({ type: 'ping', id: 'c1' });
    expect(await peer.waitFor('pong')).toEqual({ type: 'pong', id: 'c1' });
    expect(peer.ws.readyState).toBe(peer.ws.OPEN);
    await peer.close();
  });

  it('closes a client that went silent (4408) and starts the recovery window', async () => {
    const { created, peer } = await connect(server);
    peer.answerPings = false;
    const closed = await peer.closed;
    expect(closed.code).toBe(4408);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.connection).toMatchObject({ attached: false, recoveryDeadline: expect.any(String) });
    expect(server.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'heartbeat-timeout')).toBe(true);
  });

  it('half-open: the server stops reading and writing; the client hears nothing; the server side ends it by heartbeat', async () => {
    const { created, peer } = await connect(server);
    await peer.waitFor('ping');
    expect(server.faults.socket.halfOpen(created.sessionId)).toBe(true);
    const seen = peer.messages.length;
    const signal = speech(1);
    peer.stream(1, signal, 0, 3200);
    await sleep(120);
    expect(peer.messages.length).toBe(seen); // no acks, no pings: what a client must detect
    const closed = await peer.closed;
    expect(closed.code).toBe(1006); // no close frame crosses a dead path
    expect((await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data.usage.receivedSamples).toBe('0');
    expect(server.sockets.size).toBe(0);
  });

  it('forced close with a chosen code', async () => {
    const { created, peer } = await connect(server);
    expect(server.faults.socket.closeSocket(created.sessionId, 4000, 'chaos')).toBe(true);
    expect(await peer.closed).toEqual({ code: 4000, reason: 'chaos' });
    expect(server.faults.socket.closeSocket(created.sessionId)).toBe(false);
  });

  it('withheld acks resume with the cursor reached meanwhile; delayed acks arrive late', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(1);
    const withhold = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: created.sessionId });
    peer.stream(1, signal);
    await peer.waitFor('transcript.line');
    await sleep(50);
    expect(peer.all('audio.ack')).toEqual([]);
    withhold.remove();
    expect((await peer.waitFor('audio.ack')).receivedSamples).toBe(String(signal.length));
    await peer.close();

    const second = await connect(server);
    server.faults.socket.inject({ kind: 'delayAcks', ms: 150, sessionId: second.created.sessionId });
    const sentAt = performance.now();
    second.peer.frame(1, 0, signal.subarray(0, 320));
    await second.peer.acked(320);
    expect(performance.now() - sentAt).toBeGreaterThanOrEqual(140);
    await second.peer.close();
    server.faults.socket.clear();
  });

  it('slow consumer: the server delays its reads, the stream still arrives whole', async () => {
    const { created, peer } = await connect(server);
    server.faults.socket.inject({ kind: 'slowReads', ms: 15, sessionId: created.sessionId });
    const signal = speech(1).subarray(0, 16_000);
    const started = performance.now();
    peer.stream(1, signal, 0, signal.length, 1600);
    await peer.acked(signal.length);
    expect(performance.now() - started).toBeGreaterThanOrEqual(100);
    await peer.close();
    server.faults.socket.clear();
  });
});
