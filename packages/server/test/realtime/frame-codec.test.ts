import { describe, expect, it } from 'vitest';
import { decodeFrameHeader, encodeFrameHeader, encodeSkipFrame, FRAME, FRAME_FLAGS } from '@soundclone/core/internal';

/** The binary frame header (protocol.ts FRAME) that the client mirrors byte for byte. */
describe('audio frame header', () => {
  const frame = (samples: number): DataView => new DataView(new ArrayBuffer(FRAME.headerBytes + samples * 2));

  it('lays out magic, version, flags, epoch and the 64-bit start sample as two little-endian halves', () => {
    const view = frame(2);
    encodeFrameHeader(view, 0, 7, 2 ** 40 + 5);
    expect([...new Uint8Array(view.buffer, 0, 16)]).toEqual([0x53, 0x43, 1, 0, 7, 0, 0, 0, 5, 0, 0, 0, 0, 1, 0, 0]);
    expect(decodeFrameHeader(view, 0, view.byteLength)).toEqual({ ok: true, epoch: 7, startSample: 2 ** 40 + 5, sampleCount: 2 });
  });

  it('round-trips start samples across the 32-bit boundary and up to the safe-integer limit', () => {
    for (const start of [0, 1, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 1, 16_000 * 86_400 * 365, Number.MAX_SAFE_INTEGER]) {
      const view = frame(1);
      encodeFrameHeader(view, 0, 1, start);
      expect(decodeFrameHeader(view, 0, view.byteLength)).toMatchObject({ ok: true, startSample: start });
    }
  });

  it('names what is wrong with a malformed frame', () => {
    const good = (): DataView => {
      const view = frame(4);
      encodeFrameHeader(view, 0, 1, 0);
      return view;
    };
    expect(decodeFrameHeader(good(), 0, 15)).toEqual({ ok: false, reason: 'TOO_SHORT' });
    expect(decodeFrameHeader(good(), 0, 16)).toEqual({ ok: false, reason: 'EMPTY' });
    expect(decodeFrameHeader(good(), 0, 19)).toEqual({ ok: false, reason: 'ODD_LENGTH' });
    const cases: Array<[number, number, string]> = [[0, 0x00, 'BAD_MAGIC'], [1, 0x00, 'BAD_MAGIC'], [2, 2, 'BAD_VERSION'], [3, 2, 'BAD_FLAGS'], [3, 3, 'BAD_FLAGS']];
    for (const [offset, value, reason] of cases) {
      const view = good();
      view.setUint8(offset, value);
      expect(decodeFrameHeader(view, 0, view.byteLength)).toEqual({ ok: false, reason });
    }
    const far = good();
    far.setUint32(12, FRAME.maxHighWord, true);
    expect(decodeFrameHeader(far, 0, far.byteLength)).toEqual({ ok: false, reason: 'START_TOO_LARGE' });
  });

  it('a skip frame: flags bit 0, a 4-byte count, no audio; a wrong payload or a zero count is BAD_SKIP', () => {
    const view = new DataView(new ArrayBuffer(FRAME.headerBytes + FRAME.skipPayloadBytes));
    encodeSkipFrame(view, 0, 3, 2 ** 32 + 7, 48_000);
    expect([...new Uint8Array(view.buffer)]).toEqual([0x53, 0x43, 1, FRAME_FLAGS.skip, 3, 0, 0, 0, 7, 0, 0, 0, 1, 0, 0, 0, 0x80, 0xbb, 0, 0]);
    expect(decodeFrameHeader(view, 0, view.byteLength)).toEqual({ ok: true, epoch: 3, startSample: 2 ** 32 + 7, sampleCount: 48_000, skip: true });
    expect(decodeFrameHeader(view, 0, view.byteLength - 2)).toEqual({ ok: false, reason: 'BAD_SKIP' });
    const long = new DataView(new ArrayBuffer(FRAME.headerBytes + 8));
    encodeSkipFrame(long, 0, 1, 0, 5);
    expect(decodeFrameHeader(long, 0, long.byteLength)).toEqual({ ok: false, reason: 'BAD_SKIP' });
    view.setUint32(FRAME.headerBytes, 0, true);
    expect(decodeFrameHeader(view, 0, view.byteLength)).toEqual({ ok: false, reason: 'BAD_SKIP' });
    expect(() => encodeSkipFrame(view, 0, 1, 0, 0)).toThrow(RangeError);
    expect(() => encodeSkipFrame(view, 0, 1, 0, 2 ** 32)).toThrow(RangeError);
  });
});
