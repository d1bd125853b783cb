import type { Store } from '../../src/store/store.js';

/**
 * The real in-memory store with one change: the realtime spending check (Store.accrueRealtime)
 * answers with a Promise, after a chosen delay, and can be told to fail. It stands in for a database
 * engine, which answers that check with a transaction (the account row locked) and can find the
 * database unreachable; no such engine runs in these tests, and what the realtime path must handle is
 * only its answer arriving later, or not at all. Everything else is the inner store, unchanged.
 *
 * The inner check runs when the delay has passed (as a transaction would commit then), so sessions
 * waiting at once are answered in the order their delays end. A failed check changes nothing, as a
 * transaction that never reached the database.
 */
export interface AsyncSpendingStore extends Store {
  /** Every want asked so far, in order (failed ones included). */
  readonly asked: readonly bigint[];
  /** Checks started and not answered yet. */
  readonly pending: number;
  /** The next `count` checks reject, as a pool whose database is unreachable does. */
  failNext(count: number): void;
  /** Changes the delay of the checks asked from now on. */
  setDelay(delay: SpendingDelay): void;
}

/** How late the answer comes: after `ms` milliseconds, or after `macrotasks` turns of the event loop. */
export type SpendingDelay = { readonly ms: number } | { readonly macrotasks: number };

export function asyncSpendingStore(inner: Store, delay: SpendingDelay): AsyncSpendingStore {
  const asked: bigint[] = [];
  let failures = 0;
  let pending = 0;
  let current = delay;
  const accrueRealtime = (taskId: string, wanted: bigint): Promise<bigint> => {
    asked.push(wanted);
    const fail = failures > 0;
    if (fail) failures -= 1;
    pending += 1;
    return wait(current).then(() => {
      pending -= 1;
      if (fail) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return inner.accrueRealtime(taskId, wanted);
    });
  };
  const extra = {
    asked,
    accrueRealtime,
    failNext: (count: number) => {
      failures = count;
    },
    setDelay: (next: SpendingDelay) => {
      current = next;
    },
  };
  return new Proxy(inner, {
    get(target, name) {
      if (name === 'pending') return pending;
      if (Object.hasOwn(extra, name)) return extra[name as keyof typeof extra];
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as AsyncSpendingStore;
}

function wait(delay: SpendingDelay): Promise<void> {
  if ('ms' in delay) return new Promise((resolve) => setTimeout(resolve, delay.ms));
  let left = delay.macrotasks;
  return new Promise((resolve) => {
    const turn = (): void => {
      if (left <= 0) return resolve();
      left -= 1;
      setImmediate(turn);
    };
    turn();
  });
}
