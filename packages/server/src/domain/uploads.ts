import { ApiError } from '../errors.js';
import { ID_PREFIXES } from '../protocol.js';
import { decodeMedia, UndecodableMediaError, type DecodedMedia } from '../media/decode.js';
import { dec } from '../util/decimal.js';
import { randomId } from '../util/ids.js';
import type { Account } from './accounts.js';

/**
 * Uploads (spec: "POST /uploads ... not shown", ours). The body is the raw media; it is decoded at once,
 * so an upload that exists can always be transcribed. The view reports media.audioTracks, which is
 * what audioTrackIndex refers to (spec "audioTrackIndex").
 */
export interface Upload {
  readonly id: string;
  readonly ownerId: string;
  readonly filename: string;
  readonly contentType: string;
  readonly sizeBytes: number;
  readonly createdAt: number;
  readonly media: DecodedMedia;
}

export class Uploads {
  private readonly uploads = new Map<string, Upload>();

  create(account: Account, bytes: Buffer, contentType: string | undefined, filename: string | undefined, now: number): Upload {
    const media = decodeOrRefuse(bytes, contentType);
    const upload: Upload = {
      id: randomId(ID_PREFIXES.upload),
      ownerId: account.id,
      filename: filename ?? 'upload',
      contentType: contentType ?? 'application/octet-stream',
      sizeBytes: bytes.length,
      createdAt: now,
      media,
    };
    this.uploads.set(upload.id, upload);
    return upload;
  }

  /** An upload made internally from a fetched mediaUrl; never listed to the client. */
  fromFetched(account: Account, bytes: Buffer, contentType: string | undefined, url: string, now: number): Upload {
    const media = decodeMedia(bytes, contentType);
    return { id: randomId(ID_PREFIXES.upload), ownerId: account.id, filename: url, contentType: contentType ?? '', sizeBytes: bytes.length, createdAt: now, media };
  }

  get(account: Account, id: string): Upload | undefined {
    const upload = this.uploads.get(id);
    return upload?.ownerId === account.id ? upload : undefined;
  }
}

export function decodeOrRefuse(bytes: Buffer, contentType: string | undefined): DecodedMedia {
  try {
    return decodeMedia(bytes, contentType);
  } catch (error) {
    if (error instanceof UndecodableMediaError) throw new ApiError('UNSUPPORTED_TYPE', error.message, undefined, { cause: error });
    throw error;
  }
}

export function mediaView(media: DecodedMedia): Record<string, unknown> {
  return {
    container: media.container,
    durationMs: dec(media.durationMs),
    audioTracks: media.tracks.map((t) => ({ index: t.index, codec: t.codec, channels: t.channels.length, sampleRate: t.sampleRate, durationMs: dec(t.durationMs) })),
  };
}

export function uploadView(upload: Upload): Record<string, unknown> {
  return {
    uploadId: upload.id,
    filename: upload.filename,
    contentType: upload.contentType,
    sizeBytes: dec(upload.sizeBytes),
    createdAt: new Date(upload.createdAt).toISOString(),
    media: mediaView(upload.media),
  };
}
