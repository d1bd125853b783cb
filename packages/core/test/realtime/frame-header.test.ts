import { describe, expect, it } from 'vitest';
import { FRAME, decodeFrameHeader, encodeFrameHeader } from '../../src/protocol.js';

/** The 16-byte audio frame header (docs/protocol.md), checked against bytes computed by hand. */
describe('frame header codec', () => {
  const encode = (epoch: number, start: number): number[] => {
    const bytes = new Uint8Array(16);
    encodeFrameHeader(new DataView(bytes.buffer), 0, epoch, start);
    return [...bytes];
  };

  it('writes magic, version, flags, epoch and the two little-endian halves of the start sample', () => {
    expect(encode(1, 0)).toEqual([0x53, 0x43, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // epoch 0x01020304, start 0x0000_0005_8000_0001 = 23622320129
    expect(encode(0x01020304, 23_622_320_129)).toEqual([0x53, 0x43, 1, 0, 0x04, 0x03, 0x02, 0x01, 0x01, 0x00, 0x00, 0x80, 0x05, 0x00, 0x00, 0x00]);
    // The largest start: 2^53 - 1 -> low 0xFFFFFFFF, high 0x001FFFFF.
    expect(encode(0xffffffff, Number.MAX_SAFE_INTEGER)).toEqual([0x53, 0x43, 1, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x1f, 0x00]);
  });

  it('writes at an offset inside a larger buffer and leaves the bytes around it alone', () => {
    const bytes = new Uint8Array(20).fill(0xaa);
    encodeFrameHeader(new DataView(bytes.buffer), 2, 7, 320);
    expect([...bytes.subarray(0, 2)]).toEqual([0xaa, 0xaa]);
    expect([...bytes.subarray(2, 18)]).toEqual([0x53, 0x43, 1, 0, 7, 0, 0, 0, 0x40, 0x01, 0, 0, 0, 0, 0, 0]);
    expect([...bytes.subarray(18)]).toEqual([0xaa, 0xaa]);
  });

  it('refuses values that would corrupt the stream', () => {
    const view = new DataView(new ArrayBuffer(16));
    expect(() => encodeFrameHeader(view, 0, -1, 0)).toThrow(RangeError);
    expect(() => encodeFrameHeader(view, 0, 2 ** 32, 0)).toThrow(RangeError);
    expect(() => encodeFrameHeader(view, 0, 1, 2 ** 53)).toThrow(RangeError);
    expect(() => encodeFrameHeader(view, 0, 1, 1.5)).toThrow(RangeError);
  });

  it('decodes hand-made frames, the sample count from the length', () => {
    const frame = new Uint8Array([0x53, 0x43, 1, 0, 2, 0, 0, 0, 0x80, 0x3e, 0, 0, 1, 0, 0, 0, 0x34, 0x12, 0xff, 0xff]);
    expect(decodeFrameHeader(new DataView(frame.buffer), 0, frame.length)).toEqual({ ok: true, epoch: 2, startSample: 2 ** 32 + 16_000, sampleCount: 2 });
  });

  it('names what is wrong with a malformed frame', () => {
    const good = (): Uint8Array => new Uint8Array([0x53, 0x43, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
    const reason = (bytes: Uint8Array, length = bytes.length): string | undefined => {
      const r = decodeFrameHeader(new DataView(bytes.buffer), 0, length);
      return r.ok ? undefined : r.reason;
    };
    expect(reason(good(), 15)).toBe('TOO_SHORT');
    expect(reason(Object.assign(good(), { 0: 0x54 }))).toBe('BAD_MAGIC');
    expect(reason(Object.assign(good(), { 2: 2 }))).toBe('BAD_VERSION');
    expect(reason(Object.assign(good(), { 3: 2 }))).toBe('BAD_FLAGS');
    expect(reason(Object.assign(good(), { 3: 1 }))).toBe('BAD_SKIP'); // the skip flag on an audio payload
    expect(reason(good(), 17)).toBe('ODD_LENGTH');
    expect(reason(good(), 16)).toBe('EMPTY');
    expect(reason(Object.assign(good(), { 14: 0x20 }))).toBe('START_TOO_LARGE');
    expect(FRAME.headerBytes).toBe(16);
  });
});
