import { REALTIME } from '@soundclone/core/internal';
import type { Store } from '../../store/store.js';
import { ceilDiv } from '../../util/decimal.js';
import type { SpendingGuard } from './audio.js';

const SAMPLES_PER_SECOND = BigInt(REALTIME.sampleRate);

/**
 * One session's spending guard over the store (docs/protocol.md "Realtime spending"): asks
 * Store.accrueRealtime only when a frame needs more than the session's reservation already pays for.
 *
 * Why that is exact: a charge is per started second (billing.ts chargeFor), so a reservation that
 * covers `granted` samples pays for every sample up to `paid`, the next whole second. A frame ending
 * below `paid` needs no new reservation, and the limit is at least `paid`, so the frame is stored
 * whole and the session is not at its limit: what the store would have answered changes nothing, and
 * it is not asked (once per started second of audio, not once per frame). A frame ending exactly on
 * `paid` is asked about: were `paid` the limit, the session is exhausted there, which only the store
 * knows. What is kept is the reservation, never the limit the store last answered: the limit is not
 * reserved (another session of the account may spend it), so storing up to it unasked could overspend,
 * and would hold back the visible reservedCharacters.
 *
 * An engine that must wait (a database transaction) answers with a promise. The guard then keeps the
 * answer, and the same frame fed again (connection.ts queues the socket's frames behind it) gets it
 * synchronously: the answer serves the next call only, so a limit used is as fresh as the store's
 * answer to that frame.
 */
export class StoreSpendingGuard implements SpendingGuard {
  /** Samples the reservation pays for: whole seconds. */
  private paid = 0n;
  /** The last asynchronous answer, for the frame that waited for it (see reserve). */
  private answered: { readonly wanted: bigint; readonly limit: bigint } | undefined;

  constructor(
    private readonly store: Store,
    private readonly taskId: string,
  ) {}

  reserve(wanted: bigint): bigint | Promise<void> {
    // An awaited answer serves the next call only (the frame that waited for it, fed again at once);
    // kept longer it could grow stale.
    const answered = this.answered;
    this.answered = undefined;
    if (wanted < this.paid) return this.paid;
    // The store reserved for min(answered.wanted, limit) >= min(wanted, limit): the answer holds for this want.
    if (answered !== undefined && wanted <= answered.wanted) return answered.limit;
    const limit = this.store.accrueRealtime(this.taskId, wanted);
    if (typeof limit === 'bigint') {
      this.granted(wanted, limit);
      return limit;
    }
    return limit.then((value) => {
      this.granted(wanted, value);
      this.answered = { wanted, limit: value };
    });
  }

  private granted(wanted: bigint, limit: bigint): void {
    const granted = wanted < limit ? wanted : limit;
    const paid = ceilDiv(granted, SAMPLES_PER_SECOND) * SAMPLES_PER_SECOND;
    // Answers may come back out of order (two sockets of one session waiting at once): a reservation only grows.
    if (paid > this.paid) this.paid = paid;
  }
}
