import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { VoiceGate } from '@soundclone/core/internal';
import { defineCaptureProcessor, type MessagePortLike } from '../src/worklet/capture-processor.ts';
import { SharedRingFeed, TransferFeed, type FeedSink, type SampleFeed } from '../src/capture/sample-feed.ts';

/**
 * The worklet's voice gate, run directly in Node: the processor class on a stub base, linked port to
 * port with the page's real feeds (TransferFeed, SharedRingFeed), so the messages and the shared
 * tables go through the code the browser runs. What the page receives is checked against core's
 * VoiceGate run on the same quanta (the reference loop of a source that gates itself).
 */
const RATE = 48_000;

/** A port whose posts reach the other side at once (the page's feed and the worklet in one thread). */
class LinkedPort implements MessagePortLike {
  onmessage: ((event: MessageEvent) => void) | null = null;
  other: LinkedPort | undefined;
  postMessage(message: unknown): void {
    this.other?.onmessage?.({ data: message } as MessageEvent);
  }
  close(): void {}
}

let nextPort: LinkedPort | undefined;
class StubBase {
  readonly port: LinkedPort;
  constructor(_options?: unknown) {
    this.port = nextPort ?? new LinkedPort();
  }
}
const Processor = class extends defineCaptureProcessor(StubBase) {};

/** Seeded noise at `db` dBFS RMS (uniform noise: RMS = amplitude / sqrt(3)). */
function noise(n: number, db: number, seed: { s: number }): Float32Array {
  const amplitude = Math.sqrt(3) * 10 ** (db / 20);
  return Float32Array.from({ length: n }, () => ((seed.s = (Math.imul(seed.s, 1103515245) + 12345) >>> 0) / 2 ** 32 * 2 - 1) * amplitude);
}

/** Quiet room noise with loud bursts: [silence, burst, silence, burst, silence] in ms. */
function signal(): Float32Array {
  const seed = { s: 99 };
  const parts: Array<[number, number]> = [[1200, -70], [800, -20], [2000, -70], [500, -22], [1700, -70]];
  const out = new Float32Array(parts.reduce((n, [ms]) => n + (ms * RATE) / 1000, 0));
  let at = 0;
  for (const [ms, db] of parts) {
    const part = noise((ms * RATE) / 1000, db, seed);
    out.set(part, at);
    at += part.length;
  }
  return out;
}

interface Received {
  /** Audio as [position, samples]. */
  audio: Array<[number, Float32Array]>;
  skipped: number;
  edges: Array<[string, number]>;
  position: number;
}

function collector(): { sink: FeedSink; received: Received } {
  const received: Received = { audio: [], skipped: 0, edges: [], position: 0 };
  const sink: FeedSink = {
    block: (block) => {
      received.audio.push([received.position, block.slice()]);
      received.position += block.length;
    },
    dropped: (_from, frames) => void (received.position += frames),
    skipped: (frames) => {
      received.skipped += frames;
      received.position += frames;
    },
    speech: (event, lag) => void received.edges.push([event, received.position + lag]),
    failed: (error) => {
      throw error;
    },
  };
  return { sink, received };
}

/** Core's VoiceGate on the same quanta: the sent ranges and the edges a source that gates itself reports. */
function reference(input: Float32Array, options: { preRollMs?: number } = {}): { sent: Array<[number, number]>; edges: Array<[string, number]> } {
  const gate = new VoiceGate({ sampleRate: RATE, ...options });
  const sent: Array<[number, number]> = [];
  const edges: Array<[string, number]> = [];
  for (let at = 0; at < input.length; at += 128) {
    const d = gate.process(input.subarray(at, at + 128));
    if (d.speechEnd >= 0) edges.push(['speech.end', d.speechEnd]);
    if (d.speechStart >= 0) edges.push(['speech.start', d.speechStart]);
    if (d.sendTo > d.sendFrom) {
      const last = sent.at(-1);
      if (last !== undefined && last[1] === d.sendFrom) last[1] = d.sendTo;
      else sent.push([d.sendFrom, d.sendTo]);
    }
  }
  const end = gate.finish();
  if (end.speechEnd >= 0) edges.push(['speech.end', end.speechEnd]);
  return { sent, edges };
}

/** The page's audio merged into contiguous ranges, each checked against the input sample for sample. */
function ranges(received: Received, input: Float32Array): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (const [position, samples] of received.audio) {
    for (let i = 0; i < samples.length; i++) if (samples[i] !== input[position + i]) throw new Error(`sample ${position + i} differs`);
    const last = out.at(-1);
    if (last !== undefined && last[1] === position) last[1] = position + samples.length;
    else out.push([position, position + samples.length]);
  }
  return out;
}

async function run(mode: 'transfer' | 'shared', input: Float32Array, gate: { preRollMs?: number } = {}): Promise<{ received: Received; frames: number; exact: boolean }> {
  const { sink, received } = collector();
  const options = { ...gate, sampleRate: RATE };
  const feed: SampleFeed = mode === 'transfer' ? new TransferFeed(1024, 200, sink, options) : new SharedRingFeed(input.length, 1_000_000, sink, options);
  const page = new LinkedPort();
  const worklet = new LinkedPort();
  page.other = worklet;
  worklet.other = page;
  nextPort = worklet;
  const p = new Processor({ processorOptions: feed.processorOptions });
  nextPort = undefined;
  feed.attach(page as unknown as MessagePort);
  for (let at = 0; at < input.length; at += 128) p.process([[input.subarray(at, at + 128)]]);
  const totals = await feed.stop(1000);
  return { received, frames: totals.frames, exact: totals.exact };
}

describe('the worklet voice gate (processor and page feeds, in Node)', () => {
  const input = signal();
  const expected = reference(input);

  for (const mode of ['transfer', 'shared'] as const) {
    it(`${mode}: the page gets exactly the gate's sends, every other frame as a skip, and the edges in worklet frames`, async () => {
      const { received, frames, exact } = await run(mode, input);
      expect(exact).toBe(true);
      expect(frames).toBe(input.length);
      // Every frame handed on once, in order: audio or skipped.
      expect(received.position).toBe(input.length);
      expect(ranges(received, input)).toEqual(expected.sent);
      expect(received.skipped).toBe(input.length - expected.sent.reduce((n, [a, b]) => n + b - a, 0));
      expect(received.edges).toEqual(expected.edges);
      // Two utterances, each with its pre-roll: the bursts start at 1.2 s and 4.0 s.
      expect(expected.sent.length).toBe(2);
      expect(expected.edges.map(([e]) => e)).toEqual(['speech.start', 'speech.end', 'speech.start', 'speech.end']);
      expect(Math.abs((expected.edges[0]![1] as number) - 1.2 * RATE)).toBeLessThanOrEqual(480);
      expect(expected.sent[0]![0]).toBeLessThanOrEqual(1.2 * RATE - 0.39 * RATE);
      expect(received.skipped).toBeGreaterThan(input.length * 0.4);
    });
  }

  it('another pre-roll is passed through to the worklet', async () => {
    const { received } = await run('transfer', input, { preRollMs: 100 });
    expect(ranges(received, input)).toEqual(reference(input, { preRollMs: 100 }).sent);
    expect(ranges(received, input)[0]![0]).toBeGreaterThan(ranges((await run('transfer', input)).received, input)[0]![0]);
  });

  it('allocates nothing per quantum, gated, in either mode (speech and silence)', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const newSpace = (): number => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')!.space_used_size;
    for (const mode of ['transfer', 'shared'] as const) {
      // The worklet alone: a port that hands every batch straight back through one reused event (the
      // page's side is not measured here: it runs on the page's thread), and, shared, a ring and a
      // gate table that no page drains (a table that filled up keeps its skips pending: no garbage either).
      const event = { data: null as unknown };
      const port = new LinkedPort();
      port.postMessage = (message: unknown) => {
        const batch = message instanceof Float32Array ? message : (message as { batch?: Float32Array | null }).batch;
        if (batch instanceof Float32Array) {
          event.data = batch;
          port.onmessage?.(event as MessageEvent);
        }
      };
      const { sink } = collector();
      const feed: SampleFeed = mode === 'transfer' ? new TransferFeed(1024, 200, sink, { sampleRate: RATE }) : new SharedRingFeed(input.length * 8, 1_000_000, sink, { sampleRate: RATE });
      nextPort = port;
      const p = new Processor({ processorOptions: feed.processorOptions });
      nextPort = undefined;
      const quanta: Float32Array[][][] = [];
      for (let at = 0; at + 128 <= input.length; at += 128) quanta.push([[input.subarray(at, at + 128)]]);
      // Warm up (V8 compiles the loops; the detector's first frames), then measure silence and speech alike.
      for (const q of quanta) p.process(q);
      const measure = (count: number): number => {
        gc();
        const before = newSpace();
        for (let i = 0; i < count; i++) p.process(quanta[(1000 + i) % quanta.length]!);
        return newSpace() - before;
      };
      // 400 and 2,400 quanta over burst onsets and silences: the difference is what 2,000 quanta cost
      // (the measurement's own fixed cost cancels). The least of 5 trials: a steady per-quantum
      // allocation shows in every trial (a view per quantum alone would be ~90 B a quantum); a one-off
      // (V8 re-optimising a function) in some.
      const trials = Array.from({ length: 5 }, () => (measure(2400) - measure(400)) / 2000);
      const perQuantum = Math.min(...trials);
      expect(perQuantum, `${mode}: ${trials.join(', ')}`).toBeLessThan(2);
    }
  });
});
