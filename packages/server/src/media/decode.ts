import { sniffVoiceFile } from '@soundclone/core/internal';
import { SERVER_LIMITS } from '../protocol.js';
import { demuxMatroskaAudio, isMatroska } from './matroska.js';
import { UndecodableMediaError } from './media-error.js';
import { PcmSource } from './pcm-source.js';
import { parseWav } from './wav.js';

export { UndecodableMediaError, type MediaProblem } from './media-error.js';

/**
 * Media the service read and checked, kept compact: each track is a PcmSource over the bytes as they
 * arrived (WAV: a view of the upload; Matroska: the track's payloads joined; raw PCM16: the upload), never
 * decoded Float32. A transcription decodes it block by block (recognizer-feed.ts). The reference service
 * reads three containers: WAV (any rate, 8/16/24/32-bit integer or 32/64-bit float, 1..32 channels),
 * headerless PCM16LE 16 kHz mono (Content-Type audio/L16 or audio/pcm), which is what
 * options.inputEncoding pcm_s16le_16 means, and Matroska with PCM audio tracks, the one with several
 * audio tracks (what audioTrackIndex selects).
 */
export type Container = 'wav' | 'pcm_s16le_16' | 'matroska';

export interface DecodedTrack {
  /** Position among the audio tracks: media.audioTracks[].index, what audioTrackIndex names. */
  readonly index: number;
  readonly codec: string;
  readonly sampleRate: number;
  readonly channelCount: number;
  /** Frames the payload bytes hold (never a declared count). */
  readonly frames: number;
  readonly durationMs: number;
  readonly source: PcmSource;
}

export interface DecodedMedia {
  readonly container: Container;
  readonly tracks: readonly DecodedTrack[];
  /** The longest track's duration. */
  readonly durationMs: number;
  /** Bytes the kept tracks hold. */
  readonly heldBytes: number;
}

function track(index: number, codec: string, source: PcmSource): DecodedTrack {
  return { index, codec, sampleRate: source.sampleRate, channelCount: source.channels, frames: source.frames, durationMs: source.durationMs, source };
}

function media(container: Container, tracks: readonly DecodedTrack[]): DecodedMedia {
  const durationMs = Math.max(0, ...tracks.map((t) => t.durationMs));
  if (durationMs > SERVER_LIMITS.mediaMaxDurationMs) {
    throw new UndecodableMediaError('DURATION_TOO_LONG', `the media holds ${durationMs} ms of audio; the reference service transcribes at most ${SERVER_LIMITS.mediaMaxDurationMs} ms`, {
      durationMs, maxDurationMs: SERVER_LIMITS.mediaMaxDurationMs,
    });
  }
  return { container, tracks, durationMs, heldBytes: tracks.reduce((n, t) => n + t.source.bytes.byteLength, 0) };
}

const RAW_PCM_TYPES = ['audio/l16', 'audio/pcm', 'audio/x-pcm'];

export function isRawPcmType(contentType: string | undefined): boolean {
  const base = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return RAW_PCM_TYPES.includes(base);
}

/** Reads and checks media; throws UndecodableMediaError naming the problem. Never expands the samples. */
export function decodeMedia(bytes: Buffer, contentType: string | undefined): DecodedMedia {
  const kind = sniffVoiceFile(bytes);
  if (kind === 'wav') return media('wav', [track(0, 'pcm', parseWav(bytes))]);
  if (isMatroska(bytes)) return media('matroska', demuxMatroskaAudio(bytes).map((t) => track(t.index, t.codecId, t.source)));
  if (kind === undefined && isRawPcmType(contentType)) {
    if (bytes.length % 2 !== 0) throw new UndecodableMediaError('MALFORMED', 'raw PCM16 must have an even number of bytes');
    return media('pcm_s16le_16', [track(0, 'pcm_s16le', new PcmSource(bytes, 's16le', 1, 16_000, 'symmetric'))]);
  }
  throw new UndecodableMediaError(
    kind === undefined ? 'UNKNOWN_CONTAINER' : 'UNSUPPORTED_FORMAT',
    kind === undefined ? 'content is neither WAV, Matroska with PCM tracks, nor raw PCM16 (audio/L16)' : `${kind} cannot be decoded by the reference service`,
  );
}
