import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RealtimeError, type RealtimeSocketSession } from '@soundclone/core';
import type { CaptureDrop, CaptureResult, CaptureState, WebCaptureEvent } from '@soundclone/web-audio';
import { captureStreams } from '../src/rx/capture-streams.ts';
import { Capture } from '../src/capture/capture.ts';
import type { FeedSink } from '../src/capture/sample-feed.ts';
import { SessionWriter } from '../src/capture/session-writer.ts';
import { pickFeed, type StartCaptureOptions } from '../src/capture/start-capture.ts';
import { defineCaptureProcessor } from '../src/worklet/capture-processor.ts';
import type { CaptureProcessorOptions } from '../src/worklet/protocol.ts';
import { encodeStream } from '../../../test/realtime/offline-encode.ts';
import { startSessionServer, type SessionServer } from './support/session-server.ts';

/**
 * A page that stalls (its main thread blocked: a long task, a GC pause, a frozen tab) while the audio
 * thread goes on. Node plays both threads: the worklet's processor class (the code the worklet runs)
 * on one end of a real MessageChannel, the page side (the feed startCapture picks, with its default
 * sizes; Capture; the session's own encode path at the context's rate) on the other, into a real session on the reference server. A
 * "stall" is render quanta processed without yielding, so no message and no timer reaches the page.
 * Only the browser's objects around them (context, stream, nodes) are stand-ins.
 */
let reference: SessionServer;
beforeAll(async () => void (reference = await startSessionServer('key-web-audio-loss', 90, 'web-audio loss test')));
afterAll(async () => reference?.close());
const session = () => reference.session();

/** Worklet frame i of the test signal: a tone plus seeded noise, so every splice shows in the samples. */
function signal(i: number, rate: number): number {
  const noise = ((Math.imul(i + 1, 2654435761) >>> 0) / 2 ** 32 - 0.5) * 0.05;
  return 0.4 * Math.sin((2 * Math.PI * 330 * i) / rate) + noise;
}

const turn = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 1));

/** The worklet end and the page end of one capture, wired as startCapture wires them. */
function rig(s: RealtimeSocketSession, rate: number, options: Partial<StartCaptureOptions>, onSamples?: (block: Float32Array) => void) {
  const channel = new MessageChannel();
  let capture: Capture | undefined;
  const sink: FeedSink = {
    block: (block) => capture?.onBlock(block),
    dropped: (from, frames) => capture?.onDropped(from, frames),
    skipped: (frames) => capture?.onSkipped(frames),
    speech: (event, lag) => capture?.onSpeech(event, lag),
    failed: (error) => capture?.onFailed(error),
  };
  const feed = pickFeed({ session: s, ...options }, rate, sink);
  class WorkletBase {
    readonly port: MessagePort;
    constructor(init: { port: MessagePort; processorOptions: CaptureProcessorOptions }) {
      this.port = init.port;
    }
  }
  const Processor = defineCaptureProcessor(WorkletBase);
  const processor = new (class extends Processor {})({ port: channel.port1, processorOptions: feed.processorOptions });
  feed.attach(channel.port2);
  const idle = { disconnect() {} };
  capture = new Capture({
    graph: {
      context: { sampleRate: rate, state: 'running', close: async () => undefined } as unknown as AudioContext,
      ownsContext: false,
      stream: { getAudioTracks: () => [], getTracks: () => [] } as unknown as MediaStream,
      releaseStream: false,
      source: idle as unknown as MediaStreamAudioSourceNode,
      node: { ...idle, port: channel.port2 } as unknown as AudioWorkletNode,
      feed,
    },
    writer: new SessionWriter(rate, s, 'auto', options.gate !== undefined && options.gate !== false),
    session: s,
    levelWindowMs: 50,
    stopTimeoutMs: 2000,
    starvationMs: options.starvationMs,
    onSamples,
    signal: undefined,
  });
  const quantum = new Float32Array(128);
  const inputs = [[quantum]];
  /**
   * The audio thread: `quanta` render quanta of the test signal, the page getting a turn every 8
   * (alive; then it catches up before this returns) or never (stalled).
   */
  const playQuanta = async (quanta: number, page: 'alive' | 'stalled'): Promise<void> => {
    if (page === 'alive') {
      // The page wakes first (after a stall, it has a backlog to take and batches to give back).
      for (let still = 0, seen = -1; still < 3; ) {
        await turn();
        still = capture!.stats.capturedFrames === seen ? still + 1 : 0;
        seen = capture!.stats.capturedFrames;
      }
    }
    for (let q = 0; q < quanta; q++) {
      const at = processor.frames;
      for (let i = 0; i < 128; i++) quantum[i] = signal(at + i, rate);
      processor.process(inputs);
      if (page === 'alive' && q % 8 === 7) await turn();
    }
    if (page === 'stalled') return;
    // Caught up: everything is with the page (transfer: but the batch being filled), and back.
    const behind = feed.mode === 'shared' ? 1 : 1024;
    for (let i = 0; i < 500 && processor.frames - capture!.stats.capturedFrames - capture!.stats.droppedFrames >= behind; i++) await turn();
    for (let i = 0; i < 3; i++) await turn();
  };
  const play = (seconds: number, page: 'alive' | 'stalled'): Promise<void> => playQuanta(Math.round((seconds * rate) / 128), page);
  return { capture, processor, feed, play, playQuanta };
}

/** What the server stored, and what it must be: the signal with the lost ranges left out, each part resampled on its own. */
async function checkStored(s: RealtimeSocketSession, result: CaptureResult, drops: CaptureDrop[], rate: number): Promise<void> {
  const total = result.worklet.frames;
  const parts: Int16Array[] = [];
  let at = 0;
  for (const d of [...drops, { from: total, to: total }]) {
    const part = encodeStream(Float32Array.from({ length: d.from - at }, (_, i) => signal(at + i, rate)), rate);
    parts.push(part);
    at = d.to;
  }
  const expected = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((offset, p) => (expected.set(p, offset), offset + p.length), 0);
  // Each drop's sessionSample is where the audio after it starts in the session's stream.
  drops.forEach((d, k) => expect(d.sessionSample).toBe(parts.slice(0, k + 1).reduce((n, p) => n + p.length, 0)));
  expect(result.sentSamples).toBe(expected.length);
  const finished = await s.finish();
  expect(Number(finished.session.usage.capturedSamples)).toBe(expected.length);
  expect(Number(finished.session.usage.receivedSamples)).toBe(expected.length);
  expect(finished.notices.map((n) => n.code)).not.toContain('TRANSPORT_GAP'); // the session itself lost nothing
  const stored = await reference.storedAudio(s.sessionId);
  expect(stored.length).toBe(expected.length);
  expect(Buffer.from(stored.buffer).equals(Buffer.from(expected.buffer))).toBe(true); // no zeros, no smear across a cut
}

describe('a stalled page (worklet class + page side over a real MessageChannel, into a real session)', () => {
  it('transfer: the default pool holds 2 s; a longer stall loses only the excess, reported live with its frames and session position', async () => {
    const rate = 48_000;
    const s = await session();
    const { capture, processor, feed, play, playQuanta } = rig(s, rate, { transport: 'transfer' });
    const pool = feed.processorOptions.poolSize! * feed.processorOptions.batchFrames!;
    expect(pool / rate).toBeGreaterThanOrEqual(2); // sized by time, not 16 batches (341 ms at 48 kHz)
    const drops: CaptureDrop[] = [];
    capture.on('drop', (d) => drops.push(d));
    await play(1, 'alive');
    await play(1.5, 'stalled'); // a long task: survived
    await play(0.5, 'alive');
    expect(capture.stats.droppedFrames).toBe(0);
    expect(drops).toEqual([]);
    await playQuanta(((1024 - (processor.frames % 1024)) % 1024) / 128, 'alive'); // land on a batch boundary
    const stallAt = processor.frames;
    expect(stallAt % 1024).toBe(0);
    await play(2.5, 'stalled'); // 938 quanta: the pool takes 94 batches, the rest is lost
    expect(capture.stats.droppedFrames).toBe(0); // the page has not run yet: it cannot know
    await play(0.5, 'alive');
    const lost = 938 * 128 - pool;
    // Live, before stop(): the page learnt of the loss when frames flowed again.
    expect(capture.stats.droppedFrames).toBe(lost);
    expect(drops).toEqual([{ from: stallAt + pool, to: stallAt + 938 * 128, sessionSample: expect.any(Number), cause: 'pool' }]);
    const result = await capture.stop();
    expect(result.worklet).toMatchObject({ exact: true, dropped: lost, frames: processor.frames });
    expect(result.droppedFrames).toBe(lost);
    expect(result.capturedFrames + result.droppedFrames).toBe(processor.frames);
    expect(result.encodedFrames).toBe(result.capturedFrames);
    await checkStored(s, result, drops, rate);
  });

  it('shared: a full ring loses the excess mid-quantum; the page splices exactly there, including a run still open at stop', async () => {
    const rate = 44_100;
    const s = await session();
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated = true; // Node has SharedArrayBuffer
    try {
      const { capture, processor, play } = rig(s, rate, { transport: 'shared', drainMs: 2 });
      const drops: CaptureDrop[] = [];
      captureStreams(capture).drops$.subscribe((d) => drops.push(d));
      await play(1, 'alive');
      await play(1.5, 'stalled');
      await play(0.5, 'alive');
      expect(drops).toEqual([]);
      const stallAt = processor.frames;
      const stallQuanta = Math.round((2.5 * rate) / 128);
      await play(2.5, 'stalled'); // the ring holds 88,200 frames: 689 quanta and 8 frames of the 690th
      await play(0.5, 'alive');
      const lost = stallQuanta * 128 - 88_200;
      expect(capture.stats.droppedFrames).toBe(lost);
      expect(drops).toEqual([{ from: stallAt + 88_200, to: stallAt + stallQuanta * 128, sessionSample: expect.any(Number), cause: 'ring' }]);
      const endAt = processor.frames;
      await play(2.5, 'stalled'); // and stop while this second loss is still open
      const result = await capture.stop();
      expect(drops).toHaveLength(2);
      expect(drops[1]).toMatchObject({ from: endAt + 88_200, to: processor.frames });
      expect(result.worklet).toMatchObject({ exact: true, frames: processor.frames, dropped: lost + processor.frames - endAt - 88_200 });
      expect(result.capturedFrames + result.droppedFrames).toBe(processor.frames);
      await checkStored(s, result, drops, rate);
    } finally {
      delete (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
    }
  });
});

describe('a delivery that throws', () => {
  for (const transport of ['transfer', 'shared'] as const) {
    it(`${transport}: the session refusing the audio stops the capture with WEB_AUDIO_CAPTURE_FAILED; the totals say audio went missing`, async () => {
      const rate = 48_000;
      const s = await session();
      (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated = transport === 'shared';
      try {
        // The session refuses every block, as a custom CaptureSession an app passes may (the real
        // session refuses write() only inside a segment of another format, which a capture that
        // declares its own format at each cut never produces). Everything else is the real session.
        const refusing = new Proxy(s, {
          get(target, prop) {
            if (prop === 'write') return () => { throw new RealtimeError('REALTIME_INVALID_STATE', 'this session takes no more audio'); };
            const value: unknown = Reflect.get(target, prop, target);
            return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          },
        });
        const { capture, play } = rig(refusing, rate, { transport, drainMs: 2 });
      const reported: unknown[] = [];
      (globalThis as { reportError?: (e: unknown) => void }).reportError = (e) => reported.push(e); // a browser has one
        let stopping: Promise<CaptureResult> | undefined;
        const states: CaptureState[] = [];
        // Through the rx view: the current state on subscribe, then each change, as the capture tells them.
        captureStreams(capture).state$.subscribe((state) => {
          states.push(state);
          if (state === 'stopping') stopping = capture.stop(); // the app's own stop(), as the failure is in flight
        });
        await play(0.2, 'alive');
        for (let i = 0; i < 50 && stopping === undefined; i++) await turn();
        const caught = await stopping!.catch((e: unknown) => e);
        expect(caught).toMatchObject({ name: 'WebAudioError', code: 'WEB_AUDIO_CAPTURE_FAILED', cause: { code: 'REALTIME_INVALID_STATE' } });
        expect(capture.failure).toBe(caught);
        expect(reported).toEqual([caught]); // reported even to an app that never calls stop()
        expect(states).toEqual(['capturing', 'stopping', 'stopped']);
        expect(capture.stats.sentSamples).toBe(0);
        expect(() => capture.mute()).toThrow(expect.objectContaining({ code: 'WEB_AUDIO_STOPPED' }));
      } finally {
        delete (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
        delete (globalThis as { reportError?: unknown }).reportError;
        s.close();
      }
    });
  }

  it('shared: the page hands the session views of the shared ring, not copies; the session alone resamples them', async () => {
    const rate = 48_000;
    const s = await session();
    (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated = true;
    try {
      const buffers = new Set<ArrayBufferLike>();
      const { capture, feed, processor, play } = rig(s, rate, { transport: 'shared', drainMs: 2 }, (block) => void buffers.add(block.buffer));
      await play(0.5, 'alive');
      const result = await capture.stop();
      // Every block the session got is the worklet's own memory: the resampler's history is the one copy.
      expect([...buffers]).toEqual([feed.processorOptions.ring!.buffer]);
      expect(result.encodedFrames).toBe(processor.frames);
      await checkStored(s, result, [], rate);
    } finally {
      delete (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated;
    }
  });

  it("the app's onSamples throwing costs no audio: the error is reported (reportError) and the block still goes out", async () => {
    const rate = 48_000;
    const s = await session();
    const reported: unknown[] = [];
    (globalThis as { reportError?: (e: unknown) => void }).reportError = (e) => reported.push(e); // a browser has one
    try {
      let calls = 0;
      const { capture, processor, play } = rig(s, rate, { transport: 'transfer' }, () => {
        if (++calls === 2) throw new Error('app bug');
      });
      await play(0.5, 'alive');
      const result = await capture.stop();
      expect(reported).toEqual([new Error('app bug')]);
      expect(result.worklet.exact).toBe(true);
      expect(result.encodedFrames).toBe(processor.frames);
      await checkStored(s, result, [], rate);
    } finally {
      delete (globalThis as { reportError?: unknown }).reportError;
    }
  });
});

describe('an audio thread that stops delivering (worklet class + page side, into a real session)', () => {
  it('is reported as starvation once it falls behind the wall clock by the threshold, and as fed when audio comes again; no gap, no audio lost', async () => {
    const rate = 48_000;
    const s = await session();
    const { capture, play } = rig(s, rate, { transport: 'transfer', starvationMs: 300 });
    const events: WebCaptureEvent[] = [];
    capture.on('event', (e) => events.push(e));
    await play(0.5, 'alive'); // faster than real time: the capture runs ahead of the clock
    expect(capture.health).toMatchObject({ state: 'running', underruns: 0 });
    expect(capture.health.timeToFirstAudioMs).not.toBeNull();
    // The audio thread gives nothing (no render quanta) while the page is alive: in a browser, a
    // device that stopped delivering or an audio thread the system does not run.
    const until = Date.now() + 5000;
    while (!events.some((e) => e.type === 'starved') && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const starved = events.find((e) => e.type === 'starved') as Extract<WebCaptureEvent, { type: 'starved' }>;
    expect(starved.behindMs).toBeGreaterThan(300);
    expect(capture.health).toMatchObject({ state: 'running', underruns: 1 });
    expect(capture.health.reason).toMatch(/^starved/);
    expect(capture.health.silentForMs).toBeGreaterThan(300);
    await play(1, 'alive'); // audio again, more of it than the clock asks for: caught up
    expect(capture.health.reason).toBe('audio flows');
    // Once caught up: how long no audio came, from the last frame before to the first after.
    const recovered = events.find((e) => e.type === 'recovered') as Extract<WebCaptureEvent, { type: 'recovered' }>;
    expect(recovered).toMatchObject({ cause: 'starved' });
    expect(recovered.afterMs).toBeGreaterThanOrEqual(starved.behindMs);
    expect(events.map((e) => e.type)).toEqual(['starved', 'recovered']);
    expect(capture.health.gaps).toBe(0); // late audio is not missing audio: nothing was cut
    const result = await capture.stop();
    expect(result.worklet).toMatchObject({ exact: true, dropped: 0 });
    await checkStored(s, result, [], rate);
  });
});

describe('clock drift (worklet class + page side, into a real session)', () => {
  it('an audio thread whose clock runs 1,000 ppm fast reads as 1,000 ± 50 ppm after 60 s', { timeout: 120_000 }, async () => {
    const rate = 16_000;
    const s = await session();
    const { capture, processor, playQuanta } = rig(s, rate, { transport: 'transfer' });
    // The audio thread renders quanta on the wall clock scaled by 1.001: a device clock 1,000 ppm fast.
    const t0 = performance.now();
    const readings: Array<[number, number | null]> = [];
    while (performance.now() - t0 < 60_000) {
      const due = Math.floor((((performance.now() - t0) / 1000) * rate * 1.001) / 128);
      const ahead = due - processor.frames / 128;
      if (ahead > 0) await playQuanta(ahead, 'alive');
      else await new Promise((r) => setTimeout(r, 5));
      const elapsed = Math.round((performance.now() - t0) / 1000);
      if (readings.length < elapsed) readings.push([elapsed, capture.health.driftPpm]);
    }
    const ppm = capture.health.driftPpm;
    process.stdout.write(`drift of a 1,000 ppm fast capture: ${readings.filter(([t]) => t % 10 === 0).map(([t, p]) => `${t} s: ${p === null ? '-' : p.toFixed(0)}`).join(', ')}; at 60 s ${ppm?.toFixed(1)} ppm\n`);
    expect(readings.find(([t]) => t === 5)?.[1]).toBeNull(); // too little to fit before 10 s
    expect(ppm).not.toBeNull();
    expect(Math.abs((ppm as number) - 1000)).toBeLessThanOrEqual(50);
    expect(capture.health.underruns).toBe(0);
    const result = await capture.stop();
    expect(result.worklet).toMatchObject({ exact: true, dropped: 0 });
    await checkStored(s, result, [], rate);
  });
});

describe('what a capture tells (worklet class + page side, into a real session)', () => {
  it('listeners and the rx view: current values on subscribe, each change once, the last health before stopped, and complete once stopped', async () => {
    const rate = 48_000;
    const s = await session();
    const { capture, play } = rig(s, rate, { transport: 'transfer' });
    const changes: Array<{ from: CaptureState; to: CaptureState }> = [];
    const healths: string[] = [];
    let levels = 0;
    capture.on('state', (c) => changes.push(c)).on('health', (h) => healths.push(h.state)).on('level', () => levels++);
    const streams = captureStreams(capture);
    const seen = { states: [] as CaptureState[], healths: [] as string[], completed: [] as string[] };
    streams.state$.subscribe({ next: (v) => seen.states.push(v), complete: () => seen.completed.push('state$') });
    streams.health$.subscribe({ next: (h) => seen.healths.push(h.state), complete: () => seen.completed.push('health$') });
    streams.drops$.subscribe({ complete: () => seen.completed.push('drops$') });
    expect(seen).toEqual({ states: ['capturing'], healths: ['starting'], completed: [] }); // the values now, at once
    await play(0.5, 'alive');
    expect(levels).toBeGreaterThan(0);
    capture.mute();
    capture.unmute();
    await capture.stop();
    expect(changes).toEqual([
      { from: 'capturing', to: 'muted' }, { from: 'muted', to: 'capturing' },
      { from: 'capturing', to: 'stopping' }, { from: 'stopping', to: 'stopped' },
    ]);
    expect(healths.at(-1)).toBe('stopped');
    expect(seen.states).toEqual(['capturing', 'muted', 'capturing', 'stopping', 'stopped']);
    expect(seen.healths.at(-1)).toBe('stopped');
    expect(seen.completed.sort()).toEqual(['drops$', 'health$', 'state$']);
    // Subscribed after the stop: the current value, then completion at once.
    const late: string[] = [];
    streams.state$.subscribe({ next: (v) => late.push(v), complete: () => late.push('complete') });
    streams.events$.subscribe({ next: () => late.push('event'), complete: () => late.push('events complete') });
    expect(late).toEqual(['stopped', 'complete', 'events complete']);
    s.close();
  });
});
