import type { Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { start, type TestServer } from '../support/server.js';
import { connect, speech, type Peer } from './support.js';

/**
 * A client that stops reading (its TCP socket paused, so the server's writes pile up for real): past
 * partialSkipBufferedBytes partials are skipped (each supersedes the last) while acks and lines still
 * go; past maxBufferedBytes the socket closes with 4429 SLOW_CONSUMER. Small limits keep the audio short.
 */
const tcp = (peer: Peer): Socket => (peer.ws as unknown as { _socket: Socket })._socket;

/** Waits until the server took `samples` (the paused client cannot read the acks). */
async function received(server: TestServer, sessionId: string, samples: number): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (server.services.realtime.byId(sessionId)!.audio.received < BigInt(samples)) {
    if (Date.now() > deadline) throw new Error('the server did not take the audio in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('realtime socket: a client that stops reading', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('is closed with 4429 SLOW_CONSUMER once more than maxBufferedBytes wait for it', async () => {
    server = await start({ socket: { ackIntervalMs: 0, maxBufferedBytes: 64 << 10 } });
    const { created, peer } = await connect(server);
    tcp(peer).pause();
    // An ack per (tiny) frame: 200,000 acks, ~15 MB, more than loopback's socket buffers hold.
    const pcm = new Int16Array(32 * 200_000);
    peer.stream(1, pcm, 0, pcm.length, 32);
    const deadline = Date.now() + 30_000;
    while (!server.sockets.log.some((e) => e.sessionId === created.sessionId && e.kind === 'slow-consumer')) {
      if (Date.now() > deadline) throw new Error('no slow-consumer close in 30 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const entry = server.sockets.log.find((e) => e.sessionId === created.sessionId && e.kind === 'slow-consumer')!;
    expect(entry.detail?.['bufferedAmount']).toBeGreaterThan(64 << 10);
    // Reading again, the client gets what was queued and then the close code.
    tcp(peer).resume();
    const closed = await peer.closed;
    expect(closed).toEqual({ code: 4429, reason: 'SLOW_CONSUMER' });
    expect(peer.all('audio.ack').length).toBeGreaterThan(10);
    // The session is kept for a reconnect (SLOW_CONSUMER is a reconnectable close).
    expect(server.services.realtime.byId(created.sessionId)!.audio.state).toBe('ACTIVE');
  }, 60_000);

  it('skips partials while a backlog waits for the client, but still delivers every line and ack', async () => {
    server = await start({ socket: { ackIntervalMs: 0, partialSkipBufferedBytes: 16 << 10 } });
    const words = speech(30);
    // The lines and partials of the speech alone, for a client that reads.
    const reader = await connect(server);
    reader.peer.stream(1, words);
    reader.peer.json({ type: 'session.finish', capturedSamples: String(words.length) });
    // session.finished is followed by close 4409; waiting on the close keeps the message scan linear.
    await reader.peer.closed;
    const heard = reader.peer.all('session.finished')[0];
    const partialsRead = reader.peer.all('transcript.partial').length;
    expect(partialsRead).toBeGreaterThan(20);

    // The slow client sends ~6 minutes of silence in tiny frames first (an ack each: a backlog of ~15 MB,
    // beyond the kernel's buffers), then the same speech (whole 20 ms frames, so it decodes the same).
    const filler = 32 * 200_000;
    const pcm = new Int16Array(filler + words.length);
    pcm.set(words, filler);
    const slow = await connect(server);
    tcp(slow.peer).pause();
    slow.peer.stream(1, pcm, 0, filler, 32);
    slow.peer.stream(1, pcm, filler, pcm.length);
    await received(server, slow.created.sessionId, pcm.length);
    tcp(slow.peer).resume();
    // Finish only once the backlog is read: the server ends a socket that leaves its close frame unread.
    await until(() => slow.peer.all('audio.ack').at(-1)?.receivedSamples === String(pcm.length));
    slow.peer.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    expect((await slow.peer.closed).code).toBe(4409);
    const finished = slow.peer.all('session.finished')[0];
    const texts = (m: { session: { lines: Array<{ text: string }> } }): string[] => m.session.lines.map((l) => l.text);
    expect(texts(finished)).toEqual(texts(heard));
    expect(slow.peer.all('transcript.line').map((m: { line: { text: string } }) => m.line.text)).toEqual(texts(heard));
    expect(slow.peer.all('transcript.partial').length).toBeLessThan(partialsRead / 2);
    expect(slow.peer.all('audio.ack').at(-1).receivedSamples).toBe(String(pcm.length));
    expect(server.sockets.log.some((e) => e.sessionId === slow.created.sessionId && e.kind === 'slow-consumer')).toBe(false);
  }, 60_000);
});
