import { createRequire } from 'node:module';
import { readFile } from 'node:fs/promises';
import { AudioSourceError } from '../errors.js';
import { checkFormat, type AudioBlock, type AudioFormat, type AudioSource } from './audio-source.js';
import { BlockSource, type BlockSourceOptions } from './block-source.js';

/** The part of wav-decoder (untyped CommonJS) we use. `symmetric` scales 16-bit by 1/32768 both ways. */
interface WavDecoder {
  decode: { sync(buffer: ArrayBuffer, options?: { symmetric?: boolean }): { sampleRate: number; channelData: Float32Array[] } };
}
const wavDecoder = createRequire(import.meta.url)('wav-decoder') as WavDecoder;

export interface DecodedWav {
  readonly format: AudioFormat;
  /**
   * Interleaved samples: Int16Array for 16-bit integer WAV (bit for bit; may be a view of the bytes
   * given), else Float32Array.
   */
  readonly samples: Int16Array | Float32Array;
  readonly frames: number;
}

/**
 * Decodes a whole WAV (8/16/24/32-bit integer or 32-bit float, any channel count, plain or
 * WAVE_FORMAT_EXTENSIBLE as sox writes 24-bit and multichannel files; A-law, µ-law, ADPCM are refused),
 * in the form the session takes with the fewest copies:
 *   - 16-bit integer: the data chunk itself, read as Int16 (a view of the bytes on a little-endian host
 *     when the chunk is 2-aligned, else one copy): the exact values, so a 16 kHz mono file reaches the
 *     server bit for bit and any other goes to write(), whose resampler reads value / 32768 directly;
 *   - anything else: wav-decoder's Float32 planes, the plane itself for a mono file, interleaved (one
 *     copy) otherwise, for the core encode path.
 */
export function decodeWav(bytes: Uint8Array, what = 'WAV'): DecodedWav {
  const fmt = readFmt(bytes, what);
  if (fmt.tag === WAVE_FORMAT_PCM && fmt.bits === 16) return readPcm16(bytes, fmt, what);
  let decoded: { sampleRate: number; channelData: Float32Array[] };
  try {
    // A copy with its own buffer (Buffer#slice would be a view): wav-decoder takes an ArrayBuffer, and the patch must not touch the caller's bytes.
    const copy = new Uint8Array(bytes);
    // wav-decoder knows only the plain tags; an extensible PCM or float file is the same samples.
    if (fmt.extensible) new DataView(copy.buffer).setUint16(fmt.at + 8, fmt.tag, true);
    decoded = wavDecoder.decode.sync(copy.buffer, { symmetric: true });
  } catch (caught) {
    throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
  const channels = decoded.channelData.length;
  const frames = decoded.channelData[0]?.length ?? 0;
  const format = checkFormat({ sampleRate: decoded.sampleRate, channels, encoding: 'float32' }, what);
  if (channels === 1) return { format, samples: decoded.channelData[0] as Float32Array, frames };
  const samples = new Float32Array(frames * channels);
  for (let c = 0; c < channels; c++) {
    const plane = decoded.channelData[c] as Float32Array;
    for (let i = 0; i < frames; i++) samples[i * channels + c] = plane[i] as number;
  }
  return { format, samples, frames };
}

/** A 16-bit integer file's samples straight from its data chunk (whole frames; a short chunk gives what it holds). */
function readPcm16(bytes: Uint8Array, fmt: FmtChunk, what: string): DecodedWav {
  const format = checkFormat({ sampleRate: fmt.sampleRate, channels: fmt.channels, encoding: 'pcm16' }, what);
  const data = findChunk(bytes, 'data');
  if (data === undefined) throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: no data chunk`);
  const start = data.at + 8;
  const frames = Math.floor(Math.min(data.size, bytes.length - start) / (2 * fmt.channels));
  const count = frames * fmt.channels;
  const offset = bytes.byteOffset + start;
  if (LITTLE_ENDIAN_HOST && offset % 2 === 0) return { format, samples: new Int16Array(bytes.buffer, offset, count), frames };
  const view = new DataView(bytes.buffer, offset, count * 2);
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
  return { format, samples, frames };
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;
/** Encodings people meet in WAVs that we do not decode, named in the error instead of a bare hex tag. */
const NAMED_TAGS: Readonly<Record<number, string>> = { 0x0002: 'MS ADPCM', 0x0006: 'A-law', 0x0007: 'µ-law', 0x0011: 'IMA ADPCM', 0x0031: 'GSM 6.10', 0x0055: 'MP3' };

interface FmtChunk {
  /** Offset of the chunk header ("fmt "). */
  readonly at: number;
  /** The encoding: for WAVE_FORMAT_EXTENSIBLE, the first two bytes of the sub-format GUID. */
  readonly tag: number;
  readonly extensible: boolean;
  readonly bits: number;
  readonly channels: number;
  readonly sampleRate: number;
}

/** The first chunk with this id after the RIFF header (chunks are padded to even sizes). */
function findChunk(bytes: Uint8Array, id: string): { readonly at: number; readonly size: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (String.fromCharCode(...bytes.subarray(at, at + 4)) === id) return { at, size };
    at += 8 + size + (size % 2);
  }
  return undefined;
}

/** The fmt chunk (read here: wav-decoder does not return it); only PCM and IEEE float pass. */
function readFmt(bytes: Uint8Array, what: string): FmtChunk {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: not a RIFF/WAVE file`);
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ' && at + 24 <= bytes.length) {
      const declared = view.getUint16(at + 8, true);
      const extensible = declared === WAVE_FORMAT_EXTENSIBLE;
      if (extensible && (size < 40 || at + 48 > bytes.length)) throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: WAVE_FORMAT_EXTENSIBLE fmt chunk too short (${String(size)} bytes)`);
      const real = extensible ? view.getUint16(at + 32, true) : declared;
      if (real !== WAVE_FORMAT_PCM && real !== WAVE_FORMAT_IEEE_FLOAT) {
        const name = NAMED_TAGS[real] ?? `format 0x${real.toString(16).padStart(4, '0')}`;
        throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: ${name} WAV${extensible ? ' (extensible)' : ''} is not supported; only integer PCM and IEEE float are (e.g. sox in.wav -e signed-integer out.wav)`);
      }
      return { at, tag: real, extensible, bits: view.getUint16(at + 22, true), channels: view.getUint16(at + 10, true), sampleRate: view.getUint32(at + 12, true) };
    }
    at += 8 + size + (size % 2);
  }
  throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: no fmt chunk`);
}

export interface FileSourceOptions extends BlockSourceOptions {}

/** A WAV file (path or bytes) as a source; blocks of blockMs (default 20 ms). */
export async function wavFileSource(input: string | Uint8Array, options: FileSourceOptions = {}): Promise<AudioSource> {
  const label = typeof input === 'string' ? input : 'WAV bytes';
  let bytes: Uint8Array;
  try {
    bytes = typeof input === 'string' ? await readFile(input) : input;
  } catch (caught) {
    throw new AudioSourceError('SOURCE_READ_FAILED', `${label}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
  const wav = decodeWav(bytes, label);
  return new BlockSource(label, wav.format, arrayBlocks(wav.samples, wav.format), options);
}

/** Whole-buffer audio cut into views (no copies) of whole frames. */
export function* arrayBlocks(samples: AudioBlock, format: AudioFormat, blockMs = 20): Generator<AudioBlock> {
  const step = Math.max(1, Math.round((format.sampleRate * blockMs) / 1000)) * format.channels;
  for (let at = 0; at < samples.length; at += step) yield samples.subarray(at, Math.min(samples.length, at + step));
}
