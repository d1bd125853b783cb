import { afterEach, describe, expect, it } from 'vitest';
import type { AcceptedAudio } from '../../src/index.js';
import { start, type TestServer } from '../support/server.js';
import { connect, sleep, speech } from './support.js';

/**
 * ServerOptions.onAudio: told after each accepted frame, synchronously, before the service reads the
 * next message (what a test needs to act at an exact sample).
 */
describe('realtime: the onAudio observer', () => {
  const servers: TestServer[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('reports each accepted frame in order; duplicates report the unchanged position; skip and refused frames are not reported', async () => {
    const seen: AcceptedAudio[] = [];
    const server = await start({ onAudio: (audio) => seen.push(audio) });
    servers.push(server);
    const { created, peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal, 0, 3_200);
    await peer.acked(3_200);
    peer.frame(1, 2_880, signal.subarray(2_880, 3_200)); // duplicate of the last frame
    peer.skip(1, 3_200, 1_600); // skipped time is not audio
    peer.frame(7, 4_800, signal.subarray(4_800, 5_120)); // wrong epoch: refused
    peer.frame(1, 4_800, signal.subarray(4_800, 5_120));
    await peer.acked(5_120);
    expect(seen.every((a) => a.sessionId === created.sessionId)).toBe(true);
    expect(seen.map((a) => Number(a.receivedSamples))).toEqual([320, 640, 960, 1_280, 1_600, 1_920, 2_240, 2_560, 2_880, 3_200, 3_200, 5_120]);
  });

  it('acts before the next frame is read: a rotation asked for at 3,200 samples stops the burst there', async () => {
    let server: TestServer | undefined;
    server = await start({
      onAudio: ({ sessionId, receivedSamples }) => {
        if (receivedSamples === 3_200n) server?.faults.socket.rotateNow(sessionId);
      },
    });
    servers.push(server);
    const { peer } = await connect(server);
    const signal = speech(2);
    // 30 frames in one burst: they reach the server together, most in the same read.
    peer.stream(1, signal, 0, 9_600);
    await peer.waitFor('usage.updated', (m) => m.rotate === true);
    await peer.acked(3_200);
    // The 20 frames after it are refused, the first of them at the rotation point.
    for (let i = 0; i < 250 && peer.all('error').length < 20; i++) await sleep(20);
    await sleep(50);
    const acks = peer.all('audio.ack').map((m) => Number(m.receivedSamples));
    expect(Math.max(...acks)).toBe(3_200);
    const refused = peer.all('error');
    expect(refused.map((m) => m.code)).toEqual(Array(20).fill('NOT_ACCEPTING'));
    expect(refused[0].details.receivedSamples).toBe('3200');
  });

  it('an observer that throws does not disturb the session; the error is thrown again on its own', async () => {
    const thrown: unknown[] = [];
    const onError = (error: unknown): void => void thrown.push(error);
    process.prependListener('uncaughtException', onError);
    try {
      const server = await start({
        onAudio: () => {
          throw new Error('observer failed');
        },
      });
      servers.push(server);
      const { peer } = await connect(server);
      peer.stream(1, speech(1), 0, 960);
      await peer.acked(960);
      await sleep(10);
      expect(thrown.map((e) => (e as Error).message)).toEqual(['observer failed', 'observer failed', 'observer failed']);
    } finally {
      process.off('uncaughtException', onError);
    }
  });
});
