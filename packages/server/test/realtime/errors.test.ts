import { describe, expect, it } from 'vitest';
import { serverForSuite } from '../support/server.js';
import { connect, encodeFrame, speech } from './support.js';

/** Bad input gets typed errors and never crashes the server. */
describe('realtime socket: refused frames and messages', () => {
  const server = serverForSuite({ socket: { maxFrameSamples: 4000, maxConsecutiveErrors: 20 } });

  it('refuses wrong epochs, gaps, oversized and malformed frames with typed errors and keeps the socket', async () => {
    const { peer } = await connect(server);
    const signal = speech(1);
    peer.frame(1, 0, signal.subarray(0, 320));
    await peer.acked(320);
    peer.frame(2, 320, signal.subarray(320, 640));
    expect(await peer.waitFor('error', (m) => m.code === 'WRONG_EPOCH')).toEqual({
      type: 'error', code: 'WRONG_EPOCH', message: expect.any(String), fatal: false,
      details: { epoch: 1, receivedSamples: '320', frameEpoch: 2, startSample: '320', accepting: true },
    });
    peer.frame(1, 1000, signal.subarray(1000, 1320));
    expect(await peer.waitFor('error', (m) => m.code === 'BEYOND_CURSOR')).toMatchObject({ fatal: false, details: { receivedSamples: '320', startSample: '1000' } });
    peer.frame(1, 320, signal.subarray(320, 4321));
    expect(await peer.waitFor('error', (m) => m.code === 'FRAME_TOO_LARGE')).toMatchObject({ details: { maxFrameSamples: 4000, sampleCount: 4001 } });
    const bad = encodeFrame(1, 320, signal.subarray(320, 640));
    bad[0] = 0x00;
    peer.ws.send(bad);
    expect(await peer.waitFor('error', (m) => m.code === 'BAD_FRAME')).toMatchObject({ details: { reason: 'BAD_MAGIC' } });
    peer.ws.send(encodeFrame(1, 320, signal.subarray(320, 640)).subarray(0, 17));
    await peer.waitFor('error', (m) => m.details?.reason === 'ODD_LENGTH');
    peer.ws.send(Buffer.alloc(5));
    await peer.waitFor('error', (m) => m.details?.reason === 'TOO_SHORT');
    const far = encodeFrame(1, 0, signal.subarray(0, 2));
    far.writeUInt32LE(1 << 21, 12);
    peer.ws.send(far);
    await peer.waitFor('error', (m) => m.details?.reason === 'START_TOO_LARGE');
    // Nothing of that was stored; the stream continues from the cursor.
    peer.stream(1, signal, 320);
    await peer.acked(signal.length);
    await peer.close();
  });

  it('answers garbage JSON with BAD_JSON, invalid fields with BAD_MESSAGE, and ignores unknown types (logged)', async () => {
    const { created, peer } = await connect(server);
    peer.ws.send('{not json');
    expect(await peer.waitFor('error', (m) => m.code === 'BAD_JSON')).toMatchObject({ fatal: false });
    peer.ws.send('[1,2]');
    peer.ws.send('{"kind":"x"}');
    await peer.waitFor('error', (m) => m.code === 'BAD_JSON' && m.message.includes('type'));
    peer.json({ type: 'session.pause', capturedSamples: '-5' });
    expect(await peer.waitFor('error', (m) => m.code === 'BAD_MESSAGE')).toMatchObject({ details: { violations: [{ field: 'capturedSamples' }] } });
    peer.json({ type: 'session.resume' });
    await peer.waitFor('error', (m) => m.code === 'BAD_MESSAGE' && m.message.includes('epoch'));
    peer.json({ type: 'session.finish', capturedSamples: 'lots' });
    await peer.waitFor('error', () => peer.all('error').filter((e) => e.code === 'BAD_MESSAGE').length === 3);
    const errorsBefore = peer.all('error').length;
    peer.json({ type: 'session.teleport', to: 'mars' });
    peer.json({ type: 'ping', id: 7 });
    expect(await peer.waitFor('pong')).toEqual({ type: 'pong', id: 7 });
    expect(peer.all('error').length).toBe(errorsBefore);
    expect(server.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'unknown-message' && e.detail?.['type'] === 'session.teleport')).toBe(true);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.status).toBe('ACTIVE');
    await peer.close();
  });

  it('closes with 4400 PROTOCOL_VIOLATION after too many refused frames in a row; other sessions are untouched', async () => {
    const a = await connect(server);
    const b = await connect(server);
    const signal = speech(1);
    for (let i = 0; i < 25; i++) a.peer.frame(9, 0, signal.subarray(0, 320));
    expect(await a.peer.waitFor('error', (m) => m.code === 'PROTOCOL_VIOLATION')).toMatchObject({ fatal: true });
    expect((await a.peer.closed).code).toBe(4400);
    b.peer.stream(1, signal);
    await b.peer.acked(signal.length);
    await b.peer.close();
  });

  it('frames in flight past a rotation the server started are refused but not counted toward 4400', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal, 0, 3200);
    await peer.acked(3200);
    expect(server.faults.socket.rotateNow(created.sessionId)).toBe(true);
    // A finishing client may have many frames on the wire before it hears the rotation: more than the limit (20).
    for (let i = 0; i < 30; i++) peer.frame(1, 3200 + i * 320, signal.subarray(3200 + i * 320, 3520 + i * 320));
    await peer.waitFor('usage.updated', (m) => m.rotate === true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peer.all('error').filter((m) => m.code === 'NOT_ACCEPTING')).toHaveLength(30);
    expect(peer.all('error').filter((m) => m.code === 'PROTOCOL_VIOLATION')).toEqual([]);
    peer.json({ type: 'session.resume', epoch: 1 });
    expect(await peer.waitFor('session.resumed')).toMatchObject({ epoch: 2, receivedSamples: '3200' });
    await peer.close();
  });

  it('refuses audio while paused with NOT_ACCEPTING', async () => {
    const { peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal, 0, 3200);
    peer.json({ type: 'session.pause', capturedSamples: '3200' });
    await peer.waitFor('session.paused');
    peer.frame(1, 3200, signal.subarray(3200, 3520));
    expect(await peer.waitFor('error', (m) => m.code === 'NOT_ACCEPTING')).toMatchObject({ details: { accepting: false, receivedSamples: '3200' } });
    await peer.close();
  });
});
