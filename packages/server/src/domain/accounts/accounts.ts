import { createHash } from 'node:crypto';
import { ApiError } from '../../errors.js';

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
  /** End of the current benefit period (ms since epoch); restored from kept state when there is some. */
  periodEndsAt: number;
  /** Character ledger (billing.ts is the only writer). */
  readonly chars: { monthlyTotal: bigint; monthlyUsed: bigint; orderTotal: bigint; orderUsed: bigint; reserved: bigint };
}

const DAY_MS = 86_400_000;

export class Accounts {
  private readonly byKey = new Map<string, Account>();
  readonly all: Account[] = [];

  constructor(keys: readonly string[], overrides: Readonly<Record<string, AccountOverrides>>, now: number) {
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
        periodEndsAt: now + 30 * DAY_MS,
        chars: {
          monthlyTotal: BigInt(o.totalMonthlyChars ?? plan.totalMonthlyChars),
          monthlyUsed: 0n,
          orderTotal: BigInt(o.totalOrderChars ?? 50_000),
          orderUsed: 0n,
          reserved: 0n,
        },
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

  /** Kept state (state/state-store.ts): the period and the character ledger as they were last recorded. */
  restore(id: string, kept: { periodEndsAt: number; chars: Account['chars'] }): void {
    const account = this.byId(id);
    if (account === undefined) return;
    account.periodEndsAt = kept.periodEndsAt;
    Object.assign(account.chars, kept.chars);
  }

  byAccessKey(key: string): Account | undefined {
    return this.byKey.get(key);
  }
}

/** Spec "User info" resetInDays: whole days until the period ends, at least 0. */
export function resetInDays(account: Account, now: number): number {
  return Math.max(0, Math.ceil((account.periodEndsAt - now) / DAY_MS));
}
