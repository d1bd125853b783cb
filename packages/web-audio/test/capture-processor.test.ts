import { setFlagsFromString, getHeapSpaceStatistics } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { SampleRing } from '@soundclone/core';
import { defineCaptureProcessor, type MessagePortLike } from '../src/worklet/capture-processor.ts';
import { DropTable } from '../src/worklet/drop-table.ts';
import type { CaptureProcessorOptions, DroppedMessage, StoppedMessage } from '../src/worklet/protocol.ts';

/**
 * The worklet's processor class, run directly in Node on a stub base (AudioWorkletProcessor exists only
 * in an AudioWorkletGlobalScope). The stub port hands posted batches straight back, as the page does,
 * through one reused event object, so the harness itself allocates nothing per call.
 */
class StubPort implements MessagePortLike {
  onmessage: ((event: MessageEvent) => void) | null = null;
  readonly posted: unknown[] = [];
  record = true;
  returnBatches = true;
  readonly #event = { data: null as unknown };
  postMessage(message: unknown): void {
    // A copy, as a real port's structured clone makes (the worklet reuses its message objects).
    if (this.record) this.posted.push(message instanceof Float32Array ? message.slice() : structuredClone(message));
    if (this.returnBatches && message instanceof Float32Array) {
      this.#event.data = message;
      this.onmessage?.(this.#event as MessageEvent);
    }
  }
  send(data: unknown): void {
    this.onmessage?.({ data } as MessageEvent);
  }
}

class StubBase {
  readonly port = new StubPort();
  constructor(_options?: unknown) {}
}

const Processor = class extends defineCaptureProcessor(StubBase) {};
type ProcessorInstance = InstanceType<typeof Processor> & { port: StubPort };

function processor(options: CaptureProcessorOptions): ProcessorInstance {
  return new Processor({ processorOptions: options }) as ProcessorInstance;
}

/** Seeded quanta of 128 frames. */
function quanta(count: number, seed = 7): Float32Array[] {
  let s = seed;
  return Array.from({ length: count }, () => Float32Array.from({ length: 128 }, () => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) / 2 ** 32) * 2 - 1));
}

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

function newSpaceUsed(): number {
  for (const space of getHeapSpaceStatistics()) if (space.space_name === 'new_space') return space.space_used_size;
  throw new Error('no new_space');
}

/**
 * Bytes allocated on the JS heap by `run`, less what the measurement itself costs: the young
 * generation's fill before and after, right after a full GC (so no scavenge happens in between for
 * anything under a few MB). Median of 5 trials.
 */
function allocatedBy(run: () => void): number {
  const trial = (body: () => void): number => {
    gc();
    const before = newSpaceUsed();
    body();
    return newSpaceUsed() - before;
  };
  const results: number[] = [];
  for (let i = 0; i < 5; i++) results.push(trial(run) - trial(() => {}));
  results.sort((a, b) => a - b);
  return results[2] as number;
}

describe('capture processor (the worklet class, run directly)', () => {
  it('transfer: delivers every frame in order in batches, then the tail and exact totals on stop', () => {
    const p = processor({ mode: 'transfer', batchFrames: 300, poolSize: 4 });
    const input = quanta(10);
    for (const q of input) expect(p.process([[q]])).toBe(true);
    p.port.send({ type: 'stop' });
    expect(p.process([[input[0] as Float32Array]])).toBe(false); // stopped: no more writes
    const batches = p.port.posted.filter((m): m is Float32Array => m instanceof Float32Array);
    expect(batches.map((b) => b.length)).toEqual([300, 300, 300, 300]);
    const stopped = p.port.posted.at(-1) as StoppedMessage;
    expect(stopped).toMatchObject({ type: 'stopped', frames: 1280, dropped: 0, tailFrames: 80 });
    const got = new Float32Array(1280);
    batches.forEach((b, i) => got.set(b, i * 300));
    got.set((stopped.tail as Float32Array).subarray(0, 80), 1200);
    const want = new Float32Array(1280);
    input.forEach((q, i) => want.set(q, i * 128));
    expect(got).toEqual(want);
  });

  it('transfer: when the page keeps every batch, frames are dropped and counted, never allocated', () => {
    const p = processor({ mode: 'transfer', batchFrames: 256, poolSize: 2 });
    p.port.returnBatches = false;
    for (const q of quanta(8)) p.process([[q]]);
    p.port.send({ type: 'stop' });
    const stopped = p.port.posted.at(-1) as StoppedMessage;
    // Two batches of 256 went out; the other 4 quanta had nowhere to go.
    expect(p.port.posted.filter((m) => m instanceof Float32Array)).toHaveLength(2);
    expect(stopped).toMatchObject({ frames: 1024, dropped: 512 });
  });

  it('transfer: a page stall longer than the pool drops one run, reported once between the batches around it', () => {
    const p = processor({ mode: 'transfer', batchFrames: 256, poolSize: 3 });
    p.port.returnBatches = false; // the page is stalled: it keeps every batch
    const input = quanta(14);
    for (const q of input.slice(0, 10)) p.process([[q]]);
    // 3 batches = 768 frames went out, quanta 6..9 (512 frames from frame 768) had nowhere to go.
    const held = p.port.posted.filter((m): m is Float32Array => m instanceof Float32Array);
    expect(held).toHaveLength(3);
    expect(p.dropped).toBe(512);
    expect(p.port.posted.some((m) => !(m instanceof Float32Array))).toBe(false); // nothing until frames flow again
    p.port.send(new Float32Array(256)); // the page wakes and returns one batch
    for (const q of input.slice(10, 12)) p.process([[q]]);
    const dropped = p.port.posted.filter((m) => !(m instanceof Float32Array));
    expect(dropped).toEqual([{ type: 'dropped', from: 768, frames: 512 } satisfies DroppedMessage]);
    // The batch after the drop holds quanta 10 and 11: the stream goes on from the first frame that fit.
    const after = p.port.posted.at(-1) as Float32Array;
    expect(after.subarray(0, 128)).toEqual(input[10]);
    expect(after.subarray(128)).toEqual(input[11]);
    expect(p.port.posted.indexOf(dropped[0])).toBe(3); // after the 3 batches before it, before the one after
    // Dropping again, then stop while the run is still open: the run comes in the stopped message.
    for (const q of input.slice(12)) p.process([[q]]);
    p.port.send({ type: 'stop' });
    expect(p.port.posted.at(-1)).toEqual({ type: 'stopped', frames: 14 * 128, dropped: 768, drop: { from: 1536, frames: 256 } });
  });

  it('shared: a full ring drops one run, recorded in the DropTable before the first frame after it is published', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 512, shared: true });
    const table = DropTable.create(2);
    const p = processor({ mode: 'shared', ring: ring.handle, drops: table.buffer });
    const input = quanta(12);
    const got = new Float32Array(128 * 12);
    let read = 0;
    for (const q of input.slice(0, 6)) p.process([[q]]); // 4 fit, quanta 4 and 5 are lost from frame 512
    expect(ring.overflowSamples).toBe(256);
    expect(table.nextAt()).toBe(-1); // still open: nothing recorded yet
    read += ring.read(got, read, 128); // the page frees one quantum
    expect(table.nextAt()).toBe(-1);
    p.process([[input[6] as Float32Array]]);
    expect([table.nextAt(), table.nextFrom(), table.nextFrames()]).toEqual([512, 512, 256]);
    expect(ring.writeCursor).toBe(640); // quantum 6 follows quantum 3 in the ring
    read += ring.read(got, read, 512);
    expect(got.subarray(384, 512)).toEqual(input[3]);
    expect(got.subarray(512, 640)).toEqual(input[6]);
    // With every table slot unread by the page, a run cannot end: it goes on even when the ring has room.
    for (const q of input.slice(7, 11)) p.process([[q]]); // quanta 7..10 fill the ring
    p.process([[input[11] as Float32Array]]); // lost: run 2 from frame 11·128
    read += ring.read(got, read, 128);
    p.process([[input[0] as Float32Array]]); // ends run 2: table has 2 slots, 2 records now
    expect(ring.overflowSamples).toBe(384);
    p.process([[input[0] as Float32Array]]); // ring full again: run 3
    read += ring.read(got, read, 512);
    p.process([[input[0] as Float32Array]]); // ring has room, but no free slot: run 3 goes on
    expect(ring.overflowSamples).toBe(640);
    expect(ring.availableToRead()).toBe(0);
    table.consume();
    p.process([[input[0] as Float32Array]]); // a slot is free: run 3 is recorded, this quantum written
    expect(ring.availableToRead()).toBe(128);
    expect([table.nextAt(), table.nextFrom(), table.nextFrames()]).toEqual([1152, 11 * 128, 128]);
    table.consume();
    expect([table.nextAt(), table.nextFrom(), table.nextFrames()]).toEqual([1280, 13 * 128, 256]);
    p.port.send({ type: 'stop' });
    expect(p.port.posted.at(-1)).toMatchObject({ type: 'stopped', frames: 16 * 128, dropped: 640 });
    expect(p.port.posted.at(-1)).not.toHaveProperty('drop');
  });

  it('shared: writes a core SampleRing the page reads back bit for bit; wakes the page at half full', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 1024, shared: true });
    const p = processor({ mode: 'shared', ring: ring.handle });
    const input = quanta(6);
    for (const q of input.slice(0, 3)) p.process([[q]]);
    expect(p.port.posted).toEqual([]);
    p.process([[input[3] as Float32Array]]); // 512 unread = half the ring
    expect(p.port.posted).toEqual([{ type: 'wake' }]);
    const got = new Float32Array(768);
    expect(ring.read(got, 0, 512)).toBe(512);
    p.port.send({ type: 'woken' });
    for (const q of input.slice(4)) p.process([[q]]);
    expect(ring.read(got, 512, 256)).toBe(256);
    const want = new Float32Array(768);
    input.forEach((q, i) => want.set(q, i * 128));
    expect(got).toEqual(want);
    p.port.send({ type: 'stop' });
    expect(p.port.posted.at(-1)).toEqual({ type: 'stopped', frames: 768, dropped: 0 });
  });

  it('allocates nothing per render quantum, in both modes (and the harness does see an allocating one)', () => {
    const input = quanta(64);
    const inputs = input.map((q) => [[q]]);
    const QUANTA = 4000;
    const shared = new SampleRing({ kind: 'float32', capacity: 128 * QUANTA * 2, shared: true });
    const sharedProcessor = processor({ mode: 'shared', ring: shared.handle });
    const transferProcessor = processor({ mode: 'transfer', batchFrames: 1024, poolSize: 4 });
    // A page that keeps every batch: after 4 batches each quantum is dropped (the stall path).
    const droppingProcessor = processor({ mode: 'transfer', batchFrames: 1024, poolSize: 4 });
    droppingProcessor.port.returnBatches = false;
    for (const p of [transferProcessor, sharedProcessor, droppingProcessor]) p.port.record = false;
    const drain = new Float32Array(shared.capacity);
    const run = (p: ProcessorInstance) => () => {
      for (let i = 0; i < QUANTA; i++) p.process(inputs[i & 63] as Float32Array[][]);
    };
    // Warm up: let the JIT optimise process() and settle its inline caches.
    for (let k = 0; k < 5; k++) {
      run(sharedProcessor)();
      shared.read(drain);
      run(transferProcessor)();
    }
    // Each trial starts from an empty ring, as warmed up: five trials without draining would run the
    // later ones against a full ring, a path the warm-up never optimised (seen allocating a heap number
    // per quantum under load until the engine tiered it up).
    const sharedBytes = allocatedBy(() => {
      shared.read(drain);
      run(sharedProcessor)();
    });
    shared.read(drain);
    const transferBytes = allocatedBy(run(transferProcessor));
    run(droppingProcessor)(); // runs the pool dry
    const droppingBytes = allocatedBy(run(droppingProcessor));
    // The control: a process() that makes one 128-frame view per quantum (subarray), as a naive worklet would.
    const control = allocatedBy(() => {
      for (let i = 0; i < QUANTA; i++) (inputs[i & 63]![0]![0] as Float32Array).subarray(0, 128);
    });
    // (the 512-byte backing stores live off the JS heap; the view objects alone are ~180 bytes each)
    expect(control).toBeGreaterThan(QUANTA * 64); // the harness sees allocation when there is some
    // 4000 quanta; one allocation of the smallest object (16 bytes) per quantum would be 64,000 bytes.
    // Seen: 0 (transfer) and 96 (shared), once 312: one-off engine work (a re-optimisation), never
    // growing with the number of quanta. Under one byte per quantum tells the two cases apart.
    expect(Math.abs(sharedBytes)).toBeLessThan(QUANTA);
    expect(Math.abs(transferBytes)).toBeLessThan(QUANTA);
    expect(Math.abs(droppingBytes)).toBeLessThan(QUANTA);
    expect(droppingProcessor.dropped).toBe(QUANTA * 128 * 6 - 4096); // 1 + 5 runs, less the 4 batches
    expect(sharedProcessor.frames).toBe(QUANTA * 128 * 10); // 5 warm-up runs + 5 measured trials
    if (process.env.SHOW_ALLOC) process.stdout.write(`alloc per ${QUANTA} quanta: shared ${sharedBytes} B, transfer ${transferBytes} B, dropping ${droppingBytes} B, control ${control} B\n`);
    expect(transferProcessor.dropped).toBe(0);
  });
});
