import type pg from 'pg';
import type { HeldMediaBytes, StorageRefusal, Store, UploadRow } from '../store.js';
import type { PgAccess } from './connection.js';
import { uploadFrom, type UploadSql } from './rows.js';

/**
 * Uploads keep their bytes in one bytea column; the quota is the account row's media_bytes, grown
 * by a conditional UPDATE in the transaction that writes the upload or hold, so two nodes cannot
 * both pass it.
 */
export function pgUploads(db: PgAccess): Store['uploads'] {
  return {
    create: async (row: UploadRow, bytes: Buffer, quotaBytes: number): Promise<UploadRow | StorageRefusal> =>
      db.tx(async (c) => {
        const refusal = await growMedia(c, row.ownerId, row.sizeBytes, quotaBytes);
        if (refusal !== undefined) return refusal;
        await c.query(
          'INSERT INTO upload (id, owner_id, filename, content_type, size_bytes, created_at, bytes) VALUES ($1, $2, $3, $4, $5, $6, $7)',
          [row.id, row.ownerId, row.filename, row.contentType, String(row.sizeBytes), String(row.createdAt), bytes],
        );
        return row;
      }),
    get: async (ownerId: string, id: string): Promise<UploadRow | undefined> => {
      const r = await db.query<UploadSql>('SELECT id, owner_id, filename, content_type, size_bytes, created_at FROM upload WHERE id = $1 AND owner_id = $2', [id, ownerId]);
      return r[0] === undefined ? undefined : uploadFrom(r[0]);
    },
    bytes: async (id: string): Promise<Buffer | undefined> => (await db.query<{ bytes: Buffer }>('SELECT bytes FROM upload WHERE id = $1', [id]))[0]?.bytes,
    delete: async (ownerId: string, id: string): Promise<UploadRow | undefined> =>
      db.tx(async (c) => {
        const r = (await c.query<UploadSql>('DELETE FROM upload WHERE id = $1 AND owner_id = $2 RETURNING id, owner_id, filename, content_type, size_bytes, created_at', [id, ownerId])).rows[0];
        if (r === undefined) return undefined;
        await c.query('UPDATE account SET media_bytes = media_bytes - $2 WHERE id = $1', [ownerId, String(r.size_bytes)]);
        return uploadFrom(r);
      }),
    hold: async (accountId: string, holdId: string, sizeBytes: number, quotaBytes: number, media?: HeldMediaBytes): Promise<StorageRefusal | undefined> =>
      db.tx(async (c) => {
        const refusal = await growMedia(c, accountId, sizeBytes, quotaBytes);
        if (refusal !== undefined) return refusal;
        await c.query('INSERT INTO media_hold (id, account_id, size_bytes, content_type, bytes) VALUES ($1, $2, $3, $4, $5)', [
          holdId, accountId, String(sizeBytes), media?.contentType ?? null, media?.bytes ?? null,
        ]);
        return undefined;
      }),
    heldBytes: async (holdId: string): Promise<HeldMediaBytes | undefined> => {
      const r = (await db.query<{ bytes: Buffer | null; content_type: string | null }>('SELECT bytes, content_type FROM media_hold WHERE id = $1', [holdId]))[0];
      return r?.bytes === null || r === undefined ? undefined : { bytes: r.bytes, contentType: r.content_type ?? undefined };
    },
    releaseHold: async (holdId: string): Promise<void> => {
      await db.query(
        `WITH gone AS (DELETE FROM media_hold WHERE id = $1 RETURNING account_id, size_bytes)
         UPDATE account a SET media_bytes = a.media_bytes - g.size_bytes FROM gone g WHERE a.id = g.account_id`,
        [holdId],
      );
    },
    usedBytes: async (accountId: string): Promise<number> =>
      Number((await db.query<{ media_bytes: bigint }>('SELECT media_bytes FROM account WHERE id = $1', [accountId]))[0]?.media_bytes ?? 0n),
  };
}

/** Grows the account's media by `sizeBytes` if it stays within the quota; else the refusal, nothing changed. */
async function growMedia(c: pg.PoolClient, accountId: string, sizeBytes: number, quotaBytes: number): Promise<StorageRefusal | undefined> {
  const grown = await c.query('UPDATE account SET media_bytes = media_bytes + $2 WHERE id = $1 AND media_bytes + $2 <= $3', [accountId, String(sizeBytes), String(quotaBytes)]);
  if (grown.rowCount === 1) return undefined;
  const used = (await c.query<{ media_bytes: bigint }>('SELECT media_bytes FROM account WHERE id = $1', [accountId])).rows[0];
  if (used === undefined) throw new TypeError(`no ledger for account ${accountId}: seed it first`);
  return { refused: 'storage', used: Number(used.media_bytes), requested: sizeBytes, limit: quotaBytes };
}

