import type { RunningServer } from '@soundclone/server';
import type { RealtimeSocketSession } from '@soundclone/core';
import { VoiceGate } from '@soundclone/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { EventCapture, bursts, clientFor, compareGatedStore, speech, startRealtimeServer, storedAudio } from './support.js';

const RATE = 16_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Writes like a capture loop: blocks of `block` samples, yielding now and then, respecting backpressure. */
async function writeAll(session: RealtimeSocketSession, pcm: Int16Array, block: number): Promise<void> {
  for (let at = 0, n = 0; at < pcm.length; at += block, n++) {
    while (session.stats.bufferedSamples > RATE * 20) await sleep(2);
    session.writePcm16(pcm.subarray(at, Math.min(pcm.length, at + block)));
    if (n % 50 === 0) await sleep(0);
  }
}

describe('realtime session: voice gate', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  beforeAll(async () => {
    server = await startRealtimeServer({ socket: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1500 } });
    proxy = await new ChaosProxy(server.port).listen();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('sends speech and declares silence skipped: same words as ungated, speech edges, billed only for audio, no gap', async () => {
    const pcm = speech(6, 2, 3000);
    const client = clientFor(server);

    const plain = await client.stt.realtime.connect();
    await writeAll(plain, pcm, 320);
    const whole = await plain.finish();

    const session = await client.stt.realtime.connect({ gate: true });
    const events = new EventCapture(session, ['line', 'gap', 'speech.start', 'speech.end']);
    await writeAll(session, pcm, 333);
    const gated = await session.finish();

    expect(events.all('gap')).toEqual([]);
    expect(gated.session.status).toBe('COMPLETED');
    expect(gated.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(gated.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(gated.lines.map((l) => l.text)).toEqual(whole.lines.map((l) => l.text));
    // Skipped time on the 20 ms grid: the recogniser's frames fall where they fall ungated, so the
    // words and their capture times are the very same.
    expect(gated.lines.map((l) => [l.startMs, l.endMs, l.words])).toEqual(whole.lines.map((l) => [l.startMs, l.endMs, l.words]));
    // One utterance per line: it starts within 20 ms of its first burst and ends after its last.
    const speechBursts = bursts(pcm);
    const starts = events.all('speech.start').map((e) => e.sample);
    const ends = events.all('speech.end').map((e) => e.sample);
    expect(starts.length).toBe(6);
    expect(ends.length).toBe(6);
    for (let line = 0; line < 6; line++) {
      const first = speechBursts[2 * line]!;
      const last = speechBursts[2 * line + 1]!;
      expect(Math.abs(starts[line]! - first[0])).toBeLessThanOrEqual(320);
      expect(ends[line]!).toBeGreaterThanOrEqual(last[1] - 320);
      expect(ends[line]!).toBeLessThan(last[1] + RATE);
    }
    // Saved: most of each 3 s silence (all but the pre-roll and hangover).
    const skipped = session.stats.skippedSamples;
    expect(skipped).toBeGreaterThan(6 * 2 * RATE);
    expect(session.health.savedShare).toBeCloseTo(skipped / pcm.length, 6);
    const { zeroed, wrong } = compareGatedStore(await storedAudio(server, session.sessionId), pcm, 250);
    expect(wrong).toBe(0);
    expect(zeroed).toBeLessThanOrEqual(skipped);
    expect(zeroed).toBeGreaterThan(skipped * 0.97); // the noise is zero by itself one sample in 64
    const task = await client.stt.transcriptions.get(gated.session.transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((pcm.length - skipped) / 16)));
    expect(String((await client.stt.transcriptions.get(whole.session.transcriptionId)).billing.billableDurationMs)).toBe(String(pcm.length / 16));
  }, 60_000);

  it('Float32 at 48 kHz in odd blocks: the gate decides on the 16 kHz audio, same lines as PCM16', async () => {
    const pcm = speech(3, 5, 2500);
    const float = new Float32Array(pcm.length * 3);
    // 16 kHz to 48 kHz by repeating samples: not a clean resampling, but the same speech and silences.
    for (let i = 0; i < float.length; i++) float[i] = pcm[Math.floor(i / 3)]! / 32768;
    const session = await clientFor(server).stt.realtime.connect({ gate: { preRollMs: 300, commitAfterMs: 600 }, sampleRate: 48_000 });
    const events = new EventCapture(session, ['speech.start', 'speech.end', 'gap']);
    for (let at = 0, n = 0; at < float.length; at += 1001, n++) {
      session.write(float.subarray(at, Math.min(float.length, at + 1001)));
      if (n % 20 === 0) await sleep(0);
    }
    const result = await session.finish();
    expect(events.all('gap')).toEqual([]);
    expect(events.all('speech.start').length).toBe(3);
    expect(events.all('speech.end').length).toBe(3);
    expect(result.lines.length).toBe(3);
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(session.stats.skippedSamples).toBeGreaterThan(3 * RATE * 1.5);
  }, 60_000);

  it('a source that gates itself (as the AudioWorklet does): its sends, skips and edges, in its own frames', async () => {
    const pcm = speech(3, 6, 3000);
    const float = new Float32Array(pcm.length * 3);
    for (let i = 0; i < float.length; i++) float[i] = pcm[Math.floor(i / 3)]! / 32768;
    const client = clientFor(server);
    const plain = await client.stt.realtime.connect({ sampleRate: 48_000 });
    for (let at = 0; at < float.length; at += 4800) plain.write(float.subarray(at, at + 4800));
    const whole = await plain.finish();

    const session = await client.stt.realtime.connect();
    session.setInputFormat({ sampleRate: 48_000 });
    const events = new EventCapture(session, ['speech.start', 'speech.end', 'gap']);
    const sink = session.gateSource();
    // The worklet's loop: 128-frame blocks through a VoiceGate at the context rate; the page keeps the
    // audio (here: the whole signal) and hands the sink what the gate decided.
    const gate = new VoiceGate({ sampleRate: 48_000 });
    let given = 0;
    const edges: Array<[string, number]> = [];
    for (let at = 0, n = 0; at < float.length; at += 128, n++) {
      const d = gate.process(float.subarray(at, Math.min(float.length, at + 128)));
      if (d.speechEnd >= 0) edges.push(['speech.end', d.speechEnd]);
      if (d.speechStart >= 0) edges.push(['speech.start', d.speechStart]);
      if (d.sendTo > d.sendFrom) {
        if (d.sendFrom > given) sink.skip(d.sendFrom - given);
        sink.write(float.subarray(d.sendFrom, d.sendTo));
        given = d.sendTo;
      } else if (!gate.isOpen && at + 128 - gate.historySamples > given) {
        const settled = Math.min(float.length, at + 128) - gate.historySamples;
        sink.skip(settled - given);
        given = settled;
      }
      for (const [event, frame] of edges.splice(0)) sink.speech(event as 'speech.start' | 'speech.end', frame);
      if (n % 100 === 0) await sleep(0);
    }
    const last = gate.finish();
    if (last.speechEnd >= 0) sink.speech('speech.end', last.speechEnd);
    if (float.length > given) sink.skip(float.length - given);
    const gated = await session.finish();

    expect(events.all('gap')).toEqual([]);
    expect(gated.session.status).toBe('COMPLETED');
    expect(gated.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(gated.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(gated.lines.map((l) => l.text)).toEqual(whole.lines.map((l) => l.text));
    expect(events.all('speech.start').length).toBe(3);
    expect(events.all('speech.end').length).toBe(3);
    const firstBursts = bursts(pcm).filter((_, i) => i % 2 === 0);
    events.all('speech.start').forEach((e, i) => expect(Math.abs(e.sample - firstBursts[i]![0])).toBeLessThanOrEqual(320));
    const skipped = session.stats.skippedSamples;
    expect(skipped).toBeGreaterThan(3 * 2 * RATE);
    const task = await client.stt.transcriptions.get(gated.session.transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((pcm.length - skipped) / 16)));
    expect(() => session.gateSource()).toThrow(expect.objectContaining({ code: 'REALTIME_INVALID_STATE' }));
  }, 60_000);

  it('refuses bad gate options with one violation per field', async () => {
    const client = clientFor(server);
    await expect(client.stt.realtime.connect({ gate: { preRollMs: -1, commitAfterMs: 100, hangoverMs: 300 } })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      violations: [
        { field: 'gate.preRollMs', rule: expect.any(String) },
        { field: 'gate.commitAfterMs', rule: expect.any(String) },
      ],
    });
  });

  it('a reconnect in the middle of a skip loses and duplicates nothing', async () => {
    const pcm = speech(4, 7, 6000);
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({
      gate: true,
      socketUrl: `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket`,
      heartbeatTimeoutMs: 600,
      connectTimeoutMs: 2000,
      reconnect: { nextRetryDelayMs: (c) => (c.elapsedMs > 20_000 ? null : 50) },
    });
    const events = new EventCapture(session, ['line', 'gap', 'reconnected', 'speech.end']);
    const cuts: string[] = [];
    const lineEnds = bursts(pcm).filter((_, i) => i % 2 === 1).map(([, b]) => b);
    let at = 0;
    const writeTo = async (to: number): Promise<void> => {
      for (let n = 1; at < to; n++) {
        const end = Math.min(to, at + 320);
        session.writePcm16(pcm.subarray(at, end));
        at = end;
        if (n % 25 === 0) await sleep(1);
      }
    };
    for (const [k, end] of lineEnds.entries()) {
      // The line, then 2.5 s of its silence: skip frames are out; then the fault, then the rest.
      const mid = end + Math.floor(RATE * 2.5);
      await writeTo(mid);
      await sleep(30);
      const stats = session.stats;
      expect(stats.skippedSamples).toBeGreaterThan(0);
      if (k % 2 === 0) {
        cuts.push('cut');
        proxy.cut();
      } else {
        cuts.push('half-open');
        proxy.halfOpen();
      }
      const next = k + 1 < lineEnds.length ? Math.max(at, lineEnds[k]! + RATE * 4) : pcm.length;
      await writeTo(next);
      // Back on a new socket before the next line (the silence and its skips resent from its cursor).
      await events.waitFor('reconnected', () => events.all('reconnected').length > k, 10_000);
    }
    await writeTo(pcm.length);
    const result = await session.finish({ timeoutMs: 30_000 });
    expect(events.all('reconnected').length).toBeGreaterThanOrEqual(4);
    expect(events.all('gap')).toEqual([]);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    const ids = events.all('line').map((l) => l.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.length).toBe(4);
    const skipped = session.stats.skippedSamples;
    const { zeroed, wrong } = compareGatedStore(await storedAudio(server, session.sessionId), pcm, 250);
    expect(wrong).toBe(0);
    expect(zeroed).toBeLessThanOrEqual(skipped);
    expect(zeroed).toBeGreaterThan(skipped * 0.97);
    const task = await client.stt.transcriptions.get(result.session.transcriptionId);
    expect(String(task.billing.billableDurationMs)).toBe(String(Math.ceil((pcm.length - skipped) / 16)));
  }, 90_000);
});
