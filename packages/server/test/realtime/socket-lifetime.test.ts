import { CLOSE_CODES, recycleNoticeMs } from '@soundclone/core/internal';
import { describe, expect, it } from 'vitest';
import { start, serverForSuite } from '../support/server.js';
import { connect, reconnect, sleep, speech, storedAudio } from './support.js';

/**
 * The socket lifetime limit (docs/protocol.md "Socket lifetime") as a client that ignores the notice
 * sees it: socket.recycle, then at the limit the exact audio.ack and close 4002; the next socket
 * continues from that very sample.
 */
describe('realtime socket: lifetime limit', () => {
  const LIFETIME_MS = 800;
  const server = serverForSuite({ realtimeTiming: { socketLifetimeMs: LIFETIME_MS }, retainRealtimeAudioSamples: 16_000 * 60 });

  it('a client that ignores socket.recycle is closed 4002 at the limit right behind the exact ack', async () => {
    const { created, peer, ready } = await connect(server);
    const readyAt = performance.now();
    expect(ready.socketLifetimeMs).toBe(LIFETIME_MS);
    const pcm = speech(4);
    let sent = 0;
    let noticeAt = 0;
    let closedAt = 0;
    const closed = peer.closed.then((c) => ((closedAt = performance.now()), c));
    void peer.waitFor('socket.recycle', () => true, 5000).then(() => (noticeAt = performance.now()));
    // A capture loop: 20 ms of audio every 20 ms, blind to the notice, until the server closes.
    while (closedAt === 0 && sent + 320 <= pcm.length) {
      peer.stream(1, pcm, sent, sent + 320);
      sent += 320;
      await sleep(20);
    }
    expect(await closed).toEqual({ code: CLOSE_CODES.SOCKET_RECYCLED, reason: 'socket recycled' });
    const notice = await peer.waitFor('socket.recycle');
    expect(notice).toEqual({ type: 'socket.recycle', closeInMs: recycleNoticeMs(LIFETIME_MS) });
    expect(recycleNoticeMs(LIFETIME_MS)).toBe(200);
    // Timers run late, never early (the slack is only for when each side read the message).
    expect(noticeAt - readyAt).toBeGreaterThanOrEqual(LIFETIME_MS - 200 - 50);
    expect(closedAt - readyAt).toBeGreaterThanOrEqual(LIFETIME_MS - 50);
    expect(closedAt - noticeAt).toBeGreaterThanOrEqual(200 - 50);
    // The last ack is the cut: exactly what the server stored, and the next socket starts there.
    const acks = peer.all('audio.ack');
    const cut = Number(acks[acks.length - 1].receivedSamples);
    expect(cut).toBeGreaterThan(0);
    expect(cut).toBeLessThanOrEqual(sent);
    const stored = await storedAudio(server, created.sessionId);
    expect(stored.length).toBe(cut);
    expect(stored).toEqual(pcm.subarray(0, cut));
    const next = await reconnect(server, created.sessionId);
    expect(next.ready).toMatchObject({ receivedSamples: String(cut), epoch: 1 });
    // The session never detached in between for long enough to matter: still ACTIVE, nothing expired.
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.connection).toMatchObject({ attached: true, recoveryExpired: false });
    expect(server.sockets.log.filter((e) => e.sessionId === created.sessionId && e.kind === 'recycled')).toHaveLength(1);
    await next.peer.close();
  });

  it('a newer socket opened on the notice replaces the old one (4001) before the limit: no 4002', async () => {
    const { created, peer } = await connect(server);
    await peer.waitFor('socket.recycle', () => true, 2000);
    const next = await reconnect(server, created.sessionId);
    expect((await peer.closed).code).toBe(CLOSE_CODES.REPLACED);
    await sleep(300); // past the old socket's limit
    expect(server.sockets.log.filter((e) => e.sessionId === created.sessionId && e.kind === 'recycled')).toHaveLength(0);
    expect(next.peer.ws.readyState).toBe(next.peer.ws.OPEN);
    await next.peer.close();
  });

  it('is off by default and refuses a lifetime that is not a whole number of milliseconds', async () => {
    const plain = await start();
    try {
      const { peer, ready } = await connect(plain);
      expect(ready.socketLifetimeMs).toBeNull();
      await peer.close();
    } finally {
      await plain.close();
    }
    await expect(start({ realtimeTiming: { socketLifetimeMs: 0 } })).rejects.toThrow(/socketLifetimeMs/);
    await expect(start({ realtimeTiming: { socketLifetimeMs: 1.5 } })).rejects.toThrow(/socketLifetimeMs/);
  });
});
