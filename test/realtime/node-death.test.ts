import { LocalCluster } from '@soundclone/server';
import type { RealtimeSocketSession, SoundClone } from '@soundclone/core';
import { mulberry32 } from '@soundclone/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, KEY, PREFIX, clientFor, compareGatedStore, speech, storedAudio } from './support.js';

const RATE = 16_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A realtime session outlives its node: three node processes on one PostgreSQL and one Redis behind
 * haproxy (LocalCluster), the deterministic recognizer, and `kill -9` of the node that owns the session
 * at seeded points. After each kill the SDK reconnects through the balancer, another node takes the
 * session over from Redis, and the session goes on: the stored audio is the input sample for sample,
 * every line arrives once and equals an uninterrupted run's, finish settles once. NODE_DEATH_LOG=1
 * prints the stall each kill cost (kill to the first audio acknowledged by the new owner).
 */
// Needs redis-server (npm run setup installs it): LocalCluster.start fails with LocalRedisError without it.
describe('realtime session: the owning node killed', () => {
  let cluster: LocalCluster;
  let client: SoundClone;
  beforeAll(async () => {
    cluster = await LocalCluster.start({
      nodes: 3,
      accessKeys: [KEY],
      redis: true,
      nodeArgs: ['--recognizer', 'deterministic', '--retain-audio', '120', '--rotate-every-samples', String(RATE * 9)],
    });
    client = clientFor({ url: cluster.url });
  }, 120_000);
  afterAll(async () => {
    await cluster?.stop();
  }, 60_000);

  /** The node holding the session's lease now (read from Redis). */
  const owner = async (sessionId: string): Promise<number> => {
    const index = await cluster.sessionOwner(sessionId);
    if (index === undefined) throw new Error(`no live owner for ${sessionId}`);
    return index;
  };

  /** Kills the owner and restarts it once the session moved (so three nodes serve the next case). */
  const killOwner = async (session: RealtimeSocketSession, events: EventCapture, stalls: number[]): Promise<() => Promise<void>> => {
    const index = await owner(session.sessionId);
    const killedAt = performance.now();
    const ackedBefore = events.all('message').filter((m) => m.type === 'audio.ack').length;
    await cluster.killNode(index);
    return async () => {
      await events.waitFor('message', (m) => m.type === 'audio.ack' && events.all('message').filter((x) => x.type === 'audio.ack').indexOf(m) >= ackedBefore && events.all('reconnected').length > 0, 30_000);
      stalls.push(performance.now() - killedAt);
      expect(await owner(session.sessionId)).not.toBe(index);
      await cluster.restartNode(index);
    };
  };

  /** Writes like a capture loop: 20 ms blocks, never more than 10 s buffered. */
  const write = async (session: RealtimeSocketSession, pcm: Int16Array, from: number, to: number): Promise<void> => {
    for (let at = from; at < to; at += 320) {
      while (session.stats.bufferedSamples > RATE * 10) await sleep(5);
      session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
      if ((at / 320) % 25 === 0) await sleep(1);
    }
  };

  /** The lines of an uninterrupted run on the same audio (paused at `pauseAt` too, when the run was: a pause commits). */
  const uninterrupted = async (pcm: Int16Array, pauseAt?: number): Promise<unknown> => {
    const session = await client.stt.realtime.connect({});
    await write(session, pcm, 0, pauseAt ?? pcm.length);
    if (pauseAt !== undefined) {
      await session.pause();
      await session.resume();
      await write(session, pcm, pauseAt, pcm.length);
    }
    return (await session.finish({ timeoutMs: 60_000 })).session.lines;
  };

  const checkOutcome = async (session: RealtimeSocketSession, events: EventCapture, pcm: Int16Array, result: Awaited<ReturnType<RealtimeSocketSession['finish']>>, pauseAt?: number): Promise<void> => {
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    const stored = await storedAudio({ url: cluster.url } as never, session.sessionId);
    expect(stored.length).toBe(pcm.length);
    expect(Buffer.compare(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(0);
    const ids = events.all('line').map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(result.session.lines.map((l) => l.id));
    expect(result.session.lines).toEqual(await uninterrupted(pcm, pauseAt));
    const task = await client.stt.transcriptions.get(result.session.transcriptionId);
    const seconds = Math.ceil(pcm.length / RATE);
    expect(String(task.billing.settledCharacters)).toBe(String(seconds * 10));
    const again = await client.stt.realtime.finish(session.sessionId, String(pcm.length));
    expect(again.status).toBe('COMPLETED');
    expect(String((await client.stt.transcriptions.get(result.session.transcriptionId)).billing.settledCharacters)).toBe(String(seconds * 10));
    // A node change is one `reconnected` health report.
    expect(events.all('reconnected').length).toBeGreaterThan(0);
  };

  const stalls: number[] = [];
  afterAll(() => {
    if (process.env['NODE_DEATH_LOG'] !== undefined && stalls.length > 0) {
      const sorted = [...stalls].sort((a, b) => a - b);
      process.stderr.write(`node death: ${stalls.length} kills, stall ms p50 ${Math.round(sorted[Math.floor(sorted.length / 2)] ?? 0)} max ${Math.round(sorted[sorted.length - 1] ?? 0)}: ${stalls.map(Math.round).join(' ')}\n`);
    }
  });

  it.each([
    ['mid-utterance', 1],
    ['just after a line commit', 2],
  ] as const)('killed %s: nothing lost or doubled, lines as uninterrupted, one charge', async (point, seed) => {
    const random = mulberry32(seed * 7);
    const pcm = speech(12, seed);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    const reports: Array<{ kind: string; cause: string | undefined }> = [];
    session.on('health', (h) => reports.push({ kind: h.kind, cause: h.lastReconnect?.cause }));
    let at = Math.floor((pcm.length * (0.3 + 0.3 * random())) / 320) * 320;
    await write(session, pcm, 0, at);
    if (point === 'just after a line commit') {
      const lines = events.all('line').length;
      while (events.all('line').length === lines && at < pcm.length) {
        await write(session, pcm, at, at + 320);
        at += 320;
        await sleep(2);
      }
    } else {
      await events.waitFor('message', (m) => m.type === 'audio.ack' && BigInt(m.receivedSamples) >= BigInt(at) - 3200n);
    }
    const moved = await killOwner(session, events, stalls);
    await write(session, pcm, at, pcm.length);
    await moved();
    const result = await session.finish({ timeoutMs: 60_000 });
    await checkOutcome(session, events, pcm, result);
    // For the application the node change is one reconnect, with its cause; nothing else.
    const reconnected = reports.filter((r) => r.kind === 'reconnected');
    expect(reconnected).toHaveLength(1);
    expect(reconnected[0]?.cause).toEqual(expect.any(String));
    expect(events.all('gap')).toEqual([]);
  }, 180_000);

  it('killed during a server rotation: the session resumes the next epoch on the new node, nothing lost or doubled', async () => {
    const pcm = speech(14, 3);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    const writing = write(session, pcm, 0, pcm.length);
    // Rotations come every 9 s of audio (--rotate-every-samples): kill as the first one is announced.
    await events.waitFor('message', (m) => m.type === 'usage.updated' && m.rotate === true, 60_000);
    const moved = await killOwner(session, events, stalls);
    await writing;
    await moved();
    const result = await session.finish({ timeoutMs: 60_000 });
    // The session went on in the next epoch. The SDK reports that as `rotated` when it saw the
    // session.resumed, or learns the epoch from the new owner's session.ready when the kill came first.
    expect(session.epoch).toBeGreaterThan(0);
    await checkOutcome(session, events, pcm, result);
  }, 180_000);

  it('killed during pause(): the pause completes on the new node, the session resumes, nothing lost or doubled', async () => {
    const pcm = speech(10, 4);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    const at = Math.floor(pcm.length / 2 / 320) * 320;
    await write(session, pcm, 0, at);
    const pausing = session.pause();
    const moved = await killOwner(session, events, stalls);
    await pausing;
    await session.resume();
    await write(session, pcm, at, pcm.length);
    await moved();
    const result = await session.finish({ timeoutMs: 60_000 });
    await checkOutcome(session, events, pcm, result, at);
  }, 180_000);

  it('with the voice gate, killed in the middle of a skipped silence: the skip holds on the new node, lines and times as ungated, only audio charged', async () => {
    const pcm = speech(6, 6, 3000);
    const plain = await client.stt.realtime.connect({});
    await write(plain, pcm, 0, pcm.length);
    const whole = await plain.finish({ timeoutMs: 60_000 });

    const session = await client.stt.realtime.connect({ gate: true });
    const events = new EventCapture(session, ['line', 'gap', 'reconnected', 'message', 'speech.end']);
    // Into the third line's 3 s silence: 2 s after its speech ended, once a second of it is acknowledged
    // (the gate decides a hangover and a skip step behind the capture).
    let at = 0;
    while (events.all('speech.end').length < 3) {
      await write(session, pcm, at, at + 320);
      at += 320;
    }
    await write(session, pcm, at, at + 2 * RATE);
    at += 2 * RATE;
    await events.waitFor('message', (m) => m.type === 'audio.ack' && BigInt(m.receivedSamples) >= BigInt(at - RATE));
    const moved = await killOwner(session, events, stalls);
    await write(session, pcm, at, pcm.length);
    await moved();
    const result = await session.finish({ timeoutMs: 60_000 });

    expect(events.all('gap')).toEqual([]);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    const ids = events.all('line').map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(result.lines.map((l) => [l.text, l.startMs, l.endMs])).toEqual(whole.lines.map((l) => [l.text, l.startMs, l.endMs]));
    const skipped = session.stats.skippedSamples;
    expect(skipped).toBeGreaterThan(4 * 2 * RATE);
    const { wrong } = compareGatedStore(await storedAudio({ url: cluster.url } as never, session.sessionId), pcm, 250);
    expect(wrong).toBe(0);
    const task = await client.stt.transcriptions.get(result.session.transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((pcm.length - skipped) / 16)));
  }, 180_000);

  it('killed during finish(): the finish completes on another node, settled once', async () => {
    const pcm = speech(8, 5);
    const session = await client.stt.realtime.connect({});
    const events = new EventCapture(session);
    await write(session, pcm, 0, pcm.length);
    const index = await owner(session.sessionId);
    const finishing = session.finish({ timeoutMs: 60_000 });
    // Whether the owner settled before it died or not, the finish ends once, on some node.
    await cluster.killNode(index);
    const result = await finishing;
    await cluster.restartNode(index);
    await checkOutcome(session, events, pcm, result);
  }, 180_000);
});

export { PREFIX };
