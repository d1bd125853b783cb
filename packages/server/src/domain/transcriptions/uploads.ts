import { ApiError } from '../../errors.js';
import { ID_PREFIXES } from '../../protocol.js';
import { decodeMedia, UndecodableMediaError, type DecodedMedia } from '../../media/decode.js';
import { dec } from '../../util/decimal.js';
import { randomId } from '../../util/ids.js';
import type { Account } from '../accounts/accounts.js';

/**
 * Uploads (spec: "POST /uploads ... not shown", ours). The body is the raw media; it is read and checked
 * at once (media/decode.ts), so an upload that exists can always be transcribed, and kept compact: the
 * bytes as they arrived, never decoded Float32. The view reports media.audioTracks, which is what
 * audioTrackIndex refers to (spec "audioTrackIndex").
 *
 * Storage quota (docs/protocol.md "Uploads"): each account holds at most `quotaBytes` of media at once:
 * its uploads until DELETE /uploads/{uploadId}, plus media fetched from a mediaUrl while its task runs.
 * Past it a new upload or fetch is refused with 413 STORAGE_QUOTA_EXCEEDED.
 *
 *   POST /uploads        --room for sizeBytes?--> decode --> held += sizeBytes
 *   DELETE /uploads/{id} --> held -= sizeBytes (a task already reading it keeps its bytes until it ends)
 *   mediaUrl fetched     --room?--> held += size --task ends (any status)--> held -= size
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

/** Media fetched for one task, counted against the quota until `release` (idempotent). */
export interface HeldMedia {
  readonly media: DecodedMedia;
  release(): void;
}

export class Uploads {
  private readonly uploads = new Map<string, Upload>();
  /** Account id -> bytes held (uploads and fetched media of running tasks). */
  private readonly held = new Map<string, number>();

  constructor(readonly quotaBytes: number) {}

  usedBytes(account: Account): number {
    return this.held.get(account.id) ?? 0;
  }

  /** What capabilities and DELETE report: decimal strings. */
  usage(account: Account): { usedBytes: string; quotaBytes: string } {
    return { usedBytes: dec(this.usedBytes(account)), quotaBytes: dec(this.quotaBytes) };
  }

  /** Refuses with STORAGE_QUOTA_EXCEEDED when `sizeBytes` more would pass the quota. */
  checkRoom(account: Account, sizeBytes: number): void {
    const used = this.usedBytes(account);
    if (used + sizeBytes <= this.quotaBytes) return;
    throw new ApiError('STORAGE_QUOTA_EXCEEDED', `the account holds ${used} bytes of media; ${sizeBytes} more would pass its quota of ${this.quotaBytes} bytes (delete uploads to make room)`, {
      usedBytes: dec(used), requestedBytes: dec(sizeBytes), quotaBytes: dec(this.quotaBytes),
    });
  }

  create(account: Account, bytes: Buffer, contentType: string | undefined, filename: string | undefined, now: number): Upload {
    this.checkRoom(account, bytes.length);
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
    this.add(account, upload.sizeBytes);
    return upload;
  }

  /**
   * Media fetched from a mediaUrl for one task; never listed to the client. Throws the quota refusal, or
   * UndecodableMediaError (the caller words it as a media fetch failure).
   */
  holdFetched(account: Account, bytes: Buffer, contentType: string | undefined): HeldMedia {
    this.checkRoom(account, bytes.length);
    const media = decodeMedia(bytes, contentType);
    this.add(account, bytes.length);
    let held = true;
    return {
      media,
      release: () => {
        if (!held) return;
        held = false;
        this.add(account, -bytes.length);
      },
    };
  }

  get(account: Account, id: string): Upload | undefined {
    const upload = this.uploads.get(id);
    return upload?.ownerId === account.id ? upload : undefined;
  }

  /** Forgets an owned upload and frees its share of the quota; NOT_FOUND for a missing or foreign one. */
  delete(account: Account, id: string): Upload {
    const upload = this.get(account, id);
    if (upload === undefined) throw ApiError.notFound('upload');
    this.uploads.delete(id);
    this.add(account, -upload.sizeBytes);
    return upload;
  }

  private add(account: Account, bytes: number): void {
    const next = this.usedBytes(account) + bytes;
    if (next <= 0) this.held.delete(account.id);
    else this.held.set(account.id, next);
  }
}

export function decodeOrRefuse(bytes: Buffer, contentType: string | undefined): DecodedMedia {
  try {
    return decodeMedia(bytes, contentType);
  } catch (error) {
    if (error instanceof UndecodableMediaError) throw new ApiError(error.code, error.message, { ...error.details }, { cause: error });
    throw error;
  }
}

export function mediaView(media: DecodedMedia): Record<string, unknown> {
  return {
    container: media.container,
    durationMs: dec(media.durationMs),
    audioTracks: media.tracks.map((t) => ({ index: t.index, codec: t.codec, channels: t.channelCount, sampleRate: t.sampleRate, durationMs: dec(t.durationMs) })),
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
