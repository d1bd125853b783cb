import { ApiError } from '../../errors.js';
import { ID_PREFIXES } from '../../protocol.js';
import { decodeMedia, UndecodableMediaError, type DecodedMedia, type DecodedTrack } from '../../media/decode.js';
import { dec } from '../../util/decimal.js';
import { randomId } from '../../util/ids.js';
import { isRefusal, type StorageRefusal, type Store, type TaskSource, type UploadRow } from '../../store/store.js';
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
 * The store keeps the bytes and counts the quota (one step with the write, so nodes sharing a store
 * never pass it together); this node keeps decoded media at hand by upload id.
 *
 *   POST /uploads        --room for sizeBytes?--> decode --> held += sizeBytes
 *   DELETE /uploads/{id} --> held -= sizeBytes (a task already reading it keeps its bytes until it ends)
 *   mediaUrl fetched     --room?--> held += size --task ends (any status)--> held -= size
 *
 * Fetched media is kept in the store with its hold, bytes and all, until its task ends, so a node that
 * takes the task over (Store.leases) transcribes the very bytes the first node fetched. Fetching the
 * URL again was the other choice, and the worse one: the resource may have changed or gone, a second
 * fetch could answer another size than the quota counted, and the source may not welcome it
 * (docs/protocol.md "Batch leases").
 */
export interface Upload extends UploadRow {
  readonly media: DecodedMedia;
}

/**
 * The media a create resolved: an owned upload or media fetched for one task (`holdId`), counted
 * against the quota until `release` (idempotent, never rejects) or until the task's run releases it.
 */
export interface HeldMedia {
  readonly media: DecodedMedia;
  readonly source: { readonly kind: 'upload'; readonly uploadId: string } | { readonly kind: 'hold'; readonly holdId: string };
  release(): Promise<void>;
}

/** Decoded uploads this node keeps at hand, by the bytes they hold (least recently used go first). */
const DECODED_CACHE_BYTES = 256 * 1024 * 1024;

export class Uploads {
  /** Upload id -> its decoded media; the store holds the bytes, so a miss decodes them again. */
  private readonly decoded = new Map<string, DecodedMedia>();
  private decodedBytes = 0;

  constructor(
    private readonly store: Store,
    readonly quotaBytes: number,
  ) {}

  usedBytes(account: Account): Promise<number> {
    return this.store.uploads.usedBytes(account.id);
  }

  /** What capabilities and DELETE report: decimal strings. */
  async usage(account: Account): Promise<{ usedBytes: string; quotaBytes: string }> {
    return { usedBytes: dec(await this.usedBytes(account)), quotaBytes: dec(this.quotaBytes) };
  }

  /** Refuses with STORAGE_QUOTA_EXCEEDED when `sizeBytes` more would pass the quota (a check ahead; the write checks again). */
  async checkRoom(account: Account, sizeBytes: number): Promise<void> {
    const used = await this.usedBytes(account);
    if (used + sizeBytes > this.quotaBytes) throw this.quotaExceeded({ refused: 'storage', used, requested: sizeBytes, limit: this.quotaBytes });
  }

  async create(account: Account, bytes: Buffer, contentType: string | undefined, filename: string | undefined, now: number): Promise<Upload> {
    await this.checkRoom(account, bytes.length);
    const media = decodeOrRefuse(bytes, contentType);
    const row: UploadRow = {
      id: randomId(ID_PREFIXES.upload),
      ownerId: account.id,
      filename: filename ?? 'upload',
      contentType: contentType ?? 'application/octet-stream',
      sizeBytes: bytes.length,
      createdAt: now,
    };
    const created = await this.store.uploads.create(row, bytes, this.quotaBytes);
    if (isRefusal(created)) throw this.quotaExceeded(created);
    this.remember(created.id, media);
    return { ...created, media };
  }

  /**
   * Media fetched from a mediaUrl for one task; never listed to the client. Throws the quota refusal, or
   * UndecodableMediaError (the caller words it as a media fetch failure).
   */
  async holdFetched(account: Account, bytes: Buffer, contentType: string | undefined): Promise<HeldMedia> {
    await this.checkRoom(account, bytes.length);
    const media = decodeMedia(bytes, contentType);
    const holdId = randomId(ID_PREFIXES.upload);
    const refusal = await this.store.uploads.hold(account.id, holdId, bytes.length, this.quotaBytes, { bytes, contentType });
    if (refusal !== undefined) throw this.quotaExceeded(refusal);
    let released: Promise<void> | undefined;
    return {
      media,
      source: { kind: 'hold', holdId },
      release: () => {
        released ??= this.releaseHold(holdId, account.id);
        return released;
      },
    };
  }

  /**
   * Frees a hold of fetched media (idempotent). A release the store cannot make now leaves the bytes
   * counted; it must not fail the task that already ended, so it is reported, not thrown.
   */
  releaseHold(holdId: string, accountId: string): Promise<void> {
    return this.store.uploads.releaseHold(holdId).catch((error: unknown) => {
      console.error(`soundclone server: could not release fetched media ${holdId} held for account ${accountId}:`, error);
    });
  }

  /**
   * A batch task's track, read from the store (a node that did not create the task); undefined when
   * its media is no longer kept (the upload was deleted, the hold released).
   */
  async trackOf(ownerId: string, source: TaskSource): Promise<DecodedTrack | undefined> {
    let media: DecodedMedia | undefined;
    if (source.kind === 'upload') {
      media = (await this.get({ id: ownerId }, source.uploadId))?.media;
    } else {
      const held = await this.store.uploads.heldBytes(source.holdId);
      media = held === undefined ? undefined : decodeMedia(held.bytes, held.contentType);
    }
    return media?.tracks[source.trackIndex];
  }

  async get(account: Pick<Account, 'id'>, id: string): Promise<Upload | undefined> {
    const row = await this.store.uploads.get(account.id, id);
    if (row === undefined) {
      this.forget(id);
      return undefined;
    }
    const cached = this.decoded.get(id);
    if (cached !== undefined) {
      // Most recently used last.
      this.decoded.delete(id);
      this.decoded.set(id, cached);
      return { ...row, media: cached };
    }
    const bytes = await this.store.uploads.bytes(id);
    if (bytes === undefined) return undefined;
    const media = decodeOrRefuse(bytes, row.contentType);
    this.remember(id, media);
    return { ...row, media };
  }

  /** Forgets an owned upload and frees its share of the quota; NOT_FOUND for a missing or foreign one. */
  async delete(account: Account, id: string): Promise<UploadRow> {
    const row = await this.store.uploads.delete(account.id, id);
    if (row === undefined) throw ApiError.notFound('upload');
    this.forget(id);
    return row;
  }

  private quotaExceeded(r: StorageRefusal): ApiError {
    return new ApiError('STORAGE_QUOTA_EXCEEDED', `the account holds ${r.used} bytes of media; ${r.requested} more would pass its quota of ${r.limit} bytes (delete uploads to make room)`, {
      usedBytes: dec(r.used), requestedBytes: dec(r.requested), quotaBytes: dec(r.limit),
    });
  }

  private remember(id: string, media: DecodedMedia): void {
    this.forget(id);
    this.decoded.set(id, media);
    this.decodedBytes += media.heldBytes;
    for (const [oldest, m] of this.decoded) {
      if (this.decodedBytes <= DECODED_CACHE_BYTES || oldest === id) break;
      this.decoded.delete(oldest);
      this.decodedBytes -= m.heldBytes;
    }
  }

  private forget(id: string): void {
    const media = this.decoded.get(id);
    if (media === undefined) return;
    this.decoded.delete(id);
    this.decodedBytes -= media.heldBytes;
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
