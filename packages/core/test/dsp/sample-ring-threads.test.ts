import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { SampleRing, type SampleKind } from '../../src/dsp/sample-ring.js';

// A producer and a consumer in two real threads over one SharedArrayBuffer. The workers import the
// compiled ring (packages/core/dist), which `pnpm test` builds first with tsc -b.
const workerUrl = new URL('./fixtures/ring-worker.mjs', import.meta.url);
const compiledRing = new URL('../../dist/dsp/sample-ring.js', import.meta.url);

interface ProducerResult {
  role: 'producer';
  offered: number;
  dropped: number;
  cursorErrors: number;
  writeCursor: number;
  overflowSamples: number;
}

interface ConsumerResult {
  role: 'consumer';
  received: number;
  errors: number;
  firstError: { position: number; got: number; expected: number } | null;
  rereads: number;
  cursorErrors: number;
  readCursor: number;
  releaseCursor: number;
  overflowSamples: number;
}

interface RunOptions {
  kind: SampleKind;
  capacity: number;
  total: number;
  maxChunk: number;
  startPosition: number;
  retain?: boolean;
  lag?: number;
  lossless?: boolean;
  seed: number;
}

function runWorker<T>(data: Record<string, unknown>): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const worker = new Worker(workerUrl, { workerData: data });
    let result: T | undefined;
    worker.once('message', (message: T) => (result = message));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (result !== undefined) resolve(result);
      else reject(new Error(`ring worker (${String(data['role'])}) exited with code ${code} and no result`));
    });
  });
}

async function run(options: RunOptions): Promise<{ ring: SampleRing; producer: ProducerResult; consumer: ConsumerResult }> {
  const { kind, capacity, total, maxChunk, startPosition, retain = false, lag = 0, lossless = true, seed } = options;
  const ring = new SampleRing({ kind, capacity, shared: true, retain, startPosition });
  const common = { handle: ring.handle, total, maxChunk, lossless, lag };
  const [producer, consumer] = await Promise.all([
    runWorker<ProducerResult>({ ...common, role: 'producer', seed }),
    runWorker<ConsumerResult>({ ...common, role: 'consumer', seed: seed ^ 0x5bd1e995 }),
  ]);
  return { ring, producer, consumer };
}

describe('SampleRing across two threads', () => {
  it('has the compiled ring to load in workers', () => {
    expect(existsSync(fileURLToPath(compiledRing)), 'run `pnpm build` before the thread tests').toBe(true);
  });

  it('moves 100 million float32 samples across 2^32 with no loss, duplication or reordering', async () => {
    const total = 100_000_000;
    const startPosition = 2 ** 32 - 37_000_000; // the cursors cross 2^32 a third of the way in
    const { ring, producer, consumer } = await run({
      kind: 'float32',
      capacity: 1 << 16,
      total,
      maxChunk: 12_000,
      startPosition,
      seed: 0x2a,
    });
    expect(consumer.firstError).toBeNull();
    expect(consumer.errors).toBe(0);
    expect([producer.cursorErrors, consumer.cursorErrors]).toEqual([0, 0]);
    expect(consumer.received).toBe(total);
    expect(producer.offered).toBe(total);
    expect(producer.dropped).toBe(0);
    expect(producer.writeCursor).toBe(startPosition + total);
    expect(consumer.readCursor).toBe(startPosition + total);
    expect(ring.writeCursor).toBe(startPosition + total);
    expect(ring.readCursor).toBe(startPosition + total);
    expect(ring.releaseCursor).toBe(startPosition + total);
    expect(ring.overflowSamples).toBe(0);
    expect(ring.availableToRead()).toBe(0);
  });

  it('retains across threads: the consumer releases behind a lag and rewinds into retained int16 data', async () => {
    const total = 20_000_000;
    const startPosition = 2 ** 33 + 2 ** 31 - 4_000_000; // the low words change sign
    const { ring, producer, consumer } = await run({
      kind: 'int16',
      capacity: 1 << 15,
      total,
      maxChunk: 4096,
      startPosition,
      retain: true,
      lag: 12_000,
      seed: 7,
    });
    expect(consumer.firstError).toBeNull();
    expect(consumer.errors).toBe(0);
    expect([producer.cursorErrors, consumer.cursorErrors]).toEqual([0, 0]);
    expect(consumer.received).toBe(total);
    expect(consumer.rereads).toBeGreaterThan(0);
    expect(producer.dropped).toBe(0);
    expect(ring.writeCursor).toBe(startPosition + total);
    expect(ring.readCursor).toBe(startPosition + total);
    expect(ring.releaseCursor).toBe(startPosition + total);
    expect(ring.overflowSamples).toBe(0);
  });

  it('counts every dropped sample exactly when the producer does not wait', async () => {
    const total = 5_000_000;
    const startPosition = 2 ** 31 - 1_000_000;
    const { ring, producer, consumer } = await run({
      kind: 'float32',
      capacity: 4096,
      total,
      maxChunk: 3000,
      startPosition,
      lossless: false,
      seed: 99,
    });
    expect(consumer.errors).toBe(0);
    expect([producer.cursorErrors, consumer.cursorErrors]).toEqual([0, 0]);
    expect(consumer.received).toBe(total);
    expect(producer.offered - producer.dropped).toBe(total);
    expect(producer.overflowSamples).toBe(producer.dropped);
    expect(consumer.overflowSamples).toBe(producer.dropped);
    expect(ring.overflowSamples).toBe(producer.dropped);
    expect(ring.writeCursor).toBe(startPosition + total);
  });
});
