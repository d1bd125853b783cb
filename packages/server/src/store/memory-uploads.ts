import type { HeldMediaBytes, StorageRefusal, Store, UploadRow } from './store.js';

type Uploads = Store['uploads'];

/**
 * The in-memory engine's uploads and holds, and the storage quota they count against (memory-store.ts).
 * Not kept by the journal engine either: an uploadId lives as long as the process.
 */
export class MemoryUploads implements Uploads {
  private readonly rows = new Map<string, { readonly row: UploadRow; readonly bytes: Buffer }>();
  private readonly holds = new Map<string, { readonly accountId: string; readonly sizeBytes: number; readonly media: HeldMediaBytes | undefined }>();
  /** Account id -> bytes of media held (uploads and holds). */
  private readonly mediaBytes = new Map<string, number>();

  async create(row: UploadRow, bytes: Buffer, quotaBytes: number): Promise<UploadRow | StorageRefusal> {
    const refusal = this.room(row.ownerId, row.sizeBytes, quotaBytes);
    if (refusal !== undefined) return refusal;
    this.rows.set(row.id, { row, bytes });
    this.addMedia(row.ownerId, row.sizeBytes);
    return row;
  }

  async get(ownerId: string, id: string): Promise<UploadRow | undefined> {
    const kept = this.rows.get(id);
    return kept?.row.ownerId === ownerId ? kept.row : undefined;
  }

  async bytes(id: string): Promise<Buffer | undefined> {
    return this.rows.get(id)?.bytes;
  }

  async delete(ownerId: string, id: string): Promise<UploadRow | undefined> {
    const kept = this.rows.get(id);
    if (kept?.row.ownerId !== ownerId) return undefined;
    this.rows.delete(id);
    this.addMedia(ownerId, -kept.row.sizeBytes);
    return kept.row;
  }

  async hold(accountId: string, holdId: string, sizeBytes: number, quotaBytes: number, media?: HeldMediaBytes): Promise<StorageRefusal | undefined> {
    if (this.holds.has(holdId)) throw new TypeError(`hold ${holdId} is already held`);
    const refusal = this.room(accountId, sizeBytes, quotaBytes);
    if (refusal !== undefined) return refusal;
    // The caller's buffer, not a copy: it is held for as long as the caller held it anyway.
    this.holds.set(holdId, { accountId, sizeBytes, media });
    this.addMedia(accountId, sizeBytes);
    return undefined;
  }

  async heldBytes(holdId: string): Promise<HeldMediaBytes | undefined> {
    return this.holds.get(holdId)?.media;
  }

  async releaseHold(holdId: string): Promise<void> {
    const held = this.holds.get(holdId);
    if (held === undefined) return;
    this.holds.delete(holdId);
    this.addMedia(held.accountId, -held.sizeBytes);
  }

  async usedBytes(accountId: string): Promise<number> {
    return this.mediaBytes.get(accountId) ?? 0;
  }

  clear(): void {
    this.rows.clear();
    this.holds.clear();
    this.mediaBytes.clear();
  }

  private room(accountId: string, sizeBytes: number, quotaBytes: number): StorageRefusal | undefined {
    const used = this.mediaBytes.get(accountId) ?? 0;
    return used + sizeBytes <= quotaBytes ? undefined : { refused: 'storage', used, requested: sizeBytes, limit: quotaBytes };
  }

  private addMedia(accountId: string, bytes: number): void {
    const next = (this.mediaBytes.get(accountId) ?? 0) + bytes;
    if (next <= 0) this.mediaBytes.delete(accountId);
    else this.mediaBytes.set(accountId, next);
  }
}
