/**
 * A Matroska (.mka/.mkv) demuxer for PCM audio tracks: the one multi-track container the reference
 * service reads, so that `audioTrackIndex` ("required when the source has more than one audio
 * track", spec POST /stt/transcriptions) means something locally. `mkvmerge a.wav b.wav` makes such
 * files. Only what PCM needs is read: the track list and the Block/SimpleBlock payloads in file
 * order; timecodes are ignored, since PCM blocks follow each other without gaps.
 */

export interface MatroskaAudioTrack {
  /** Position among the audio tracks, what audioTrackIndex selects. */
  readonly index: number;
  readonly codecId: string;
  readonly sampleRate: number;
  readonly channels: readonly Float32Array[];
}

export class MatroskaError extends Error {
  override readonly name = 'MatroskaError';
}

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

interface TrackInfo {
  number: number;
  type: number;
  codecId: string;
  sampleRate: number;
  channels: number;
  bitDepth: number;
  payloads: Uint8Array[];
}

export function isMatroska(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3;
}

export function demuxMatroskaAudio(bytes: Uint8Array): MatroskaAudioTrack[] {
  if (!isMatroska(bytes)) throw new MatroskaError('not a Matroska file (no EBML header)');
  const tracks = new Map<number, TrackInfo>();
  let current: TrackInfo | undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);

  const walk = (start: number, end: number): void => {
    let at = start;
    while (at < end) {
      const id = readId(bytes, at);
      const size = readSize(bytes, at + id.length);
      const body = at + id.length + size.length;
      // Unknown sizes (live streams) run to the end of the parent.
      const bodyEnd = size.value === undefined ? end : body + size.value;
      if (bodyEnd > bytes.length) throw new MatroskaError(`element 0x${id.value.toString(16)} runs past the end of the file`);
      if (id.value === ID.trackEntry) {
        current = { number: 0, type: 0, codecId: '', sampleRate: 8000, channels: 1, bitDepth: 0, payloads: [] };
        walk(body, bodyEnd);
        if (current.number > 0) tracks.set(current.number, current);
        current = undefined;
      } else if (MASTERS.has(id.value)) {
        walk(body, bodyEnd);
      } else if (current !== undefined) {
        readTrackField(current, id.value, bytes, view, body, bodyEnd);
      } else if (id.value === ID.simpleBlock || id.value === ID.block) {
        addBlock(tracks, bytes, body, bodyEnd);
      }
      at = bodyEnd;
    }
  };
  walk(0, bytes.length);

  const audio = [...tracks.values()].filter((t) => t.type === AUDIO_TRACK_TYPE).sort((a, b) => a.number - b.number);
  if (audio.length === 0) throw new MatroskaError('the file has no audio track');
  for (const track of audio) checkSampleRate(track);
  return audio.map((track, index) => ({ index, codecId: track.codecId, sampleRate: track.sampleRate, channels: decodePcm(track) }));
}

/** Ours: the declared rates accepted, the same range as WAV (the recogniser path resamples any of them). */
export const MATROSKA_RATE_MIN_HZ = 1000;
export const MATROSKA_RATE_MAX_HZ = 384_000;

/**
 * A declared SamplingFrequency is a float: 0, NaN, negative, infinite or tiny rates would turn a
 * duration or a resampled length into NaN, Infinity or a huge allocation. Refused before decoding.
 * (Sample counts themselves come from the payload bytes, so they never exceed what the file holds.)
 */
function checkSampleRate(track: TrackInfo): void {
  const rate = track.sampleRate;
  if (!Number.isFinite(rate) || rate < MATROSKA_RATE_MIN_HZ || rate > MATROSKA_RATE_MAX_HZ) {
    throw new MatroskaError(`audio track ${track.number} declares a sampling frequency of ${rate} Hz; the reference service reads ${MATROSKA_RATE_MIN_HZ} to ${MATROSKA_RATE_MAX_HZ} Hz`);
  }
}

function readTrackField(track: TrackInfo, id: number, bytes: Uint8Array, view: DataView, body: number, end: number): void {
  switch (id) {
    case ID.trackNumber: track.number = readUint(bytes, body, end); break;
    case ID.trackType: track.type = readUint(bytes, body, end); break;
    case ID.codecId: track.codecId = String.fromCharCode(...bytes.subarray(body, end)).replace(/\0+$/, ''); break;
    case ID.channels: track.channels = readUint(bytes, body, end); break;
    case ID.bitDepth: track.bitDepth = readUint(bytes, body, end); break;
    case ID.samplingFrequency:
      track.sampleRate = end - body === 4 ? view.getFloat32(body) : end - body === 8 ? view.getFloat64(body) : track.sampleRate;
      break;
    default: break;
  }
}

/** Block layout: track number (vint), 16-bit timecode, flags, then one frame or a lace of frames. */
function addBlock(tracks: Map<number, TrackInfo>, bytes: Uint8Array, body: number, end: number): void {
  const track = readSize(bytes, body);
  const info = track.value === undefined ? undefined : tracks.get(track.value);
  if (info === undefined) return; // a block of a track we do not read
  const flags = bytes[body + track.length + 2] ?? 0;
  const data = body + track.length + 3;
  const lacing = (flags >> 1) & 0x03;
  if (lacing === 0) {
    info.payloads.push(bytes.subarray(data, end));
    return;
  }
  const frames = (bytes[data] ?? 0) + 1;
  let at = data + 1;
  const sizes: number[] = [];
  if (lacing === 1) {
    // Xiph lacing: each size but the last as a run of 255s plus a final byte.
    for (let i = 0; i < frames - 1; i++) {
      let size = 0;
      let b: number;
      do { b = bytes[at++] ?? 0; size += b; } while (b === 255);
      sizes.push(size);
    }
  } else if (lacing === 3) {
    // EBML lacing: the first size as a vint, then signed differences.
    const first = readSize(bytes, at);
    at += first.length;
    let size = first.value ?? 0;
    sizes.push(size);
    for (let i = 1; i < frames - 1; i++) {
      const delta = readSize(bytes, at);
      const bias = 2 ** (7 * delta.length - 1) - 1;
      size += (delta.value ?? 0) - bias;
      at += delta.length;
      sizes.push(size);
    }
  } else {
    const each = (end - at) / frames;
    if (!Number.isInteger(each)) throw new MatroskaError('fixed-size lace does not divide evenly');
    for (let i = 0; i < frames - 1; i++) sizes.push(each);
  }
  for (const size of sizes) {
    info.payloads.push(bytes.subarray(at, at + size));
    at += size;
  }
  info.payloads.push(bytes.subarray(at, end));
}

function decodePcm(track: TrackInfo): Float32Array[] {
  const { codecId, channels } = track;
  const bits = track.bitDepth || (codecId === 'A_PCM/FLOAT/IEEE' ? 32 : 16);
  const bytesPerSample = bits / 8;
  const reader = sampleReader(codecId, bits);
  if (reader === undefined || !Number.isInteger(bytesPerSample)) {
    throw new MatroskaError(`audio track ${track.number} is ${codecId || 'of unknown codec'} with ${bits} bits; the reference service reads PCM tracks only`);
  }
  if (channels < 1 || channels > 32) throw new MatroskaError(`audio track ${track.number} has ${channels} channels`);
  const total = track.payloads.reduce((n, p) => n + p.length, 0);
  const frameBytes = bytesPerSample * channels;
  const frames = Math.floor(total / frameBytes);
  const out = Array.from({ length: channels }, () => new Float32Array(frames));
  const joined = new Uint8Array(total);
  let offset = 0;
  for (const p of track.payloads) { joined.set(p, offset); offset += p.length; }
  const view = new DataView(joined.buffer);
  for (let f = 0; f < frames; f++) {
    for (let c = 0; c < channels; c++) out[c]![f] = reader(view, f * frameBytes + c * bytesPerSample);
  }
  return out;
}

type SampleReader = (view: DataView, at: number) => number;

function sampleReader(codecId: string, bits: number): SampleReader | undefined {
  const little = codecId === 'A_PCM/INT/LIT' || codecId === 'A_PCM/FLOAT/IEEE';
  if (codecId === 'A_PCM/FLOAT/IEEE') {
    if (bits === 32) return (v, at) => v.getFloat32(at, true);
    if (bits === 64) return (v, at) => v.getFloat64(at, true);
    return undefined;
  }
  if (codecId !== 'A_PCM/INT/LIT' && codecId !== 'A_PCM/INT/BIG') return undefined;
  switch (bits) {
    case 8: return (v, at) => (v.getUint8(at) - 128) / 128; // 8-bit PCM is unsigned, as in WAV
    case 16: return (v, at) => v.getInt16(at, little) / 32768;
    case 24: return (v, at) => {
      const [b0, b1, b2] = little ? [v.getUint8(at), v.getUint8(at + 1), v.getInt8(at + 2)] : [v.getUint8(at + 2), v.getUint8(at + 1), v.getInt8(at)];
      return (b2 * 65536 + b1 * 256 + b0) / 8388608;
    };
    case 32: return (v, at) => v.getInt32(at, little) / 2147483648;
    default: return undefined;
  }
}

/** An element id keeps its length marker: 1 to 4 bytes. */
function readId(bytes: Uint8Array, at: number): { value: number; length: number } {
  const first = bytes[at];
  if (first === undefined) throw new MatroskaError('truncated element id');
  const length = first >= 0x80 ? 1 : first >= 0x40 ? 2 : first >= 0x20 ? 3 : first >= 0x10 ? 4 : 0;
  if (length === 0 || at + length > bytes.length) throw new MatroskaError(`bad element id at byte ${at}`);
  let value = 0;
  for (let i = 0; i < length; i++) value = value * 256 + (bytes[at + i] as number);
  return { value, length };
}

/** A size (or track number) drops its length marker; all value bits set means "unknown". */
function readSize(bytes: Uint8Array, at: number): { value: number | undefined; length: number } {
  const first = bytes[at];
  if (first === undefined || first === 0) throw new MatroskaError(`bad size at byte ${at}`);
  let length = 1;
  while (!(first & (0x80 >> (length - 1)))) length++;
  if (at + length > bytes.length) throw new MatroskaError('truncated size');
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
  for (let i = start; i < end; i++) value = value * 256 + (bytes[i] as number);
  return value;
}
