import type { RunningServer } from '@soundclone/server';
import type { RealtimeSocketSession } from '@soundclone/core';
import { mulberry32 } from '@soundclone/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, clientFor, compareGatedStore, speech, startRealtimeServer, storedAudio } from './support.js';

const RATE = 16_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes like a capture loop that respects backpressure (a faster-than-real-time source must). */
async function writePaced(session: RealtimeSocketSession, pcm: Int16Array, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += 320) {
    while (session.stats.bufferedSamples > RATE * 20) await sleep(2);
    session.writePcm16(pcm.subarray(at, Math.min(to, at + 320)));
    if ((at / 320) % 50 === 0) await sleep(0);
  }
}

/**
 * Ten minutes of audio, faster than real time, through a proxy that cuts, stalls and
 * half-opens the socket at random moments, with rotations and pauses mixed in. The server must store
 * exactly the captured samples, every line must arrive once, and the charge must be settled once for
 * the received duration. CHAOS_SEED=n replays another seeded schedule; CHAOS_LOG=1 prints what happened.
 *
 * Again with the voice gate on, over speech with 2.5 s silences: the same faults in the middle of skipped
 * time too. Every assertion holds in its gated form: the stored audio is the captured audio or zeros
 * where time was skipped (never near speech), and the charge is for the audio received.
 */
describe.each([{ gate: false }, { gate: true }])('realtime session: chaos (gate $gate)', ({ gate }) => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  beforeAll(async () => {
    server = await startRealtimeServer({
      realtimeTiming: { rotateEverySamples: RATE * 37 },
      socket: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1500 },
    });
    proxy = await new ChaosProxy(server.port).listen();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('10 minutes with cuts, stalls, half-open sockets, rotations and pauses: bit-identical, lines once, charged once', async () => {
    // Seeded: the chaos is the same on every run.
    const random = mulberry32(Number(process.env["CHAOS_SEED"] ?? 2026));
    const lineCount = 500; // about 1.24 s per line
    const pcm = (gate ? speech(Math.ceil(lineCount / 2), 4, 2500) : speech(Math.ceil(lineCount), 4)).subarray(0, RATE * 600);
    expect(pcm.length).toBe(RATE * 600);
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({
      socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket`,
      heartbeatTimeoutMs: 600,
      connectTimeoutMs: 2000,
      reconnect: { nextRetryDelayMs: (c) => (c.elapsedMs > 30_000 ? null : Math.floor(random() * Math.min(400, 25 * 2 ** c.attempt))) },
      gate,
    });
    const events = new EventCapture(session);
    const chaos: string[] = [];
    let at = 0;
    let pauses = 0;
    const pausedAt: number[] = [];
    while (at < pcm.length) {
      const step = Math.min(pcm.length - at, Math.floor(RATE * (2 + random() * 10)));
      await writePaced(session, pcm, at, at + step);
      at += step;
      const roll = random();
      if (roll < 0.2) {
        chaos.push('cut');
        proxy.cut();
      } else if (roll < 0.3) {
        chaos.push('stall');
        proxy.stall(50 + Math.floor(random() * 400));
      } else if (roll < 0.38) {
        chaos.push('half-open');
        proxy.halfOpen();
      } else if (roll < 0.46 && at < pcm.length) {
        chaos.push('pause');
        pauses += 1;
        // Where the pause cuts: everything written so far (the encoder may not have produced all of it yet).
        pausedAt.push(at);
        try {
          await session.pause();
          await session.resume();
        } catch (caught) {
          const trail = events.events.slice(-40).map((e) => `${String(e.name)}${e.name === 'state' ? ':' + JSON.stringify(e.payload) : e.name === 'debug' ? ':' + JSON.stringify(e.payload) : ''}`);
          throw new Error(`${String(caught)}\n${chaos.join(' ')}\n${JSON.stringify(session.stats)} epoch ${session.epoch} ${session.state}\n${JSON.stringify(await client.stt.realtime.get(session.sessionId).then((v) => ({ ...v, lines: v.lines.length, usage: String(v.usage.receivedSamples) })))}\n${trail.join('\n')}`);
        }
      }
    }
    const result = await session.finish({ timeoutMs: 60_000 });
    if (process.env["CHAOS_LOG"] !== undefined) process.stderr.write(`chaos: ${chaos.join(' ')}; reconnects ${events.all('reconnected').length}; rotations ${events.all('rotated').length}\n`);
    expect(chaos.filter((c) => c === 'cut').length).toBeGreaterThan(3);
    expect(chaos).toContain('half-open');
    expect(pauses).toBeGreaterThan(0);
    expect(events.all('reconnected').length).toBeGreaterThan(3);
    expect(events.all('rotated').length).toBeGreaterThan(3);
    expect(events.all('gap')).toEqual([]);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    const stored = await storedAudio(server, session.sessionId);
    expect(stored.length).toBe(pcm.length);
    const skipped = session.stats.skippedSamples;
    if (gate) {
      const { zeroed, wrong } = compareGatedStore(stored, pcm, 250, pausedAt);
      expect(wrong).toBe(0);
      expect(zeroed).toBeLessThanOrEqual(skipped);
      expect(zeroed).toBeGreaterThan(skipped * 0.97); // the noise is zero by itself one sample in 64
      expect(skipped).toBeGreaterThan(pcm.length / 3);
    } else {
      expect(skipped).toBe(0);
      expect(Buffer.compare(Buffer.from(stored.buffer, stored.byteOffset, stored.byteLength), Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))).toBe(0);
    }
    const ids = events.all('line').map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(result.session.lines.map((l) => l.id));
    const task = await client.stt.transcriptions.get(result.session.transcriptionId);
    const billedMs = Math.ceil((pcm.length - skipped) / 16);
    expect(String(task.billing.billableDurationMs)).toBe(String(billedMs));
    expect(String(task.billing.settledCharacters)).toBe(String(Math.ceil(billedMs / 1000) * 10));
    // A repeated finish over REST returns the same task and charges nothing more.
    const again = await client.stt.realtime.finish(session.sessionId, String(pcm.length));
    expect(again.status).toBe('COMPLETED');
    expect(String((await client.stt.transcriptions.get(result.session.transcriptionId)).billing.settledCharacters)).toBe(String(Math.ceil(billedMs / 1000) * 10));
  }, 240_000);
});
