import { describe, expect, it } from 'vitest';
import { encodePcm16Into } from '../../src/dsp/pcm16.js';
import { RingSegments, SampleRing, type SampleArrayOf, type SampleKind } from '../../src/dsp/sample-ring.js';
import { MAX_POSITION, initCounter, loadCounter, publishCounter } from '../../src/dsp/ring-control.js';
import { mulberry32, randomInt } from '../support/prng.js';
import { expectDspError } from '../support/dsp-errors.js';

const TWO_32 = 2 ** 32;
const KINDS: readonly SampleKind[] = ['float32', 'int16'];

/** The sample written at absolute position p: a hash of all of p, exact in either kind. */
function valueAt(kind: SampleKind, p: number): number {
  const lo = p >>> 0;
  const hi = Math.floor(p / TWO_32);
  let h = Math.imul(lo ^ Math.imul(hi + 0x632be5ab, 0x85ebca6b), 0x9e3779b1);
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  h ^= h >>> 12;
  // float32: 24-bit values in [-1, 1); int16: [-16384, 16383], so the canaries below never occur.
  return kind === 'float32' ? ((h >>> 8) - 2 ** 23) / 2 ** 23 : (h >>> 18) - 8192 * 2;
}

/** Outside every valueAt() range: marks memory nobody may write. */
function canary(kind: SampleKind): number {
  return kind === 'float32' ? 7.25 : -32000;
}

function makeArray<K extends SampleKind>(kind: K, length: number): SampleArrayOf<K> {
  const array = kind === 'float32' ? new Float32Array(length) : new Int16Array(length);
  return array.fill(canary(kind)) as SampleArrayOf<K>;
}


describe('SampleRing construction', () => {
  it('sizes buffers as a 192-byte control block plus the samples', () => {
    expect(SampleRing.byteLengthFor('float32', 1)).toBe(196);
    expect(SampleRing.byteLengthFor('int16', 1000)).toBe(2192);
    const ring = new SampleRing({ kind: 'int16', capacity: 1000 });
    expect(ring.handle.buffer.byteLength).toBe(2192);
    expect(ring.storage).toBeInstanceOf(Int16Array);
    expect(ring.storage.length).toBe(1000);
  });

  it('rejects bad kinds, capacities and options', () => {
    for (const capacity of [0, -1, 1.5, NaN, Infinity, 2 ** 30 + 1, '8']) {
      expectDspError(() => new SampleRing({ kind: 'float32', capacity: capacity as number }), 'DSP_INVALID_OPTION');
    }
    expectDspError(() => new SampleRing({ kind: 'int32' as SampleKind, capacity: 8 }), 'DSP_INVALID_OPTION');
    expectDspError(() => SampleRing.byteLengthFor('float64' as SampleKind, 8), 'DSP_INVALID_OPTION');
    expectDspError(() => SampleRing.byteLengthFor('int16', 0), 'DSP_INVALID_OPTION');
    expectDspError(() => new SampleRing({ kind: 'int16', capacity: 8, retain: 1 as unknown as boolean }), 'DSP_INVALID_OPTION');
    expectDspError(() => new SampleRing({ kind: 'int16', capacity: 8, shared: 'yes' as unknown as boolean }), 'DSP_INVALID_OPTION');
    for (const startPosition of [-1, 0.5, 2 ** 53, NaN]) {
      expectDspError(() => new SampleRing({ kind: 'int16', capacity: 8, startPosition }), 'DSP_INVALID_OPTION');
    }
    expectDspError(() => new SampleRing(null as unknown as { kind: 'int16'; capacity: number }), 'DSP_INVALID_OPTION');
  });

  it('accepts the largest capacity as a size without allocating it', () => {
    expect(SampleRing.byteLengthFor('float32', 2 ** 30)).toBe(192 + 2 ** 32);
  });

  it('exposes a plain, structured-cloneable handle', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 16, shared: true, retain: true });
    expect(Object.keys(ring.handle).sort()).toEqual(['buffer', 'capacity', 'kind', 'retain']);
    expect(ring.handle).toMatchObject({ kind: 'float32', capacity: 16, retain: true });
    expect(ring.handle.buffer).toBeInstanceOf(SharedArrayBuffer);
    expect(ring.shared).toBe(true);
    const clone = structuredClone(ring.handle);
    const other = SampleRing.attach(clone);
    ring.write(new Float32Array([0.25, 0.5]));
    const out = new Float32Array(2);
    expect(other.read(out)).toBe(2);
    expect([...out]).toEqual([0.25, 0.5]);
  });

  it('defaults to a non-shared ring without retention, cursors at 0', () => {
    const ring = new SampleRing({ kind: 'int16', capacity: 4 });
    expect(ring.shared).toBe(false);
    expect(ring.retain).toBe(false);
    expect(ring.handle.buffer).toBeInstanceOf(ArrayBuffer);
    expect([ring.writeCursor, ring.readCursor, ring.releaseCursor, ring.overflowSamples]).toEqual([0, 0, 0, 0]);
    expect(ring.availableToRead()).toBe(0);
    expect(ring.availableToWrite()).toBe(4);
  });

  it('refuses to attach to a buffer that does not match the handle', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 8, shared: true });
    const { buffer } = ring.handle;
    // Same byte length, other kind: only the header tells them apart.
    expectDspError(() => SampleRing.attach({ kind: 'int16', capacity: 16, retain: false, buffer }), 'DSP_INVALID_BUFFER');
    expectDspError(() => SampleRing.attach({ kind: 'float32', capacity: 8, retain: true, buffer }), 'DSP_INVALID_BUFFER');
    expectDspError(() => SampleRing.attach({ kind: 'float32', capacity: 9, retain: false, buffer }), 'DSP_INVALID_BUFFER');
    expectDspError(
      () => SampleRing.attach({ kind: 'float32', capacity: 8, retain: false, buffer: new ArrayBuffer(buffer.byteLength) }),
      'DSP_INVALID_BUFFER',
    );
    expectDspError(
      () => SampleRing.attach({ kind: 'float32', capacity: 8, retain: false, buffer: new Uint8Array(224) as unknown as ArrayBuffer }),
      'DSP_INVALID_BUFFER',
    );
    expectDspError(() => SampleRing.attach(undefined as unknown as typeof ring.handle), 'DSP_INVALID_BUFFER');
    expect(SampleRing.attach({ kind: 'float32', capacity: 8, retain: false, buffer }).capacity).toBe(8);
  });
});

describe('SampleRing reads and writes', () => {
  for (const kind of KINDS) {
    for (const shared of [false, true]) {
      it(`${kind}${shared ? ', shared' : ''}: counts, canaries, wrap-around and two segments`, () => {
        const ring = new SampleRing({ kind, capacity: 8, shared });
        const src = makeArray(kind, 12);
        for (let i = 0; i < 10; i++) src[i + 1] = valueAt(kind, i);

        expect(ring.read(makeArray(kind, 4))).toBe(0);
        expect(ring.write(src, 1, 6)).toBe(6);
        const dst = makeArray(kind, 8);
        expect(ring.read(dst, 2, 4)).toBe(4);
        expect([...dst]).toEqual([canary(kind), canary(kind), ...[0, 1, 2, 3].map((p) => valueAt(kind, p)), canary(kind), canary(kind)]);

        // 2 unread, write 4 more: positions 6..9 wrap from index 6 round to index 1.
        expect(ring.write(src, 7, 4)).toBe(4);
        expect(ring.writeCursor).toBe(10);
        expect(ring.availableToRead()).toBe(6);
        expect(ring.availableToWrite()).toBe(2);

        const segments = new RingSegments<typeof kind>();
        expect(ring.readSegments(100, segments)).toBe(6);
        expect(segments).toMatchObject({ position: 4, firstStart: 4, firstLength: 4, secondStart: 0, secondLength: 2 });
        expect(segments.length).toBe(6);
        expect(segments.storage).toBe(ring.storage);
        const seen = [
          ...segments.storage.subarray(segments.firstStart, segments.firstStart + segments.firstLength),
          ...segments.storage.subarray(0, segments.secondLength),
        ];
        expect(seen).toEqual([4, 5, 6, 7, 8, 9].map((p) => valueAt(kind, p)));
        ring.consume(3);
        expect(ring.readCursor).toBe(7);

        const out = makeArray(kind, 5);
        expect(ring.read(out, 1)).toBe(3);
        expect([...out]).toEqual([canary(kind), ...[7, 8, 9].map((p) => valueAt(kind, p)), canary(kind)]);
        expect(ring.read(out)).toBe(0);
      });
    }
  }

  it('writes what fits and counts the rest as overflow, exactly', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 5 });
    expect(ring.write(new Float32Array(3))).toBe(3);
    expect(ring.write(new Float32Array(4))).toBe(2);
    expect(ring.overflowSamples).toBe(2);
    expect(ring.write(new Float32Array(7))).toBe(0);
    expect(ring.overflowSamples).toBe(9);
    expect(ring.write(new Float32Array(0))).toBe(0);
    ring.read(new Float32Array(1));
    expect(ring.write(new Float32Array(3), 1)).toBe(1);
    expect(ring.overflowSamples).toBe(10);
    // The counter is exact beyond 2^32 too (commitWrite reports drops directly).
    ring.commitWrite(0, TWO_32 + 3);
    expect(ring.overflowSamples).toBe(TWO_32 + 13);
    expect(SampleRing.attach(ring.handle).overflowSamples).toBe(TWO_32 + 13);
  });

  it('rejects the wrong array kind and out-of-range offsets', () => {
    const ring = new SampleRing({ kind: 'int16', capacity: 8 });
    const wrong = new Float32Array(4) as unknown as Int16Array;
    expectDspError(() => ring.write(wrong), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.read(wrong), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.peek(wrong, 0, 1), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.write(new Uint16Array(4) as unknown as Int16Array), 'DSP_INVALID_BUFFER');
    const a = new Int16Array(4);
    expectDspError(() => ring.write(a, 5), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.write(a, 1, 4), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.write(a, -1, 1), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.write(a, 0.5, 1), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.read(a, 2, 3), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => ring.read(a, -2, 1), 'DSP_INVALID_BUFFER');
    expectDspError(() => ring.peek(a, 0, 5), 'DSP_OUTPUT_TOO_SMALL');
    expectDspError(() => ring.readSegments(-1, ring.createSegments()), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.writeSegments(NaN, ring.createSegments()), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.consume(1), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.commitWrite(9), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.commitWrite(1, -1), 'DSP_INVALID_OPTION');
    // Nothing moved.
    expect([ring.writeCursor, ring.readCursor, ring.overflowSamples]).toEqual([0, 0, 0]);
  });

  it('hands out views: two at the wrap, one shared empty second otherwise', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 4 });
    ring.write(new Float32Array([1, 2, 3]));
    let views = ring.readViews();
    expect([...views.first]).toEqual([1, 2, 3]);
    expect(views.second.length).toBe(0);
    expect(views.first.buffer).toBe(ring.handle.buffer);
    ring.consume(2);
    ring.write(new Float32Array([4, 5]));
    views = ring.readViews(2);
    expect(views.position).toBe(2);
    expect([...views.first]).toEqual([3, 4]);
    expect(views.second.length).toBe(0);
    const empty = views.second;
    views = ring.readViews();
    expect([...views.first, ...views.second]).toEqual([3, 4, 5]);
    expect(views.second.buffer).toBe(ring.handle.buffer);
    ring.consume(3);
    expect(ring.readViews().second).toBe(empty);
  });

  it('lets a producer encode straight into an int16 ring (writeSegments + encodePcm16Into)', () => {
    const ring = new SampleRing({ kind: 'int16', capacity: 6 });
    ring.write(new Int16Array(4));
    ring.consume(4);
    const input = new Float32Array([0.5, -0.5, 1, -1, 0.25]);
    const segments = ring.createSegments();
    const n = ring.writeSegments(input.length, segments);
    expect(n).toBe(5);
    expect(segments).toMatchObject({ position: 4, firstStart: 4, firstLength: 2, secondStart: 0, secondLength: 3 });
    encodePcm16Into(input, 0, segments.firstLength, segments.storage, segments.firstStart);
    encodePcm16Into(input, segments.firstLength, segments.secondLength, segments.storage, segments.secondStart);
    ring.commitWrite(n);
    const out = new Int16Array(5);
    expect(ring.read(out)).toBe(5);
    expect([...out]).toEqual([16384, -16384, 32767, -32768, 8192]);
  });

  it('resets a non-shared ring to its start position; refuses on a shared one', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 4, startPosition: 100 });
    ring.write(new Float32Array(6));
    ring.read(new Float32Array(1));
    ring.reset();
    expect([ring.writeCursor, ring.readCursor, ring.releaseCursor, ring.overflowSamples]).toEqual([100, 100, 100, 0]);
    expect(ring.availableToWrite()).toBe(4);
    ring.reset(TWO_32 + 2);
    expect(ring.write(new Float32Array([1, 2, 3]))).toBe(3);
    expect(ring.readSegments(3, ring.createSegments())).toBe(3);
    expect(ring.writeCursor).toBe(TWO_32 + 5);
    expect(SampleRing.attach(ring.handle).readCursor).toBe(TWO_32 + 2);
    const shared = new SampleRing({ kind: 'float32', capacity: 4, shared: true });
    expectDspError(() => shared.reset(), 'DSP_INVALID_STATE');
  });
});

describe('SampleRing retention', () => {
  it('keeps read data until release(), and rewind()/peek() read it again', () => {
    const ring = new SampleRing({ kind: 'float32', capacity: 8, retain: true, startPosition: 10 });
    const src = new Float32Array(8).map((_, i) => i + 1);
    expect(ring.write(src, 0, 6)).toBe(6);
    const out = new Float32Array(8);
    expect(ring.read(out, 0, 6)).toBe(6);
    expect(ring.readCursor).toBe(16);
    expect(ring.releaseCursor).toBe(10);
    expect(ring.availableToRead()).toBe(0);
    expect(ring.availableToWrite()).toBe(2);
    expect(ring.write(src, 0, 3)).toBe(2);
    expect(ring.overflowSamples).toBe(1);

    // peek anywhere in [release, write) without moving anything.
    const peeked = new Float32Array(4).fill(-1);
    expect(ring.peek(peeked, 12, 3, 1)).toBe(3);
    expect([...peeked]).toEqual([-1, 3, 4, 5]);
    expect(ring.peek(peeked, 17, 4)).toBe(1);
    expect(ring.peek(peeked, 18, 4)).toBe(0);
    expect(ring.peek(peeked, 1000, 4)).toBe(0);
    expectDspError(() => ring.peek(peeked, 9, 1), 'DSP_INVALID_OPTION');
    expect(ring.readCursor).toBe(16);

    // A reconnect: the server acknowledged up to 13, resend from there.
    ring.release(13);
    ring.release(11); // late duplicate ack: ignored
    expect(ring.releaseCursor).toBe(13);
    expect(ring.availableToWrite()).toBe(3);
    ring.rewind(13);
    expect(ring.availableToRead()).toBe(5);
    expect(ring.read(out)).toBe(5);
    expect([...out.subarray(0, 5)]).toEqual([4, 5, 6, 1, 2]);
    expectDspError(() => ring.rewind(12), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.rewind(19), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.release(19), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.rewind(-1), 'DSP_INVALID_OPTION');

    // Releasing past the read cursor moves it too: no point resending what the server has.
    ring.rewind(14);
    ring.release(16);
    expect([ring.readCursor, ring.releaseCursor]).toEqual([16, 16]);
    // Rewinding forward skips.
    ring.rewind(18);
    expect(ring.availableToRead()).toBe(0);
    expect(ring.releaseCursor).toBe(16);
  });

  it('without retention, release follows read and rewind cannot go back', () => {
    const ring = new SampleRing({ kind: 'int16', capacity: 4 });
    ring.write(new Int16Array([1, 2, 3]));
    ring.read(new Int16Array(2));
    expect([ring.readCursor, ring.releaseCursor]).toEqual([2, 2]);
    expect(ring.availableToWrite()).toBe(3);
    expectDspError(() => ring.rewind(1), 'DSP_INVALID_OPTION');
    expectDspError(() => ring.peek(new Int16Array(1), 1, 1), 'DSP_INVALID_OPTION');
    ring.rewind(3);
    expect([ring.readCursor, ring.releaseCursor]).toEqual([3, 3]);
    ring.release(3);
    expect(ring.availableToWrite()).toBe(4);
  });
});

describe('SampleRing cursors past 2^32 and near 2^53', () => {
  // 2^31 and its odd multiples flip the sign of the low words; multiples of 2^32 change the high words.
  for (const [shared, base] of [
    [false, TWO_32],
    [true, TWO_32],
    [true, 2 ** 31],
    [false, 5 * 2 ** 31],
  ] as const) {
    it(`stays exact across ${base}${shared ? ' (shared, second object attached)' : ''}`, () => {
      const start = base - 5;
      const ring = new SampleRing({ kind: 'float32', capacity: 8, shared, retain: true, startPosition: start });
      const consumer = SampleRing.attach(ring.handle);
      const src = new Float32Array(6).map((_, i) => i);
      expect(ring.write(src)).toBe(6);
      expect(consumer.availableToRead()).toBe(6);
      const out = new Float32Array(6);
      expect(consumer.read(out, 0, 4)).toBe(4);
      expect(consumer.readCursor).toBe(base - 1);
      expect(consumer.read(out, 4)).toBe(2);
      expect(ring.readCursor).toBe(base + 1);
      expect([...out]).toEqual([0, 1, 2, 3, 4, 5]);
      consumer.release(base - 2);
      expect(ring.releaseCursor).toBe(base - 2);
      expect(ring.availableToWrite()).toBe(5);
      expect(ring.write(src)).toBe(5);
      expect(ring.writeCursor).toBe(base + 6);
      expect(ring.overflowSamples).toBe(1);
      // Back across the boundary and forward again.
      consumer.rewind(base - 1);
      expect(ring.readCursor).toBe(base - 1);
      expect(consumer.peek(out, base - 2, 6)).toBe(6);
      expect([...out]).toEqual([3, 4, 5, 0, 1, 2]);
      const late = SampleRing.attach(ring.handle);
      expect([late.writeCursor, late.readCursor, late.releaseCursor]).toEqual([base + 6, base - 1, base - 2]);
      expect(late.read(out)).toBe(6);
      expect([...out]).toEqual([4, 5, 0, 1, 2, 3]);
      expect(ring.readCursor).toBe(base + 5);
    });
  }

  it('stays exact up to 2^53 - 1, where the ring stops accepting', () => {
    const capacity = 16;
    const start = MAX_POSITION - 40;
    const ring = new SampleRing({ kind: 'int16', capacity, startPosition: start });
    const src = new Int16Array(capacity).map((_, i) => i);
    const out = new Int16Array(capacity);
    let expected = start;
    for (let round = 0; round < 3; round++) {
      const n = ring.write(src);
      expected += n;
      expect(ring.writeCursor).toBe(expected);
      expect(ring.read(out)).toBe(n);
      expect([...out.subarray(0, n)]).toEqual([...src.subarray(0, n)]);
      expect(ring.readCursor).toBe(expected);
    }
    expect(ring.writeCursor).toBe(MAX_POSITION);
    expect(ring.availableToWrite()).toBe(0);
    expect(ring.write(src)).toBe(0);
    expect(ring.overflowSamples).toBe(8 + capacity);
    expect(ring.writeSegments(4, ring.createSegments())).toBe(0);
    expect(SampleRing.attach(ring.handle).readCursor).toBe(MAX_POSITION);
  });

  it('keeps a counter exact through hi-word changes, in both directions', () => {
    const ctl = new Int32Array(new SharedArrayBuffer(12));
    initCounter(ctl, 0, TWO_32 - 1);
    expect(loadCounter(ctl, 0)).toBe(TWO_32 - 1);
    for (const [previous, next] of [
      [TWO_32 - 1, TWO_32],
      [TWO_32, 3 * TWO_32 + 7],
      [3 * TWO_32 + 7, 3 * TWO_32 + 2 ** 31 + 1],
      [3 * TWO_32 + 2 ** 31 + 1, 2 * TWO_32 + 5],
      [2 * TWO_32 + 5, MAX_POSITION],
    ] as const) {
      publishCounter(ctl, 0, previous, next);
      expect(loadCounter(ctl, 0)).toBe(next);
      expect(ctl[2]! & 1).toBe(0);
    }
  });
});

describe('SampleRing against a model, seeded', () => {
  // 2^31: the low words change sign; 2^32: the high words change.
  const starts = { zero: 0, 'just below 2^31': 2 ** 31 - 300, 'just below 2^32': TWO_32 - 300, 'near 2^53': MAX_POSITION - 2500 };
  let seed = 1;
  for (const kind of KINDS) {
    for (const shared of [false, true]) {
      for (const retain of [false, true]) {
        for (const [startName, start] of Object.entries(starts)) {
          const caseSeed = seed++;
          const name = `${kind}, ${shared ? 'shared' : 'plain'}, ${retain ? 'retain' : 'no retain'}, start ${startName}, seed ${caseSeed}`;
          it(name, () => modelRun(kind, shared, retain, start, caseSeed));
        }
      }
    }
  }
});

/**
 * Random operations on a ring (a producer object and, on odd seeds, a separate consumer object over
 * the same buffer) checked against plain numbers. The test also plays garbage collector: released
 * slots are filled with the canary, and every free slot must still hold it after each operation,
 * so a write outside its slots shows up at once.
 */
function modelRun(kind: SampleKind, shared: boolean, retain: boolean, start: number, seed: number): void {
  const random = mulberry32(seed);
  const capacity = randomInt(random, 1, 40);
  const producer = new SampleRing({ kind, capacity, shared, retain, startPosition: start });
  const consumer = seed % 2 === 1 ? SampleRing.attach(producer.handle) : producer;
  const storage = producer.storage;
  storage.fill(canary(kind));
  const segments = new RingSegments<SampleKind>();
  let write = start;
  let read = start;
  let release = start;
  let overflow = 0;
  const free = (): number => Math.min(capacity - (write - release), MAX_POSITION - write);

  const setRelease = (position: number): void => {
    for (let p = release; p < position; p++) storage[p % capacity] = canary(kind);
    release = position;
  };
  // expect() costs microseconds; thousands of steps check with plain comparisons and fail loudly.
  let step = 0;
  const same = (actual: unknown, expected: unknown, what: string): void => {
    if (actual !== expected) expect.fail(`step ${step}: ${what} is ${String(actual)}, expected ${String(expected)}`);
  };
  const expectValues = (array: ArrayLike<number>, at: number, n: number, position: number): void => {
    for (let i = 0; i < n; i++) {
      if (array[at + i] !== valueAt(kind, position + i)) {
        expect.fail(`step ${step}: sample at position ${position + i} is ${array[at + i]}, expected ${valueAt(kind, position + i)}`);
      }
    }
  };
  const afterRead = (): void => {
    if (!retain) setRelease(read);
  };

  for (step = 0; step < 1500; step++) {
    const op = random();
    if (op < 0.22) {
      const count = randomInt(random, 0, capacity + 3);
      const offset = randomInt(random, 0, 3);
      const src = makeArray(kind, offset + count + 2);
      for (let i = 0; i < count; i++) src[offset + i] = valueAt(kind, write + i);
      const expected = Math.min(count, free());
      const useDefaults = offset === 0 && random() < 0.3;
      const written = useDefaults ? producer.write(src.subarray(0, count)) : producer.write(src, offset, count);
      same(written, expected, 'write()');
      write += expected;
      overflow += count - expected;
    } else if (op < 0.4) {
      const max = randomInt(random, 0, capacity + 3);
      const n = producer.writeSegments(max, segments);
      same(n, Math.min(max, free()), 'writeSegments()');
      same(segments.position, write, 'segments.position');
      same(segments.firstStart, write % capacity, 'segments.firstStart');
      same(segments.firstLength, Math.min(n, capacity - (write % capacity)), 'segments.firstLength');
      same(segments.secondStart, 0, 'segments.secondStart');
      same(segments.firstLength + segments.secondLength, n, 'segments.firstLength + segments.secondLength');
      const filled = randomInt(random, 0, n);
      for (let i = 0; i < filled; i++) {
        const index = i < segments.firstLength ? segments.firstStart + i : i - segments.firstLength;
        segments.storage[index] = valueAt(kind, write + i);
      }
      const dropped = randomInt(random, 0, 2);
      producer.commitWrite(filled, dropped);
      write += filled;
      overflow += dropped;
    } else if (op < 0.6) {
      const count = randomInt(random, 0, capacity + 3);
      const offset = randomInt(random, 0, 3);
      const dst = makeArray(kind, offset + count + 2);
      const expected = Math.min(count, write - read);
      same(consumer.read(dst, offset, count), expected, 'read()');
      expectValues(dst, offset, expected, read);
      for (let i = 0; i < dst.length; i++) {
        if (i < offset || i >= offset + expected) same(dst[i], canary(kind), `dst[${i}] (canary)`);
      }
      read += expected;
      afterRead();
    } else if (op < 0.75) {
      const max = randomInt(random, 0, capacity + 3);
      const n = consumer.readSegments(max, segments);
      same(n, Math.min(max, write - read), 'readSegments()');
      same(segments.position, read, 'segments.position');
      same(segments.firstStart, read % capacity, 'segments.firstStart');
      expectValues(segments.storage, segments.firstStart, segments.firstLength, read);
      expectValues(segments.storage, segments.secondStart, segments.secondLength, read + segments.firstLength);
      const consumed = randomInt(random, 0, n);
      consumer.consume(consumed);
      read += consumed;
      afterRead();
    } else if (op < 0.8) {
      const views = consumer.readViews(randomInt(random, 0, capacity));
      same(views.position, read, 'views.position');
      expectValues(views.first, 0, views.first.length, read);
      expectValues(views.second, 0, views.second.length, read + views.first.length);
    } else if (op < 0.88) {
      const from = randomInt(random, release, Math.min(write + 2, MAX_POSITION));
      const count = randomInt(random, 0, capacity + 1);
      const dst = makeArray(kind, count + 1);
      const expected = Math.max(0, Math.min(count, write - from));
      same(consumer.peek(dst, from, count, 1), expected, 'peek()');
      expectValues(dst, 1, expected, from);
      same(dst[0], canary(kind), 'dst[0] (canary)');
    } else if (op < 0.94) {
      const position = Math.max(0, randomInt(random, release - 2, write));
      consumer.release(position);
      if (position > release) {
        if (position > read) read = position;
        setRelease(position);
      }
    } else if (op < 0.98) {
      if (retain) {
        const position = randomInt(random, release, write);
        consumer.rewind(position);
        read = position;
      } else {
        const position = randomInt(random, read, write);
        consumer.rewind(position);
        read = position;
        afterRead();
      }
    } else {
      // Misuse throws and changes nothing.
      if (release > 0) expectDspError(() => consumer.rewind(release - 1), 'DSP_INVALID_OPTION');
      if (write < MAX_POSITION) expectDspError(() => consumer.release(write + 1), 'DSP_INVALID_OPTION');
      expectDspError(() => consumer.consume(write - read + 1), 'DSP_INVALID_OPTION');
      expectDspError(() => producer.commitWrite(free() + 1), 'DSP_INVALID_OPTION');
    }

    for (const ring of [producer, consumer]) {
      same(ring.writeCursor, write, 'ring.writeCursor');
      same(ring.readCursor, read, 'ring.readCursor');
      same(ring.releaseCursor, release, 'ring.releaseCursor');
      same(ring.overflowSamples, overflow, 'ring.overflowSamples');
      same(ring.availableToRead(), write - read, 'ring.availableToRead()');
      same(ring.availableToWrite(), free(), 'ring.availableToWrite()');
    }
    // Index arithmetic, not positions: near 2^53, release + capacity is no longer exact.
    for (let i = 0, index = write % capacity; i < capacity - (write - release); i++, index = (index + 1) % capacity) {
      if (storage[index] !== canary(kind)) expect.fail(`free slot ${index} (position ${write + i}) was written`);
    }
  }
  const late = SampleRing.attach(producer.handle);
  expect([late.writeCursor, late.readCursor, late.releaseCursor, late.overflowSamples]).toEqual([write, read, release, overflow]);
}
