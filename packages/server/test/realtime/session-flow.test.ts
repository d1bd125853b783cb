import { describe, expect, it } from 'vitest';
import { start, serverForSuite } from '../support/server.js';
import { connect, createSession, open, sleep, socketUrl, speech, storedAudio } from './support.js';

/** Pause, rotation and resume over the socket, and the REST actions seen from the socket. */
describe('realtime socket: pause, rotation, resume', () => {
  const server = serverForSuite({ retainRealtimeAudioSamples: 16_000 * 60 });

  it('pause commits the open segment (the line comes before session.paused); resume starts the next epoch', async () => {
    const { created, peer } = await connect(server, { options: { segmentCommitMode: 'manual' } });
    const signal = speech(2);
    peer.stream(1, signal, 0, 16_000);
    await peer.acked(16_000);
    expect(peer.all('transcript.line')).toEqual([]);
    peer.json({ type: 'session.pause', capturedSamples: '16000' });
    const paused = await peer.waitFor('session.paused');
    expect(paused).toEqual({ type: 'session.paused', epoch: 1, receivedSamples: '16000', capturedSamples: '16000' });
    const types = peer.messages.map((m) => m.type);
    expect(types.indexOf('transcript.line')).toBeGreaterThan(-1);
    expect(types.indexOf('transcript.line')).toBeLessThan(types.indexOf('session.paused'));
    peer.json({ type: 'session.resume', epoch: 1 });
    expect(await peer.waitFor('session.resumed')).toEqual({ type: 'session.resumed', epoch: 2, receivedSamples: '16000' });
    // A repeated resume (say, after a reconnect) does not skip an epoch.
    peer.json({ type: 'session.resume', epoch: 1 });
    await peer.waitFor('session.resumed', () => peer.all('session.resumed').length === 2);
    expect(peer.all('session.resumed')[1].epoch).toBe(2);
    peer.json({ type: 'session.resume', epoch: 5 });
    expect(await peer.waitFor('error', (m) => m.code === 'WRONG_EPOCH')).toMatchObject({ details: { epoch: 2 } });
    peer.stream(2, signal, 16_000);
    await peer.acked(signal.length);
    expect(await storedAudio(server, created.sessionId)).toEqual(signal);
    await peer.close();
  });

  it('a REST pause reaches the attached socket; a REST finish sends session.finished and closes 4409', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/pause`, { json: { capturedSamples: String(signal.length) } });
    await peer.waitFor('session.paused');
    await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(signal.length) } });
    expect((await peer.waitFor('session.finished')).session.status).toBe('COMPLETED');
    expect((await peer.closed).code).toBe(4409);
  });

  it('rotates on the sample schedule: ack at the cut, usage.updated rotate true, audio only after session.resume', async () => {
    const rotating = await start({ realtimeTiming: { rotateEverySamples: 16_000 }, retainRealtimeAudioSamples: 16_000 * 10 });
    try {
      const { created, peer } = await connect(rotating);
      const signal = speech(2);
      expect(signal.length).toBeGreaterThan(32_000);
      expect(signal.length).toBeLessThan(48_000);
      // The client streams on; frames after the cut are refused until it resumes.
      peer.stream(1, signal, 0, 19_200);
      const rotate = await peer.waitFor('usage.updated', (m) => m.rotate === true);
      expect(rotate).toMatchObject({ epoch: 1, usage: { receivedSamples: '16000', accepting: false } });
      const ackIndex = peer.messages.findIndex((m) => m.type === 'audio.ack' && m.receivedSamples === '16000');
      expect(ackIndex).toBeGreaterThan(-1);
      expect(ackIndex).toBeLessThan(peer.messages.indexOf(rotate));
      await peer.waitFor('error', (m) => m.code === 'NOT_ACCEPTING');
      peer.json({ type: 'session.resume', epoch: 1 });
      const resumed = await peer.waitFor('session.resumed');
      expect(resumed).toEqual({ type: 'session.resumed', epoch: 2, receivedSamples: '16000' });
      peer.stream(2, signal, 16_000, 32_000);
      await peer.waitFor('usage.updated', (m) => m.rotate === true && m.epoch === 2);
      peer.json({ type: 'session.resume', epoch: 2 });
      await peer.waitFor('session.resumed', (m) => m.epoch === 3);
      peer.stream(3, signal, 32_000);
      await peer.acked(signal.length);
      expect(await storedAudio(rotating, created.sessionId)).toEqual(signal);
      const ids = peer.all('transcript.line').map((m) => m.line.id);
      expect(new Set(ids).size).toBe(ids.length);
      await peer.close();
    } finally {
      await rotating.close();
    }
  });

  it('rotates on the time schedule and on demand (faults.socket.rotateNow)', async () => {
    const timed = await start({ realtimeTiming: { rotateEveryMs: 150 } });
    try {
      const { peer } = await connect(timed);
      expect(await peer.waitFor('usage.updated', (m) => m.rotate === true)).toMatchObject({ epoch: 1 });
      await sleep(250);
      expect(peer.all('usage.updated').filter((m) => m.rotate)).toHaveLength(1); // never stacks
      peer.json({ type: 'session.resume', epoch: 1 });
      await peer.waitFor('session.resumed');
      await peer.waitFor('usage.updated', (m) => m.rotate === true && m.epoch === 2);
      await peer.close();
    } finally {
      await timed.close();
    }
    const { created, peer } = await connect(server);
    expect(server.faults.socket.rotateNow(created.sessionId)).toBe(true);
    expect(await peer.waitFor('usage.updated', (m) => m.rotate === true)).toMatchObject({ epoch: 1 });
    expect(server.faults.socket.rotateNow(created.sessionId)).toBe(false);
    await peer.close();
  });
});

describe('realtime socket: reconnect and the recovery window', () => {
  const server = serverForSuite({ retainRealtimeAudioSamples: 16_000 * 60, realtimeTiming: { recoveryWindowMs: 1000 } });

  it('a dropped socket reattaches within the window and resumes exactly at the received cursor', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(3);
    peer.stream(1, signal, 0, 20_000);
    await peer.acked(20_000);
    peer.ws.terminate();
    await peer.closed;
    await sleep(30);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.connection).toMatchObject({ attached: false, recoveryDeadline: expect.any(String), recoveryExpired: false });
    expect(view.status).toBe('ACTIVE');
    const again = await open(socketUrl(server, { token: created.socket.token }));
    const ready = await again.waitFor('session.ready');
    expect(ready).toMatchObject({ epoch: 1, accepting: true, receivedSamples: '20000', recoveryDeadline: view.connection.recoveryDeadline });
    // Lines committed before the drop are in the handshake's session view (the client dedups by id).
    expect(ready.session.lines.map((l: any) => l.id)).toEqual(peer.all('transcript.line').map((m) => m.line.id));
    again.stream(1, signal, Number(ready.receivedSamples));
    await again.acked(signal.length);
    again.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    expect((await again.waitFor('session.finished')).session.status).toBe('COMPLETED');
    expect(await storedAudio(server, created.sessionId)).toEqual(signal);
  });

  it('after the window passes the session refuses sockets (4410) and stays unfinished until a REST finish', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    await peer.close();
    await sleep(1100);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view).toMatchObject({ status: "ACTIVE", accepting: false, connection: { attached: false, recoveryDeadline: expect.any(String), recoveryExpired: true } });
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task.status).toBe('PROCESSING'); // a plain disconnect never completes the task
    const again = await open(socketUrl(server, { token: created.socket.token }));
    expect(await again.waitFor('error')).toMatchObject({ code: 'RECOVERY_WINDOW_EXPIRED', fatal: true });
    expect((await again.closed).code).toBe(4410);
    const started = Date.now();
    const finished = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(signal.length) } });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(finished.body.data).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: String(signal.length), billableCharacters: '20' } });
  });

  it('a session no socket ever reached expires too', async () => {
    const created = await createSession(server);
    await sleep(1100);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.connection.recoveryExpired).toBe(true);
  });
});
