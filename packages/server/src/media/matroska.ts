import { UndecodableMediaError } from './media-error.js';
import { PcmSource, type PcmEncoding } from './pcm-source.js';
import { CHANNELS_MAX, checkRate } from './wav.js';

/**
 * A Matroska (.mka/.mkv) demuxer for PCM audio tracks: the one multi-track container the reference
 * service reads, so that `audioTrackIndex` ("required when the source has more than one audio
 * track", spec POST /stt/transcriptions) means something locally. `mkvmerge a.wav b.wav` makes such
 * files. Only what PCM needs is read: the track list and the Block/SimpleBlock payloads in file
 * order; timecodes and declared durations are ignored, since PCM blocks follow each other without gaps
 * and the number of samples is what the payload bytes hold.
 *
 * Nothing a file declares is trusted before it is checked against the bytes (docs/protocol.md
 * "Uploads"): every element must fit inside its parent, lace sizes must add up to their block, master
 * elements nest at most MATROSKA_MAX_DEPTH deep, and a file holds at most MATROSKA_MAX_ELEMENTS
 * elements (laced frames included) and MATROSKA_MAX_TRACKS track entries. The file is walked twice: the
 * first walk checks it and counts each track's payload bytes, the second copies the payloads into one
 * exact-size buffer per audio track. Memory is therefore at most the file again, whatever it declares.
 */

export interface MatroskaAudioTrack {
  /** Position among the audio tracks, what audioTrackIndex selects. */
  readonly index: number;
  readonly codecId: string;
  readonly source: PcmSource;
}

/** Ours: deeper than any real file (Segment > Cluster > BlockGroup > Block is 4). */
export const MATROSKA_MAX_DEPTH = 8;
/** Ours: a 100 MiB file of real 20 ms PCM blocks has about 60,000 elements. */
export const MATROSKA_MAX_ELEMENTS = 1_000_000;
export const MATROSKA_MAX_TRACKS = 64;

const ID = {
  ebml: 0x1a45dfa3,
  segment: 0x18538067,
  tracks: 0x1654ae6b,
  trackEntry: 0xae,
  trackNumber: 0xd7,
  trackType: 0x83,
  codecId: 0x86,
  audio: 0xe1,
  samplingFrequency: 0xb5,
  channels: 0x9f,
  bitDepth: 0x6264,
  cluster: 0x1f43b675,
  simpleBlock: 0xa3,
  blockGroup: 0xa0,
  block: 0xa1,
} as const;

/** Elements whose children we walk; everything else is skipped by its size. */
const MASTERS = new Set<number>([ID.segment, ID.tracks, ID.trackEntry, ID.audio, ID.cluster, ID.blockGroup]);
const AUDIO_TRACK_TYPE = 2;

/**
 * Where an element sits: 0 top level, 1 a child of Segment. An element of unknown size (live streams)
 * ends at its parent's end or at the first element of its own level or above, the Matroska rule; so
 * unknown-size Clusters follow each other instead of nesting.
 */
const LEVEL = new Map<number, number>([
  [ID.ebml, 0], [ID.segment, 0],
  [0x114d9b74, 1], [0x1549a966, 1], [ID.tracks, 1], [0x1c53bb6b, 1], [0x1043a770, 1], [0x1254c367, 1], [0x1941a469, 1], [ID.cluster, 1],
]);

interface TrackInfo {
  /** The n-th TrackEntry of the file: the same in both walks. */
  readonly ordinal: number;
  number: number;
  type: number;
  codecId: string;
  sampleRate: number;
  channels: number;
  bitDepth: number;
}

export function isMatroska(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3;
}

/** Receives each block's payload range [start, end) for a track. */
type PayloadSink = (track: TrackInfo, start: number, end: number) => void;

export function demuxMatroskaAudio(bytes: Uint8Array): MatroskaAudioTrack[] {
  if (!isMatroska(bytes)) throw malformed('not a Matroska file (no EBML header)');
  const totals = new Map<number, number>();
  const tracks = walkFile(bytes, (track, start, end) => totals.set(track.ordinal, (totals.get(track.ordinal) ?? 0) + end - start));

  const audio = tracks.filter((t) => t.type === AUDIO_TRACK_TYPE).sort((a, b) => a.number - b.number);
  if (audio.length === 0) throw new UndecodableMediaError('NO_AUDIO', 'Matroska cannot be read: the file has no audio track');
  // Every declaration is checked before a byte is allocated for payloads.
  const encodings = new Map(audio.map((t) => [t.ordinal, checkTrack(t)]));

  const buffers = new Map(audio.map((t) => [t.ordinal, { bytes: new Uint8Array(totals.get(t.ordinal) ?? 0), filled: 0 }]));
  walkFile(bytes, (track, start, end) => {
    const target = buffers.get(track.ordinal);
    if (target === undefined) return;
    target.bytes.set(bytes.subarray(start, end), target.filled);
    target.filled += end - start;
  });
  return audio.map((t, index) => {
    const scale = 'symmetric';
    const source = new PcmSource((buffers.get(t.ordinal) as { bytes: Uint8Array }).bytes, encodings.get(t.ordinal) as PcmEncoding, t.channels, t.sampleRate, scale);
    return { index, codecId: t.codecId, source };
  });
}

/** Walks the whole file once, checking structure and limits; returns the track entries in file order. */
function walkFile(bytes: Uint8Array, sink: PayloadSink): TrackInfo[] {
  const tracks = new Map<number, TrackInfo>();
  const entries: TrackInfo[] = [];
  let current: TrackInfo | undefined;
  let elements = 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

  const count = (n: number): void => {
    elements += n;
    if (elements > MATROSKA_MAX_ELEMENTS) {
      throw new UndecodableMediaError('TOO_MANY_ELEMENTS', `Matroska cannot be read: more than ${MATROSKA_MAX_ELEMENTS} elements (laced frames included)`, { maxElements: MATROSKA_MAX_ELEMENTS });
    }
  };

  /** Walks children from `start`; returns where the parent ends (its size, or the first element that closes it). */
  const walk = (start: number, end: number, depth: number, closesAt: number | undefined): number => {
    if (depth > MATROSKA_MAX_DEPTH) {
      throw new UndecodableMediaError('NESTING_TOO_DEEP', `Matroska cannot be read: elements nest more than ${MATROSKA_MAX_DEPTH} levels deep`, { maxDepth: MATROSKA_MAX_DEPTH });
    }
    let at = start;
    while (at < end) {
      const id = readId(bytes, at, end);
      const level = LEVEL.get(id.value);
      if (closesAt !== undefined && level !== undefined && level <= closesAt) return at;
      count(1);
      const size = readSize(bytes, at + id.length, end);
      const body = at + id.length + size.length;
      if (size.value !== undefined && body + size.value > end) {
        throw malformed(`element 0x${id.value.toString(16)} at byte ${at} runs past the end of its parent`);
      }
      const known = size.value === undefined ? undefined : body + size.value;
      // An unknown size closes at an element of its own level or above (a nested one: of Segment's children).
      const closes = known === undefined ? (level ?? 1) : undefined;
      if (id.value === ID.trackEntry) {
        if (entries.length >= MATROSKA_MAX_TRACKS) {
          throw new UndecodableMediaError('TOO_MANY_ELEMENTS', `Matroska cannot be read: more than ${MATROSKA_MAX_TRACKS} track entries`, { maxTracks: MATROSKA_MAX_TRACKS });
        }
        const entry: TrackInfo = { ordinal: entries.length, number: 0, type: 0, codecId: '', sampleRate: 8000, channels: 1, bitDepth: 0 };
        entries.push(entry);
        const outer = current;
        current = entry;
        at = walk(body, known ?? end, depth + 1, closes);
        current = outer;
        if (entry.number > 0) tracks.set(entry.number, entry);
        continue;
      }
      if (MASTERS.has(id.value)) {
        at = walk(body, known ?? end, depth + 1, closes);
        continue;
      }
      const bodyEnd = known ?? end;
      if (current !== undefined) readTrackField(current, id.value, bytes, view, body, bodyEnd);
      else if (id.value === ID.simpleBlock || id.value === ID.block) readBlock(tracks, bytes, body, bodyEnd, count, sink);
      at = bodyEnd;
    }
    return end;
  };
  walk(0, bytes.length, 0, undefined);
  return entries;
}

function checkTrack(track: TrackInfo): PcmEncoding {
  checkRate(track.sampleRate, `Matroska audio track ${track.number}`);
  const bits = track.bitDepth || (track.codecId === 'A_PCM/FLOAT/IEEE' ? 32 : 16);
  const encoding = encodingOf(track.codecId, bits);
  if (encoding === undefined) {
    throw new UndecodableMediaError('UNSUPPORTED_FORMAT', `Matroska audio track ${track.number} is ${track.codecId || 'of unknown codec'} with ${bits} bits; the reference service reads PCM tracks only`, {
      codecId: track.codecId, bitDepth: bits,
    });
  }
  if (track.channels < 1 || track.channels > CHANNELS_MAX) {
    throw new UndecodableMediaError('UNSUPPORTED_FORMAT', `Matroska audio track ${track.number} has ${track.channels} channels; the reference service reads 1 to ${CHANNELS_MAX}`, { channels: track.channels });
  }
  return encoding;
}

function encodingOf(codecId: string, bits: number): PcmEncoding | undefined {
  if (codecId === 'A_PCM/FLOAT/IEEE') return bits === 32 ? 'f32le' : bits === 64 ? 'f64le' : undefined;
  const little = codecId === 'A_PCM/INT/LIT';
  if (!little && codecId !== 'A_PCM/INT/BIG') return undefined;
  // 8-bit PCM is unsigned, as in WAV.
  const table: Partial<Record<number, PcmEncoding>> = little ? { 8: 'u8', 16: 's16le', 24: 's24le', 32: 's32le' } : { 8: 'u8', 16: 's16be', 24: 's24be', 32: 's32be' };
  return table[bits];
}

function readTrackField(track: TrackInfo, id: number, bytes: Uint8Array, view: DataView, body: number, end: number): void {
  switch (id) {
    case ID.trackNumber: track.number = readUint(bytes, body, end); break;
    case ID.trackType: track.type = readUint(bytes, body, end); break;
    case ID.codecId: track.codecId = String.fromCharCode(...bytes.subarray(body, Math.min(end, body + 64))).replace(/\0+$/, ''); break;
    case ID.channels: track.channels = readUint(bytes, body, end); break;
    case ID.bitDepth: track.bitDepth = readUint(bytes, body, end); break;
    case ID.samplingFrequency:
      track.sampleRate = end - body === 4 ? view.getFloat32(body) : end - body === 8 ? view.getFloat64(body) : track.sampleRate;
      break;
    default: break;
  }
}

/**
 * Block layout: track number (vint), 16-bit timecode, flags, then one frame or a lace of frames. PCM
 * frames of a lace are contiguous, so once the lace sizes are checked to add up to the block, the
 * payload is the one range after the lace header.
 */
function readBlock(tracks: Map<number, TrackInfo>, bytes: Uint8Array, body: number, end: number, count: (n: number) => void, sink: PayloadSink): void {
  const track = readSize(bytes, body, end);
  const info = track.value === undefined ? undefined : tracks.get(track.value);
  if (info === undefined || info.type !== AUDIO_TRACK_TYPE) return; // a block of a track we do not read
  const flagsAt = body + track.length + 2;
  if (flagsAt >= end) throw malformed(`block at byte ${body} is shorter than its header`);
  const lacing = ((bytes[flagsAt] as number) >> 1) & 0x03;
  let at = flagsAt + 1;
  if (lacing !== 0) {
    if (at >= end) throw lace(body, 'has no frame count');
    const frames = (bytes[at++] as number) + 1;
    count(frames);
    let declared = 0;
    if (lacing === 1) {
      // Xiph lacing: each size but the last as a run of 255s plus a final byte.
      for (let i = 0; i < frames - 1; i++) {
        let b: number;
        do {
          if (at >= end) throw lace(body, 'sizes run past the block');
          b = bytes[at++] as number;
          declared += b;
        } while (b === 255);
      }
    } else if (lacing === 3) {
      // EBML lacing: the first size as a vint, then signed differences; every size must be >= 0.
      const first = readSize(bytes, at, end);
      if (first.value === undefined) throw lace(body, 'has an unknown first size');
      at += first.length;
      let size = first.value;
      declared = size;
      for (let i = 1; i < frames - 1; i++) {
        const delta = readSize(bytes, at, end);
        if (delta.value === undefined) throw lace(body, 'has an unknown size difference');
        size += delta.value - (2 ** (7 * delta.length - 1) - 1);
        at += delta.length;
        if (size < 0) throw lace(body, `declares a frame of ${size} bytes`);
        declared += size;
      }
    } else if ((end - at) % frames !== 0) {
      throw lace(body, 'is fixed-size but does not divide evenly');
    }
    // The sizes of all frames but the last must leave the last one 0 bytes or more.
    if (declared > end - at) throw lace(body, `declares ${declared} bytes of frames in ${end - at} bytes`, { declaredBytes: declared, blockBytes: end - at });
  }
  sink(info, at, end);
}

function malformed(message: string): UndecodableMediaError {
  return new UndecodableMediaError('MALFORMED', `Matroska cannot be read: ${message}`);
}

function lace(blockAt: number, what: string, extra: Record<string, unknown> = {}): UndecodableMediaError {
  return new UndecodableMediaError('LACE_OVERRUN', `Matroska cannot be read: the lace of the block at byte ${blockAt} ${what}`, { blockOffset: blockAt, ...extra });
}

/** An element id keeps its length marker: 1 to 4 bytes. */
function readId(bytes: Uint8Array, at: number, end: number): { value: number; length: number } {
  const first = bytes[at] as number;
  const length = first >= 0x80 ? 1 : first >= 0x40 ? 2 : first >= 0x20 ? 3 : first >= 0x10 ? 4 : 0;
  if (length === 0 || at + length > end) throw malformed(`bad element id at byte ${at}`);
  let value = 0;
  for (let i = 0; i < length; i++) value = value * 256 + (bytes[at + i] as number);
  return { value, length };
}

/** A size (or track number) drops its length marker; all value bits set means "unknown". */
function readSize(bytes: Uint8Array, at: number, end: number): { value: number | undefined; length: number } {
  const first = bytes[at];
  if (first === undefined || first === 0 || at >= end) throw malformed(`bad size at byte ${at}`);
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length++;
  if (at + length > end) throw malformed(`truncated size at byte ${at}`);
  let value = first & (0xff >> length);
  let allOnes = value === (0xff >> length);
  for (let i = 1; i < length; i++) {
    const b = bytes[at + i] as number;
    value = value * 256 + b;
    allOnes &&= b === 0xff;
  }
  return { value: allOnes ? undefined : value, length };
}

function readUint(bytes: Uint8Array, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < Math.min(end, start + 8); i++) value = value * 256 + (bytes[i] as number);
  return value;
}
