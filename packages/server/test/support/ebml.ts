/**
 * A small EBML writer for hand-built Matroska files: sizes of any length (so a test can declare what
 * the bytes do not hold), unknown sizes, and blocks with any lacing. Byte arrays throughout.
 */

/** A size as an EBML vint of `length` bytes (default: the shortest that holds it). */
export function vint(n: number, length = vintLength(n)): number[] {
  const out: number[] = [];
  let v = n;
  for (let i = length - 1; i >= 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  out[0] = (out[0] as number) | (0x80 >> (length - 1));
  return out;
}

function vintLength(n: number): number {
  let length = 1;
  while (n >= 2 ** (7 * length) - 1) length++;
  return length;
}

/** A signed lace size difference as an EBML vint of `length` bytes (value + 2^(7·length−1) − 1). */
export function signedVint(delta: number, length: number): number[] {
  return vint(delta + 2 ** (7 * length - 1) - 1, length);
}

/** The "unknown size" marker: every value bit set (1 byte). */
export const UNKNOWN_SIZE = [0xff];

export function el(id: readonly number[], body: readonly number[] | Uint8Array): number[] {
  return [...id, ...vint(body.length), ...body];
}

export const IDS = {
  ebml: [0x1a, 0x45, 0xdf, 0xa3],
  docType: [0x42, 0x82],
  segment: [0x18, 0x53, 0x80, 0x67],
  info: [0x15, 0x49, 0xa9, 0x66],
  duration: [0x44, 0x89],
  tracks: [0x16, 0x54, 0xae, 0x6b],
  trackEntry: [0xae],
  cluster: [0x1f, 0x43, 0xb6, 0x75],
  simpleBlock: [0xa3],
  void: [0xec],
} as const;

export const EBML_HEADER = el(IDS.ebml, el(IDS.docType, [...Buffer.from('matroska')]));

/** One audio TrackEntry (number 1 unless given): PCM little-endian at `rate` Hz. */
export function pcmTrack(rate: number, opts: { number?: number; channels?: number; bits?: number; codec?: string } = {}): number[] {
  const f64 = Buffer.alloc(8);
  f64.writeDoubleBE(rate);
  return el(IDS.trackEntry, [
    ...el([0xd7], [opts.number ?? 1]), ...el([0x83], [2]), ...el([0x86], [...Buffer.from(opts.codec ?? 'A_PCM/INT/LIT')]),
    ...el([0xe1], [...el([0xb5], [...f64]), ...el([0x9f], [opts.channels ?? 1]), ...el([0x62, 0x64], [opts.bits ?? 16])]),
  ]);
}

/** A SimpleBlock of track 1: `flags` carries the lacing bits, `lace` the lace header, then the payload. */
export function simpleBlock(payload: readonly number[] | Uint8Array, flags = 0x80, lace: readonly number[] = []): number[] {
  return el(IDS.simpleBlock, [0x81, 0, 0, flags, ...lace, ...payload]);
}

export function file(segmentBody: readonly number[]): Buffer {
  return Buffer.from([...EBML_HEADER, ...el(IDS.segment, segmentBody)]);
}
