import { Violations } from '../../errors.js';
import { LIMITS } from '@soundclone/core/internal';
import type { Account } from './accounts.js';
import type { Store } from '../../store/store.js';
import { boundedElements } from '../validate.js';

/**
 * AI cover history (spec "DELETE /cover"). Cover generation is not part of this service: each account
 * is seeded with `cover-<n>-0001` .. `cover-<n>-<seedCount>` (n its 1-based key position). Outcomes:
 *   succeedIds   owned by the caller and deleted now
 *   nonExistIds  no such id (never existed, or already deleted)
 *   unMatchIds   exists but belongs to another account (our reading of the unexplained list)
 */
export class Covers {
  /** cover id -> owner account id */
  private readonly owners = new Map<string, string>();

  /** Seeded covers are computed from key positions; the store keeps which were deleted. */
  constructor(
    accounts: readonly Account[],
    seedCount: number,
    private readonly store: Store,
  ) {
    for (const account of accounts) {
      for (let i = 1; i <= seedCount; i++) this.owners.set(Covers.idFor(account, i), account.id);
    }
  }

  static idFor(account: Account, seq: number): string {
    return `cover-${account.index + 1}-${String(seq).padStart(4, '0')}`;
  }

  async delete(account: Account, body: Record<string, unknown>): Promise<{ succeedIds: string[]; nonExistIds: string[]; unMatchIds: string[] }> {
    const v = new Violations();
    const ids = body['ids'];
    if (!Array.isArray(ids)) {
      v.add('ids', 'is required and must be an array of id strings');
    } else {
      if (ids.length === 0) v.add('ids', 'must hold at least 1 id');
      if (ids.length > LIMITS.coverIdsMax) v.add('ids', `must hold at most ${LIMITS.coverIdsMax} ids per call`);
      // Never past coverIdsMax: a longer array is refused for its length (validate.ts boundedElements).
      const checked = boundedElements(ids, LIMITS.coverIdsMax);
      for (let i = 0; i < checked; i++) {
        if (v.stopChecking()) break;
        const id: unknown = ids[i];
        if (typeof id !== 'string' || id === '') v.add(`ids[${i}]`, 'must be a non-empty string');
      }
      if (checked < ids.length) v.checkingStopped = true;
    }
    v.throwIfAny();
    const unique = [...new Set(ids as string[])];
    const owned = unique.filter((id) => this.owners.get(id) === account.id);
    // Deleted in one step; an owned id deleted before (now or in an earlier run) no longer exists.
    const deletedNow = owned.length > 0 ? await this.store.covers.deleteOwned(account.id, owned) : new Set<string>();
    // Another account's deleted cover does not exist either.
    const foreign = unique.filter((id) => { const owner = this.owners.get(id); return owner !== undefined && owner !== account.id; });
    const foreignDeleted = foreign.length > 0 ? await this.store.covers.deletedAmong(foreign) : new Set<string>();
    const result = { succeedIds: [] as string[], nonExistIds: [] as string[], unMatchIds: [] as string[] };
    // A repeated id is reported once, under its first outcome.
    for (const id of unique) {
      const owner = this.owners.get(id);
      if (owner === undefined) result.nonExistIds.push(id);
      else if (owner !== account.id) (foreignDeleted.has(id) ? result.nonExistIds : result.unMatchIds).push(id);
      else (deletedNow.has(id) ? result.succeedIds : result.nonExistIds).push(id);
    }
    return result;
  }
}
