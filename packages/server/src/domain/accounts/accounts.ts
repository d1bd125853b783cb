import { createHash } from 'node:crypto';
import { ApiError } from '../../errors.js';
import type { LedgerRow } from '../../store/store.js';

/**
 * Accounts: one per access key (--access-key is repeatable, one account per key). Everything
 * else (voices, uploads, tasks, sessions, covers) is owned by an account id; another key never sees it.
 * Plans and their quotas are ours (spec "Plan quotas": totalVoices and totalMonthlyChars per plan).
 */
export interface Plan {
  readonly key: string;
  readonly name: string;
  readonly totalVoices: number;
  readonly totalMonthlyChars: number;
}

export const PLANS: Record<string, Plan> = {
  pro: { key: 'pro', name: 'Pro', totalVoices: 30, totalMonthlyChars: 2_000_000 },
  business: { key: 'business', name: 'Business', totalVoices: 100, totalMonthlyChars: 10_000_000 },
};

/** Per-key overrides, mostly for tests (small quotas, a cancelled plan). */
export interface AccountOverrides {
  readonly plan?: keyof typeof PLANS;
  readonly totalVoices?: number;
  readonly totalMonthlyChars?: number;
  readonly totalOrderChars?: number;
  /** A cancelled subscription that has not expired yet: status "cancellation upon expiration". */
  readonly cancelled?: boolean;
}

export interface Account {
  readonly id: string;
  /** 0-based position of the key in the server's accessKeys, used in seeded ids. */
  readonly index: number;
  readonly plan: Plan;
  readonly totalVoices: number;
  readonly cancelled: boolean;
  /** The plan's monthly Characters and the purchased ones this account starts with (its ledger is kept by the store). */
  readonly monthlyChars: bigint;
  readonly orderChars: bigint;
}

const DAY_MS = 86_400_000;

export class Accounts {
  private readonly byKey = new Map<string, Account>();
  readonly all: Account[] = [];

  constructor(keys: readonly string[], overrides: Readonly<Record<string, AccountOverrides>>) {
    keys.forEach((key, index) => {
      if (this.byKey.has(key)) return;
      const o = overrides[key] ?? {};
      const plan = PLANS[o.plan ?? 'pro'] ?? (PLANS['pro'] as Plan);
      const account: Account = {
        // The id is derived from the key by hashing, so it never reveals the key.
        id: `acct_${createHash('sha256').update(key).digest('hex').slice(0, 16)}`,
        index,
        plan,
        totalVoices: o.totalVoices ?? plan.totalVoices,
        cancelled: o.cancelled ?? false,
        monthlyChars: BigInt(o.totalMonthlyChars ?? plan.totalMonthlyChars),
        orderChars: BigInt(o.totalOrderChars ?? 50_000),
      };
      this.byKey.set(key, account);
      this.all.push(account);
    });
  }

  /** Spec "Authentication": the accessKey header names the account. */
  authenticate(key: string | undefined): Account {
    if (key === undefined || key === '') throw ApiError.unauthorized('missing');
    const account = this.byKey.get(key);
    if (account === undefined) throw ApiError.unauthorized('unknown');
    return account;
  }

  byId(id: string): Account | undefined {
    return this.all.find((a) => a.id === id);
  }

  byAccessKey(key: string): Account | undefined {
    return this.byKey.get(key);
  }
}

/**
 * The ledger an account starts with when nothing is kept for it: a 30-day period from now, the plan's
 * and the purchased Characters, and `seededUsed` (the seeded TTS items' usage) counted as this period's,
 * within the plan (an account seeded with a tiny plan for a test is not pushed into a negative balance).
 */
export function initialLedger(account: Account, now: number, seededUsed: bigint): LedgerRow {
  return {
    accountId: account.id,
    planKey: account.plan.key,
    periodEndsAt: now + 30 * DAY_MS,
    chars: {
      monthlyTotal: account.monthlyChars,
      monthlyUsed: seededUsed < account.monthlyChars ? seededUsed : account.monthlyChars,
      orderTotal: account.orderChars,
      orderUsed: 0n,
      reserved: 0n,
    },
  };
}

/** Spec "User info" resetInDays: whole days until the period ends, at least 0. */
export function resetInDays(periodEndsAt: number, now: number): number {
  return Math.max(0, Math.ceil((periodEndsAt - now) / DAY_MS));
}
