import type { RunningServer } from '@soundclone/server';
import type { RealtimeSocketSession, RealtimeSessionEvents } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, clientFor, speech, startRealtimeServer } from './support.js';

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const EVENTS: Array<keyof RealtimeSessionEvents> = ['state', 'health', 'gap', 'reconnecting', 'reconnected', 'notice', 'message'];

/** 48 kHz Float32 from the speech-like PCM (each sample three times), as a browser capture writes it. */
function capture48k(seconds: number, seed: number): Float32Array {
  const pcm = speech(Math.ceil(seconds), seed);
  const out = new Float32Array(48_000 * seconds);
  for (let i = 0; i < out.length; i++) out[i] = (pcm[Math.floor(i / 3) % pcm.length] ?? 0) / 32768;
  return out;
}

/**
 * Writes 20 ms blocks on the wall clock, as a live capture does, and calls `at(second)` when each
 * second of audio starts (the faults are placed on the audio's own timeline).
 */
async function streamRealTime(session: RealtimeSocketSession, audio: Float32Array, at: (second: number) => void = () => {}): Promise<void> {
  const block = 960;
  const started = Date.now();
  for (let i = 0, offset = 0; offset < audio.length; i++, offset += block) {
    if (offset % 48_000 === 0) at(offset / 48_000);
    session.write(audio.subarray(offset, offset + block));
    const due = started + (i + 1) * 20 - Date.now();
    if (due > 0) await sleep(due);
  }
}

/** Everything captured arrived, the server says COMPLETED, no gap on either side. */
function expectEverySample(session: RealtimeSocketSession, events: EventCapture, result: Awaited<ReturnType<RealtimeSocketSession['finish']>>): void {
  expect(result.session.status).toBe('COMPLETED');
  expect(result.session.usage.capturedSamples).toBe(BigInt(session.stats.producedSamples));
  expect(result.session.usage.receivedSamples).toBe(BigInt(session.stats.producedSamples));
  expect(result.notices.map((n) => n.code)).not.toContain('TRANSPORT_GAP');
  expect(events.all('gap')).toEqual([]);
  expect(session.gaps).toEqual([]);
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
}

/**
 * Stalls and half-open sockets while audio flows, on a real-time 48 kHz stream: finish() delivers
 * every captured sample before its finish message whatever the acknowledgements do, a socket that
 * stops acknowledging is probed (kept when it answers, replaced when it does not), and `health` says
 * `degraded` meanwhile. Times are printed (the bench holds the targets), never asserted.
 */
describe('realtime session: stalls and half-open sockets while streaming', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  it('finish() under an ack stall of 9 s and of 20 s from 3 s before it: the socket answers, stays, and carries every sample (COMPLETED)', async () => {
    const run = async (stallMs: number, seed: number): Promise<void> => {
      const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000 });
      const events = new EventCapture(session, EVENTS);
      let stallStarted = 0;
      await streamRealTime(session, capture48k(6, seed), (second) => {
        if (second !== 3) return;
        stallStarted = Date.now();
        const rule = server.faults.socket.inject({ kind: 'withholdAcks', sessionId: session.sessionId });
        setTimeout(() => rule.remove(), stallMs);
      });
      // The stall outlasted the in-flight window (2 s): audio waits unsent when finish() is called.
      expect(session.stats.unackedSamples).toBe(32_000);
      expect(session.stats.queuedSamples).toBeGreaterThan(0);
      const result = await session.finish();
      expectEverySample(session, events, result);
      // Alive (the probes were answered): never replaced, and the user was told it was degraded.
      expect(events.all('reconnecting')).toEqual([]);
      const degraded = events.all('health').find((h) => h.state === 'degraded');
      expect(degraded?.bufferedMs).toBeGreaterThan(0);
      console.log(`ack stall ${stallMs} ms: finished after ${Date.now() - stallStarted} ms from the stall's start`);
    };
    await Promise.all([run(9000, 101), run(20_000, 103)]);
  }, 60_000);

  it('finish() under a network stall of 9 s and of 20 s from 3 s (and 9 s from 1 s) before it: the silent socket is replaced, the rest resent, COMPLETED', async () => {
    const run = async (stallMs: number, seed: number, stallSecond = 3): Promise<void> => {
      const proxy = await new ChaosProxy(server.port).listen();
      try {
        const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000, socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket` });
        const events = new EventCapture(session, EVENTS);
        let stallStarted = 0;
        await streamRealTime(session, capture48k(6, seed), (second) => {
          if (second !== stallSecond) return;
          stallStarted = Date.now();
          proxy.stall(stallMs);
        });
        const result = await session.finish();
        expectEverySample(session, events, result);
        const [lost] = events.all('reconnecting');
        expect(lost?.reason).toMatch(/probe unanswered/);
        expect(events.all('reconnected')).toHaveLength(1);
        console.log(`network stall ${stallMs} ms from ${6 - stallSecond} s before finish(): replaced and finished after ${Date.now() - stallStarted} ms from the stall's start`);
      } finally {
        await proxy.close();
      }
    };
    await Promise.all([run(9000, 105), run(20_000, 107), run(9000, 115, 5)]);
  }, 60_000);

  it('pause() under a 9 s network stall loses nothing: the pause goes out on the new socket, resume and finish carry the rest', async () => {
    const proxy = await new ChaosProxy(server.port).listen();
    try {
      const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000, socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket` });
      const events = new EventCapture(session, EVENTS);
      const audio = capture48k(5, 109);
      await streamRealTime(session, audio.subarray(0, 48_000 * 4), (second) => {
        if (second === 3) proxy.stall(9000);
      });
      await session.pause({ timeoutMs: 20_000 });
      await session.resume();
      await streamRealTime(session, audio.subarray(48_000 * 4));
      expectEverySample(session, events, await session.finish());
      expect(events.all('reconnected').length).toBeGreaterThanOrEqual(1);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('no reconnect for a stall shorter than a second; degraded, then healthy again', async () => {
    const proxy = await new ChaosProxy(server.port).listen();
    try {
      const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000, socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket` });
      const events = new EventCapture(session, EVENTS);
      await streamRealTime(session, capture48k(5, 111), (second) => {
        if (second === 1 || second === 3) proxy.stall(800);
      });
      expectEverySample(session, events, await session.finish());
      expect(events.all('reconnecting')).toEqual([]);
      const health = events.all('health').filter((h) => h.kind === 'connection').map((h) => h.state);
      expect(health.slice(0, 2)).toEqual(['degraded', 'healthy']);
    } finally {
      await proxy.close();
    }
  }, 30_000);

  it('a half-open socket while streaming is probed and replaced, nothing lost; prints degraded and replacement times', async () => {
    const runs = 6;
    const degradedMs: number[] = [];
    const replacedMs: number[] = [];
    for (let run = 0; run < runs; run++) {
      const proxy = await new ChaosProxy(server.port).listen();
      try {
        const session = await clientFor(server).stt.realtime.connect({ sampleRate: 48_000, socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket` });
        const events = new EventCapture(session, EVENTS);
        let cutAt = 0;
        await streamRealTime(session, capture48k(4, 113 + run), (second) => {
          if (second !== 1) return;
          cutAt = Date.now();
          proxy.halfOpen();
          const marks = { degraded: events.waitFor('health', (h) => h.state === 'degraded'), replaced: events.waitFor('reconnected') };
          void marks.degraded.then(() => degradedMs.push(Date.now() - cutAt));
          void marks.replaced.then(() => replacedMs.push(Date.now() - cutAt));
        });
        expectEverySample(session, events, await session.finish());
        expect(events.all('reconnecting').map((r) => r.reason)).toEqual([expect.stringMatching(/probe unanswered/)]);
      } finally {
        await proxy.close();
      }
    }
    expect(degradedMs).toHaveLength(runs);
    expect(replacedMs).toHaveLength(runs);
    console.log(`half-open while streaming, ${runs} runs: degraded after ${degradedMs.join(', ')} ms (max ${Math.max(...degradedMs)}); replaced (session.ready on the new socket) after ${replacedMs.join(', ')} ms (p99 ${percentile(replacedMs, 99)})`);
  }, 90_000);
});
