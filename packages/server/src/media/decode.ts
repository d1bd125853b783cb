import { createRequire } from 'node:module';
import { sniffAudio } from './sniff.js';

/** The part of wav-decoder (untyped CommonJS) that we use. */
interface WavDecoder {
  decode: { sync(buffer: ArrayBuffer): { sampleRate: number; channelData: Float32Array[] } };
}
const wavDecoder = createRequire(import.meta.url)('wav-decoder') as WavDecoder;

/**
 * Decoded media, kept at its native rate. The reference service reads two containers: WAV (any rate,
 * 8/16/24/32-bit integer or 32-bit float, 1..32 channels, via wav-decoder) and headerless PCM16LE 16 kHz
 * mono (Content-Type audio/L16 or audio/pcm), which is what options.inputEncoding pcm_s16le_16 means.
 * A WAV file always has exactly one audio track.
 */
export type Container = 'wav' | 'pcm_s16le_16';

export interface DecodedMedia {
  readonly container: Container;
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: readonly Float32Array[];
  readonly durationMs: number;
}

export class UndecodableMediaError extends Error {
  override readonly name = 'UndecodableMediaError';
  readonly code = 'UNSUPPORTED_TYPE';
}

const RAW_PCM_TYPES = ['audio/l16', 'audio/pcm', 'audio/x-pcm'];

export function isRawPcmType(contentType: string | undefined): boolean {
  const base = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return RAW_PCM_TYPES.includes(base);
}

export function decodeMedia(bytes: Buffer, contentType: string | undefined): DecodedMedia {
  const kind = sniffAudio(bytes);
  if (kind === 'wav') return decodeWav(bytes);
  if (kind === undefined && isRawPcmType(contentType)) return decodeRawPcm(bytes);
  throw new UndecodableMediaError(
    kind === undefined ? 'content is neither WAV nor raw PCM16 (audio/L16)' : `${kind} cannot be decoded by the reference service`,
  );
}

function decodeWav(bytes: Buffer): DecodedMedia {
  let audio;
  try {
    audio = wavDecoder.decode.sync(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length) as ArrayBuffer);
  } catch (error) {
    throw new UndecodableMediaError(`WAV cannot be decoded: ${(error as Error).message}`, { cause: error });
  }
  const { sampleRate, channelData } = audio;
  if (!(sampleRate >= 1000 && sampleRate <= 384_000) || channelData.length < 1 || channelData.length > 32) {
    throw new UndecodableMediaError('WAV format is out of range (rate 1000..384000 Hz, 1..32 channels)');
  }
  const length = channelData[0]?.length ?? 0;
  return { container: 'wav', codec: 'pcm', sampleRate, channels: channelData, durationMs: Math.round((length * 1000) / sampleRate) };
}

function decodeRawPcm(bytes: Buffer): DecodedMedia {
  if (bytes.length % 2 !== 0) throw new UndecodableMediaError('raw PCM16 must have an even number of bytes');
  const samples = new Float32Array(bytes.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2) / 32768;
  return { container: 'pcm_s16le_16', codec: 'pcm_s16le', sampleRate: 16_000, channels: [samples], durationMs: Math.round(samples.length / 16) };
}

/**
 * Converts one channel to 16 kHz for recognition. PLAIN LINEAR INTERPOLATION, marked as such: good enough
 * for the energy recogniser (which only needs levels and zero crossings). A later issue may route this
 * through @soundclone/core's Resampler for a real engine.
 */
export function toRecognizerRate(samples: Float32Array, sampleRate: number): Float32Array {
  if (sampleRate === 16_000) return samples;
  const outLength = Math.floor((samples.length * 16_000) / sampleRate);
  const out = new Float32Array(outLength);
  const step = sampleRate / 16_000;
  for (let i = 0; i < outLength; i++) {
    const pos = i * step;
    const i0 = Math.floor(pos);
    const frac = pos - i0;
    const a = samples[i0] ?? 0;
    const b = samples[i0 + 1] ?? a;
    out[i] = a + (b - a) * frac;
  }
  return out;
}

/** Averages channels into one (single-channel processing). */
export function mixdown(channels: readonly Float32Array[]): Float32Array {
  if (channels.length === 1) return channels[0] as Float32Array;
  const length = channels[0]?.length ?? 0;
  const out = new Float32Array(length);
  for (const channel of channels) for (let i = 0; i < length; i++) out[i] = (out[i] as number) + (channel[i] as number) / channels.length;
  return out;
}
