/**
 * Tiny Matroska files built to make a server allocate far more than it was sent: each one declares
 * what its bytes do not hold. The reference server must refuse them from their bytes, before any
 * allocation sized by the declaration (docs/protocol.md "Uploads").
 */

/** An EBML variable-size integer of `length` bytes. */
function vint(n: number, length: number): number[] {
  const out: number[] = [];
  let v = n;
  for (let i = length - 1; i >= 0; i--) {
    out[i] = v % 256;
    v = Math.floor(v / 256);
  }
  out[0] = (out[0] as number) | (0x80 >> (length - 1));
  return out;
}

const sized = (id: readonly number[], body: readonly number[]): number[] => [...id, ...vint(body.length, 4), ...body];

const SEGMENT = [0x18, 0x53, 0x80, 0x67];
const TRACKS = [0x16, 0x54, 0xae, 0x6b];
const CLUSTER = [0x1f, 0x43, 0xb6, 0x75];
const HEADER = sized([0x1a, 0x45, 0xdf, 0xa3], sized([0x42, 0x82], [...Buffer.from('matroska')]));

/** One PCM track at `rate` Hz (a float, so 0.05 Hz can be declared). */
function track(rate: number): number[] {
  const f64 = Buffer.alloc(8);
  f64.writeDoubleBE(rate);
  const audio = sized([0xe1], [...sized([0xb5], [...f64]), ...sized([0x9f], [1]), ...sized([0x62, 0x64], [16])]);
  return sized(TRACKS, sized([0xae], [...sized([0xd7], [1]), ...sized([0x83], [2]), ...sized([0x86], [...Buffer.from('A_PCM/INT/LIT')]), ...audio]));
}

const block = (flags: number, lace: readonly number[], payload: number): number[] => sized([0xa3], [0x81, 0, 0, flags, ...lace, ...new Array<number>(payload).fill(0)]);

const file = (body: readonly number[]): Buffer => Buffer.from([...HEADER, ...sized(SEGMENT, body)]);

/** 1,600 samples at a declared 0.05 Hz: 32,000,000 ms of "audio" in about 3 kB. */
export const LOW_RATE = file([...track(0.05), ...sized(CLUSTER, block(0x80, [], 3200))]);

/** Eight EBML-laced blocks whose 255 lace sizes swing by ±1 MiB over 512 bytes of payload. */
export const SWINGING_LACES = ((): Buffer => {
  const MiB = 1024 * 1024;
  const lace = [255, ...vint(MiB, 4)];
  for (let i = 1; i < 255; i++) lace.push(...vint((i % 2 === 1 ? -MiB : MiB) + 2 ** 27 - 1, 4));
  const laced = block(0x86, lace, 512);
  return file([...track(16_000), ...sized(CLUSTER, Array.from({ length: 8 }, () => laced).flat())]);
})();

/** 20,000 sized elements nested inside each other (each a cluster holding the next, the innermost empty). */
export const DEEP_NESTING = ((): Buffer => {
  const levels = 20_000;
  const nested: number[] = [];
  // Level k (0 = outermost) holds the levels below it: 8 header bytes each.
  for (let k = 0; k < levels; k++) nested.push(...CLUSTER, ...vint((levels - 1 - k) * 8, 4));
  return file([...track(16_000), ...nested]);
})();

export const CRAFTED_MEDIA: readonly Buffer[] = [LOW_RATE, SWINGING_LACES, DEEP_NESTING];
