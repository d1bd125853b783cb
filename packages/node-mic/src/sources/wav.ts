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
  /** Interleaved samples: Int16Array for 16-bit integer WAV (bit for bit), else Float32Array. */
  readonly samples: Int16Array | Float32Array;
  readonly frames: number;
}

/**
 * Decodes a whole WAV (wav-decoder: 8/16/24/32-bit integer or 32-bit float, any channel count). 16-bit
 * integer files come back as the exact Int16 values, so a 16 kHz mono file reaches the server bit for
 * bit; everything else becomes Float32 for the core encode path.
 */
export function decodeWav(bytes: Uint8Array, what = 'WAV'): DecodedWav {
  const bitDepth = sixteenBitInteger(bytes, what);
  let decoded: { sampleRate: number; channelData: Float32Array[] };
  try {
    const copy = bytes.slice().buffer;
    decoded = wavDecoder.decode.sync(copy, { symmetric: true });
  } catch (caught) {
    throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: ${caught instanceof Error ? caught.message : String(caught)}`, { cause: caught });
  }
  const channels = decoded.channelData.length;
  const frames = decoded.channelData[0]?.length ?? 0;
  const format = checkFormat({ sampleRate: decoded.sampleRate, channels, encoding: bitDepth ? 'pcm16' : 'float32' }, what);
  const samples = bitDepth ? new Int16Array(frames * channels) : new Float32Array(frames * channels);
  for (let c = 0; c < channels; c++) {
    const plane = decoded.channelData[c] as Float32Array;
    // symmetric decoding gave v / 32768, exact in float32, so v * 32768 is the original integer.
    if (bitDepth) for (let i = 0; i < frames; i++) samples[i * channels + c] = Math.round(plane[i] as number * 32768);
    else for (let i = 0; i < frames; i++) samples[i * channels + c] = plane[i] as number;
  }
  return { format, samples, frames };
}

/** Whether the fmt chunk says 16-bit integer PCM (read here: wav-decoder does not return it). */
function sixteenBitInteger(bytes: Uint8Array, what: string): boolean {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const tag = (at: number): string => String.fromCharCode(...bytes.subarray(at, at + 4));
  if (bytes.length < 12 || tag(0) !== 'RIFF' || tag(8) !== 'WAVE') throw new AudioSourceError('SOURCE_UNSUPPORTED_FORMAT', `${what}: not a RIFF/WAVE file`);
  for (let at = 12; at + 8 <= bytes.length; ) {
    const size = view.getUint32(at + 4, true);
    if (tag(at) === 'fmt ' && at + 24 <= bytes.length) {
      let formatTag = view.getUint16(at + 8, true);
      // WAVE_FORMAT_EXTENSIBLE: the real tag is the first two bytes of the sub-format GUID.
      if (formatTag === 0xfffe && at + 34 <= bytes.length) formatTag = view.getUint16(at + 32, true);
      return formatTag === 1 && view.getUint16(at + 22, true) === 16;
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
