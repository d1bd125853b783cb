import { describe, expect, it } from 'vitest';
import { start, serverForSuite } from '../support/server.js';
import { connect, speech, storedAudio } from './support.js';

describe('realtime socket: streaming', () => {
  const server = serverForSuite({ retainRealtimeAudioSamples: 16_000 * 120 });

  it('streams 20 ms frames: exact ack cursor, partials, each line once with its supplements, finish over the socket', async () => {
    const { created, peer, ready } = await connect(server, { options: { includeDetectedLanguage: true, entityCategories: ['name'] } });
    expect(ready).toMatchObject({ type: 'session.ready', sessionId: created.sessionId, epoch: 1, accepting: true, awaitingResume: false, receivedSamples: '0', capturedSamples: '0', recoveryDeadline: expect.any(String), heartbeatIntervalMs: 10_000, maxFrameSamples: 16_000 });
    expect(ready.session).toMatchObject({ sessionId: created.sessionId, status: 'ACTIVE', lines: [] });
    const signal = speech(4);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    const acks = peer.all('audio.ack').map((m) => Number(m.receivedSamples));
    expect([...acks].sort((a, b) => a - b)).toEqual(acks);
    expect(peer.all('transcript.partial').length).toBeGreaterThan(0);
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect((await peer.closed).code).toBe(4409);
    const lines = peer.all('transcript.line');
    const ids = lines.map((m) => m.line.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(finished.session.lines.map((l: any) => l.id));
    expect(lines.length).toBe(4);
    for (const kind of ['transcript.alignment', 'transcript.entities', 'transcript.language']) {
      expect(peer.all(kind).map((m) => m.lineId)).toEqual(ids);
    }
    expect(peer.all('transcript.entities').every((m) => Array.isArray(m.entities))).toBe(true);
    expect(finished.session).toMatchObject({ status: 'COMPLETED', accepting: false });
    expect(finished.session.usage).toMatchObject({ receivedSamples: String(signal.length), capturedSamples: String(signal.length) });
    expect(await storedAudio(server, created.sessionId)).toEqual(signal);
  });

  it('drops duplicate frames and trims overlaps: the stored audio is bit-identical to what was sent', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(2, 7);
    // 20 ms frames, each sent twice, with every third frame starting 100 samples early (overlap).
    for (let at = 0, i = 0; at < signal.length; at += 320, i++) {
      const from = i % 3 === 2 ? Math.max(0, at - 100) : at;
      const end = Math.min(signal.length, at + 320);
      peer.frame(1, from, signal.subarray(from, end));
      peer.frame(1, from, signal.subarray(from, end));
    }
    await peer.acked(signal.length);
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.usage).toMatchObject({ receivedSamples: String(signal.length), sentSamples: String(signal.length) });
    expect(await storedAudio(server, created.sessionId)).toEqual(signal);
    expect(peer.all('error')).toEqual([]);
    await peer.close();
  });

  it('serves the stored audio only when the server retains it (test-only read)', async () => {
    const { start } = await import('../support/server.js');
    const plain = await start();
    try {
      const { created, peer } = await connect(plain);
      const r = await plain.call('GET', `/stt/realtime/sessions/${created.sessionId}/audio`);
      expect(r.status).toBe(404);
      await peer.close();
    } finally {
      await plain.close();
    }
  });
});
