import { createRequire } from 'node:module';
import { Resampler, isSupportedRate } from '@soundclone/core';
import { MatroskaError, demuxMatroskaAudio, isMatroska } from './matroska.js';
import { sniffAudio } from './sniff.js';

/** The part of wav-decoder (untyped CommonJS) that we use. */
interface WavDecoder {
  decode: { sync(buffer: ArrayBuffer): { sampleRate: number; channelData: Float32Array[] } };
}
const wavDecoder = createRequire(import.meta.url)('wav-decoder') as WavDecoder;

/**
 * Decoded media, kept at its native rates. The reference service reads three containers: WAV (any rate,
 * 8/16/24/32-bit integer or 32-bit float, 1..32 channels, via wav-decoder), headerless PCM16LE 16 kHz
 * mono (Content-Type audio/L16 or audio/pcm), which is what options.inputEncoding pcm_s16le_16 means,
 * and Matroska with PCM audio tracks, the one with several audio tracks (what audioTrackIndex selects).
 */
export type Container = 'wav' | 'pcm_s16le_16' | 'matroska';

export interface DecodedTrack {
  /** Position among the audio tracks: media.audioTracks[].index, what audioTrackIndex names. */
  readonly index: number;
  readonly codec: string;
  readonly sampleRate: number;
  readonly channels: readonly Float32Array[];
  readonly durationMs: number;
}

export interface DecodedMedia {
  readonly container: Container;
  readonly tracks: readonly DecodedTrack[];
  /** The longest track's duration. */
  readonly durationMs: number;
}

function track(index: number, codec: string, sampleRate: number, channels: readonly Float32Array[]): DecodedTrack {
  const length = channels[0]?.length ?? 0;
  return { index, codec, sampleRate, channels, durationMs: Math.round((length * 1000) / sampleRate) };
}

function media(container: Container, tracks: readonly DecodedTrack[]): DecodedMedia {
  return { container, tracks, durationMs: Math.max(0, ...tracks.map((t) => t.durationMs)) };
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
  if (isMatroska(bytes)) return decodeMatroska(bytes);
  if (kind === undefined && isRawPcmType(contentType)) return decodeRawPcm(bytes);
  throw new UndecodableMediaError(
    kind === undefined ? 'content is neither WAV, Matroska with PCM tracks, nor raw PCM16 (audio/L16)' : `${kind} cannot be decoded by the reference service`,
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
  return media('wav', [track(0, 'pcm', sampleRate, channelData)]);
}

function decodeMatroska(bytes: Buffer): DecodedMedia {
  try {
    return media('matroska', demuxMatroskaAudio(bytes).map((t) => track(t.index, t.codecId, t.sampleRate, t.channels)));
  } catch (error) {
    if (error instanceof MatroskaError) throw new UndecodableMediaError(`Matroska cannot be read: ${error.message}`, { cause: error });
    throw error;
  }
}

function decodeRawPcm(bytes: Buffer): DecodedMedia {
  if (bytes.length % 2 !== 0) throw new UndecodableMediaError('raw PCM16 must have an even number of bytes');
  const samples = new Float32Array(bytes.length / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = bytes.readInt16LE(i * 2) / 32768;
  return media('pcm_s16le_16', [track(0, 'pcm_s16le', 16_000, [samples])]);
}

/**
 * Converts one channel to 16 kHz for recognition with the SDK's own resampler (exact counts, no
 * delay), so the server hears what a client's encode path would send. Rates the resampler does not
 * take (a WAV may be at any rate) fall back to linear interpolation, which the energy recognizer
 * tolerates.
 */
export function toRecognizerRate(samples: Float32Array, sampleRate: number): Float32Array {
  if (sampleRate === 16_000) return samples;
  if (isSupportedRate(sampleRate)) {
    const resampler = new Resampler({ inputRate: sampleRate, outputRate: 16_000 });
    const out = new Float32Array(resampler.maxOutputFor(samples.length) + resampler.pendingFlush + resampler.latencyFrames);
    let n = resampler.process(samples, out);
    n += resampler.flush(out, n);
    return out.subarray(0, n);
  }
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
