import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type ServerOptions } from '../../src/index.js';
import { ChaosProxy } from '../../src/testing/chaos-proxy.js';
import { postgresForFile } from '../support/postgres.js';
import { redisForFile } from '../support/redis.js';
import { freePort } from '../support/round-robin.js';
import { KEY_A, PREFIX, start, type TestServer } from '../support/server.js';
import { createSession, open, sleep, socketUrl, speech, storedAudio, type Peer } from '../realtime/support.js';
import { PocketSphinxRecognizer } from '../../src/recognition/pocketsphinx/pocketsphinx-recognizer.js';
import { CLIP_0880, CLIP_0930, concat, readClip } from '../recognition/support.js';

/**
 * Realtime sessions with their live state in Redis (startServer redisUrl), two nodes in this process on
 * one PostgreSQL and one Redis. A node "dies" here by close() (its leases let go) or by losing its
 * lease to a forced takeover; kill -9 of node processes is in test/realtime/node-death.test.ts.
 */
describe('live state in Redis', () => {
  const pgsql = postgresForFile();
  const redis = redisForFile();
  const stops: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  const node = async (databaseUrl: string, options: Partial<ServerOptions> = {}): Promise<TestServer> => {
    const server = await start({ databaseUrl, redisUrl: redis.url, retainRealtimeAudioSamples: 60 * 16_000, nodeTiming: { heartbeatMs: 200, staleAfterMs: 1000, sweepEveryMs: 200 }, ...options });
    let closed = false;
    stops.push(async () => {
      if (!closed) await server.close();
    });
    const close = server.close;
    return Object.assign(server, {
      close: async () => {
        closed = true;
        await close();
      },
    });
  };

  /** One node's uninterrupted run of `pcm` (streamed, finished): its peer, with every message it got. */
  const uninterrupted = async (server: TestServer, pcm: Int16Array, timeoutMs = 5000): Promise<Peer> => {
    const alone = await createSession(server);
    const whole = await open(socketUrl(server, { sessionId: alone.sessionId }), { accessKey: KEY_A });
    await whole.waitFor('session.ready', undefined, timeoutMs);
    whole.stream(1, pcm);
    await whole.acked(pcm.length, timeoutMs * 2);
    whole.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    await whole.waitFor('session.finished', undefined, timeoutMs);
    return whole;
  };

  /** What the ack messages of a peer said, as numbers. */
  const acks = (peer: Peer): number[] => peer.all('audio.ack').map((m) => Number(m.receivedSamples));

  it('refuses a redis URL without a database URL, one that is not redis://, and a Redis that does not answer: typed, nothing left running', async () => {
    await expect(startServer({ accessKeys: [KEY_A], redisUrl: redis.url })).rejects.toMatchObject({ name: 'LiveStateError', code: 'REDIS_NEEDS_DATABASE' });
    const databaseUrl = await pgsql.freshDatabase();
    await expect(startServer({ accessKeys: [KEY_A], databaseUrl, redisUrl: 'http://127.0.0.1:1' })).rejects.toMatchObject({ name: 'LiveStateError', code: 'REDIS_URL_INVALID' });
    await expect(startServer({ accessKeys: [KEY_A], databaseUrl, redisUrl: `redis://127.0.0.1:${await freePort()}` })).rejects.toMatchObject({ name: 'LiveStateError', code: 'REDIS_UNAVAILABLE' });
  });

  it('an audio.ack says only what Redis holds; the session moves to another node after its node closes, nothing lost or doubled, lines once, finished once', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const a = await node(databaseUrl);
    const b = await node(databaseUrl);
    const pcm = speech(4);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready');
    const cut = Math.floor(pcm.length / 2 / 320) * 320;
    first.stream(1, pcm, 0, cut);
    await first.acked(cut);
    expect(Math.max(...acks(first))).toBe(cut);
    // What was acknowledged is in Redis: the cursor, and the open segment's audio from its anchor.
    const kept = new Redis(redis.url);
    try {
      const meta = JSON.parse((await kept.get(`sc:rs:{${created.sessionId}}:meta`)) ?? '{}');
      expect(Number(meta.received)).toBeGreaterThanOrEqual(cut);
      const open = await kept.getBuffer(`sc:rs:{${created.sessionId}}:open`);
      expect((open?.length ?? 0) / 2).toBe(Number(meta.received) - Number(meta.anchor));
      expect(Buffer.from(pcm.buffer, pcm.byteOffset + Number(meta.anchor) * 2, (Number(meta.received) - Number(meta.anchor)) * 2).equals(open ?? Buffer.alloc(0))).toBe(true);
      expect(await kept.llen(`sc:rs:{${created.sessionId}}:lines`)).toBeGreaterThan(0);
    } finally {
      kept.disconnect();
    }
    const linesBefore = first.all('transcript.line').map((m) => m.line.id);
    expect(linesBefore.length).toBeGreaterThan(0);

    await a.close();
    const closed = await first.closed;
    expect(closed).toEqual({ code: 4503, reason: 'session moved' });
    // The socket reaches B (a balancer would send it there): B takes the session over.
    const second = await open(socketUrl(b, { sessionId: created.sessionId }), { accessKey: KEY_A });
    const ready = await second.waitFor('session.ready');
    expect(ready).toMatchObject({ sessionId: created.sessionId, receivedSamples: String(cut), epoch: 1, accepting: true });
    expect(b.services.realtime.byId(created.sessionId)).toBeDefined();
    second.stream(1, pcm, cut, pcm.length);
    await second.acked(pcm.length);
    second.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    const finished = await second.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: String(pcm.length) } });

    // Lines: those of A, then B's; none twice; the same as one node's uninterrupted run.
    const lineIds = [...linesBefore, ...second.all('transcript.line').map((m) => m.line.id)];
    expect(new Set(lineIds).size).toBe(lineIds.length);
    const whole = await uninterrupted(await node(await pgsql.freshDatabase()), pcm);
    expect(finished.session.lines).toEqual(whole.all('session.finished')[0].session.lines);
    expect(finished.session.lines.length).toBeGreaterThanOrEqual(4);

    const stored = await storedAudio(b, created.sessionId);
    expect(stored.length).toBe(pcm.length);
    expect(Buffer.from(stored.buffer).equals(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(true);
    const task = (await b.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task.billing).toMatchObject({ state: 'SETTLED' });
    const again = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(pcm.length) } });
    expect(again.status).toBe(200);
    expect((await b.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data.billing).toEqual(task.billing);
  });

  it('a node whose lease another node took writes nothing more: it lets the session go at once (4503), and never acknowledged past what the new owner started from', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const a = await node(databaseUrl);
    const b = await node(databaseUrl);
    const pcm = speech(3);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready');
    const third = Math.floor(pcm.length / 3 / 320) * 320;
    first.stream(1, pcm, 0, third);
    await first.acked(third);
    // B takes the session as if A were dead (force): a new fencing token.
    const row = await b.services.store.nodes.session(created.sessionId);
    if (row === undefined) throw new Error('no session row');
    await b.services.takeover?.adopt(row, true);
    first.stream(1, pcm, third, 2 * third);
    const closed = await first.closed;
    expect(closed).toEqual({ code: 4503, reason: 'session moved' });
    expect(a.services.realtime.byId(created.sessionId)).toBeUndefined();
    const second = await open(socketUrl(b, { sessionId: created.sessionId }), { accessKey: KEY_A });
    const ready = await second.waitFor('session.ready');
    expect(Number(ready.receivedSamples)).toBe(third);
    expect(Math.max(...acks(first))).toBeLessThanOrEqual(third);
    second.stream(1, pcm, Number(ready.receivedSamples), pcm.length);
    await second.acked(pcm.length);
    expect(Buffer.from((await storedAudio(b, created.sessionId)).buffer).equals(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(true);
  });

  it('a node cut off from Redis (a proxy between them stops answering) stops taking audio before its lease lapses; the session moves to another node', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    // Substituted for a network partition: a TCP proxy in front of Redis for node A alone, made half-open.
    const proxy = await new ChaosProxy(redis.server.port).listen();
    stops.push(() => proxy.close());
    const a = await node(databaseUrl, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
    const b = await node(databaseUrl);
    const pcm = speech(3);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready');
    const half = Math.floor(pcm.length / 2 / 320) * 320;
    first.stream(1, pcm, 0, half);
    await first.acked(half);
    proxy.halfOpen();
    // Audio keeps coming; A can make none of it durable, so acknowledges none of it.
    first.stream(1, pcm, half, half + 3200);
    const closed = await first.closed;
    expect(closed.code).toBe(4503);
    expect(Math.max(...acks(first))).toBe(half);
    // The client retries (the balancer would pick any node): B refuses while A's lease holds, then takes it.
    let ready: any;
    let second: Peer | undefined;
    for (let attempt = 0; attempt < 40 && ready === undefined; attempt++) {
      try {
        second = await open(socketUrl(b, { sessionId: created.sessionId }), { accessKey: KEY_A });
        ready = await second.waitFor('session.ready');
      } catch {
        await sleep(100);
      }
    }
    expect(ready).toMatchObject({ receivedSamples: String(half) });
    // A had let the session go before B attached a socket to it: never two nodes taking its audio.
    const movedOnA = a.sockets.log.find((e) => e.sessionId === created.sessionId && e.kind === 'moved');
    const connectedOnB = b.sockets.log.find((e) => e.sessionId === created.sessionId && e.kind === 'connected');
    expect(movedOnA).toBeDefined();
    expect(connectedOnB).toBeDefined();
    expect((movedOnA?.at ?? Infinity) <= (connectedOnB?.at ?? -Infinity)).toBe(true);
    second?.stream(1, pcm, half, pcm.length);
    await second?.acked(pcm.length);
    expect(Buffer.from((await storedAudio(b, created.sessionId)).buffer).equals(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(true);
  });

  it('a line committed while Redis does not answer is never sent by that node: the client gets it once, from the node that takes over, as in an uninterrupted run', async () => {
    const pcm = speech(3);
    // Where the lines end, from one node's uninterrupted run.
    const reference = (await uninterrupted(await node(await pgsql.freshDatabase()), pcm)).all('transcript.line').map((m) => m.line);
    expect(reference.length).toBe(3);

    const databaseUrl = await pgsql.freshDatabase();
    // Substituted for a network partition: a TCP proxy in front of Redis for node A alone, made half-open.
    const proxy = await new ChaosProxy(redis.server.port).listen();
    stops.push(() => proxy.close());
    const a = await node(databaseUrl, { redisUrl: `redis://127.0.0.1:${proxy.port}` });
    const b = await node(databaseUrl);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready');
    // Up to the second line's last word, then Redis stops answering A, then the silence that commits it.
    const secondEnds = Math.floor((reference[1].endMs * 16) / 320) * 320;
    first.stream(1, pcm, 0, secondEnds);
    await first.acked(secondEnds);
    expect(first.all('transcript.line').map((m) => m.line.id)).toEqual([reference[0].id]);
    proxy.halfOpen();
    const past = Math.min(pcm.length, secondEnds + 16_000);
    first.stream(1, pcm, secondEnds, past);
    await expect.poll(() => a.services.realtime.byId(created.sessionId)?.audio.lines.length ?? 2, { timeout: 5_000 }).toBe(2);
    expect((await first.closed).code).toBe(4503);
    // A committed the second line but could not make it durable: it never sent it.
    expect(first.all('transcript.line').map((m) => m.line.id)).toEqual([reference[0].id]);

    let second: Peer | undefined;
    for (let attempt = 0; attempt < 40 && second === undefined; attempt++) {
      try {
        const peer = await open(socketUrl(b, { sessionId: created.sessionId }), { accessKey: KEY_A });
        await peer.waitFor('session.ready');
        second = peer;
      } catch {
        await sleep(100);
      }
    }
    const resumed = second as Peer;
    const from = Number(resumed.all('session.ready')[0].receivedSamples);
    resumed.stream(1, pcm, from, pcm.length);
    await resumed.acked(pcm.length);
    resumed.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    await resumed.waitFor('session.finished');
    const seen = [...first.all('transcript.line'), ...resumed.all('transcript.line')].map((m) => m.line);
    expect(seen.map((l) => l.id)).toEqual(reference.map((l) => l.id));
    expect(seen.map((l) => [l.text, l.startMs, l.endMs])).toEqual(reference.map((l) => [l.text, l.startMs, l.endMs]));
  });

  it('REST GET, pause and finish of a session whose node is gone work on another node: it takes the session over on the first of them', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const a = await node(databaseUrl);
    const b = await node(databaseUrl);
    const pcm = speech(2);
    const created = await createSession(a);
    const peer = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    peer.stream(1, pcm);
    await peer.acked(pcm.length);
    await a.close();
    await peer.closed;
    const view = await b.call('GET', `/stt/realtime/sessions/${created.sessionId}`);
    expect(view.status).toBe(200);
    expect(view.body.data).toMatchObject({ sessionId: created.sessionId, status: 'ACTIVE', usage: { receivedSamples: String(pcm.length) } });
    expect(b.services.realtime.byId(created.sessionId)).toBeDefined();
    const paused = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/pause`, { json: { capturedSamples: String(pcm.length) } });
    expect(paused.body.data).toMatchObject({ status: 'PAUSED', accepting: false });
    const finished = await b.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(pcm.length) } });
    expect(finished.body.data).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: String(pcm.length) } });
    expect(finished.body.data.lines.length).toBeGreaterThanOrEqual(2);
    // Its live state is gone with the finish; the database has the task.
    const kept = new Redis(redis.url);
    try {
      expect(await kept.exists(`sc:rs:{${created.sessionId}}:meta`, `sc:rs:{${created.sessionId}}:open`, `sc:rs:{${created.sessionId}}:lease`)).toBe(0);
    } finally {
      kept.disconnect();
    }
  });

  it('Redis restarted empty: the sessions cannot go on; a reconnect finds the session ended, failed with nothing charged (once it is older than lostAfterMs)', async () => {
    const databaseUrl = await pgsql.freshDatabase();
    const a = await node(databaseUrl, { liveTiming: { lostAfterMs: 0 } });
    const pcm = speech(2);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready');
    first.stream(1, pcm);
    await first.acked(pcm.length);
    await redis.server.halt();
    expect(await first.closed).toEqual({ code: 4503, reason: 'session moved' });
    await redis.server.resume();
    let finished: any;
    for (let attempt = 0; attempt < 50 && finished === undefined; attempt++) {
      try {
        const again = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
        finished = await again.waitFor('session.finished');
      } catch {
        await sleep(100);
      }
    }
    expect(finished.session).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true } });
    const task = (await a.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'FAILED', error: { message: expect.stringContaining('live state of this realtime session was lost') }, billing: { state: 'RELEASED', settledCharacters: '0' } });
  });

  it('an engine without restart points (PocketSphinx) taken over in the middle of a line: the new node recognises the open segment afresh and its line times stay in session time, as in one node\'s uninterrupted run', async () => {
    const recognizers: PocketSphinxRecognizer[] = [];
    const withSphinx = async (databaseUrl: string): Promise<TestServer> => {
      const recognizer = new PocketSphinxRecognizer({ maxDecoders: 2, maxIdleDecoders: 0 });
      recognizers.push(recognizer);
      stops.push(async () => recognizer.close());
      return node(databaseUrl, { recognizer });
    };
    const silence = (seconds: number): Int16Array => new Int16Array(16_000 * seconds);
    const pcm = concat(silence(0.5), readClip(CLIP_0880.path), silence(1), readClip(CLIP_0930.path), silence(1));
    const databaseUrl = await pgsql.freshDatabase();
    const a = await withSphinx(databaseUrl);
    const b = await withSphinx(databaseUrl);
    const created = await createSession(a);
    const first = await open(socketUrl(a, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await first.waitFor('session.ready', undefined, 30_000);
    // The cut falls inside the second clip: one line is committed on A, the second is open.
    const secondClip = 16_000 * 0.5 + readClip(CLIP_0880.path).length + 16_000;
    const cut = Math.floor((secondClip + 16_000) / 320) * 320;
    first.stream(1, pcm, 0, cut);
    await first.acked(cut, 120_000);
    await expect.poll(() => first.all('transcript.line').length, { timeout: 20_000 }).toBeGreaterThanOrEqual(1);
    const anchorMs = (Number(JSON.parse((await redisMeta(created.sessionId)) ?? '{}').anchor) * 1000) / 16_000;
    expect(anchorMs).toBeGreaterThan(3_000);
    await a.close();
    await first.closed;
    const second = await open(socketUrl(b, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await second.waitFor('session.ready', undefined, 30_000);
    second.stream(1, pcm, cut, pcm.length);
    await second.acked(pcm.length, 120_000);
    second.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    await second.waitFor('session.finished', undefined, 30_000);
    // The lines as the sockets delivered them (with their times): A's, then B's.
    const moved = [...first.all('transcript.line'), ...second.all('transcript.line')].map((m) => m.line as { text: string; startMs: number; endMs: number });

    const whole = await uninterrupted(await withSphinx(await pgsql.freshDatabase()), pcm, 60_000);
    const reference = whole.all('transcript.line').map((m) => m.line as { text: string; startMs: number; endMs: number });

    expect(moved.length).toBe(reference.length);
    expect(moved.length).toBe(2);
    // The line B recognised starts after the anchor, in session time (counted from B's stream start it
    // would be more than 3 s early), within what decoding the segment afresh may move it.
    const last = moved[1] as { text: string; startMs: number; endMs: number };
    expect(last.startMs).toBeGreaterThanOrEqual(anchorMs - 50);
    moved.forEach((line, i) => {
      expect(Math.abs(line.startMs - (reference[i]?.startMs ?? NaN))).toBeLessThanOrEqual(300);
      expect(Math.abs(line.endMs - (reference[i]?.endMs ?? NaN))).toBeLessThanOrEqual(300);
    });
    expect(last.text).toBe(reference[1]?.text);
  }, 300_000);

  /** The session's meta as Redis holds it. */
  const redisMeta = async (sessionId: string): Promise<string | null> => {
    const kept = new Redis(redis.url);
    try {
      return await kept.get(`sc:rs:{${sessionId}}:meta`);
    } finally {
      kept.disconnect();
    }
  };
});
