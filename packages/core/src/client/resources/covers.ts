import { BatchIncompleteError, ValidationError } from '../../errors/client-errors.js';
import { checkCallOptions } from '../../http/call-options.js';
import { buildPath } from '../../http/path.js';
import type { CallOptions, Transport } from '../../http/transport.js';
import { LIMITS, PATHS } from '../../protocol.js';
import type { CoverDeleteResult } from '../../types/account.js';
import { parseCoverResult } from '../../parse/account.js';
import { Checks } from '../validation/checks.js';

/**
 * AI cover history (spec "DELETE /cover"): at most 500 ids per call, per-id outcomes instead of a
 * failed call. `delete(ids)` takes any number of ids, drops repeats, sends batches of 500 one after
 * another and merges the outcomes. A batch is retried like a read: deleting is idempotent in effect,
 * but an id deleted by an attempt whose answer was lost is reported in nonExistIds by the retry.
 * When a batch fails, BatchIncompleteError carries the merged outcomes so far and the ids left.
 */
export class Covers {
  constructor(private readonly transport: Transport) {}

  async delete(ids: Iterable<string>, call?: CallOptions): Promise<CoverDeleteResult> {
    // A string is iterable too: delete('cov_1') would otherwise delete the ids 'c', 'o', 'v', ...
    if (typeof ids === 'string' || ids === null || typeof (ids as { [Symbol.iterator]?: unknown } | undefined)?.[Symbol.iterator] !== 'function') {
      throw new ValidationError([{ field: 'ids', rule: 'must be an array (or another iterable) of id strings, not a single string' }]);
    }
    checkCallOptions(call);
    const unique = [...new Set(ids)];
    const c = new Checks();
    unique.forEach((id, i) => {
      if (typeof id !== 'string' || id === '') c.add(`ids[${i}]`, 'must be a non-empty string');
    });
    c.throwIfAny();
    const merged = { succeedIds: [] as string[], nonExistIds: [] as string[], unMatchIds: [] as string[] };
    for (let start = 0; start < unique.length; start += LIMITS.coverIdsMax) {
      const batch = unique.slice(start, start + LIMITS.coverIdsMax);
      try {
        const { data } = await this.transport.request({ method: 'DELETE', path: buildPath(PATHS.cover), json: { ids: batch }, retry: 'repeatable' }, call);
        const result = parseCoverResult(data);
        merged.succeedIds.push(...result.succeedIds);
        merged.nonExistIds.push(...result.nonExistIds);
        merged.unMatchIds.push(...result.unMatchIds);
      } catch (error) {
        throw new BatchIncompleteError<CoverDeleteResult>(merged, unique.slice(start), error);
      }
    }
    return merged;
  }
}
