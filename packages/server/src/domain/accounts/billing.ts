import { ApiError } from '../../errors.js';
import { REALTIME, REALTIME_SPENDING } from '@soundclone/core/internal';
import { RATE } from '../../protocol.js';
import { ceilDiv, dec } from '../../util/decimal.js';

/**
 * Characters, the billing unit (spec "What the service does" 4). Quote, reserve, settle, release:
 *
 *   create:   reserved = quote(duration rounded UP to whole minutes)     state RESERVED
 *   success:  settled  = charge(duration rounded UP to whole seconds)    state SETTLED
 *             released = reserved - settled
 *   failure:  settled  = 0, released = reserved                          state RELEASED
 *   realtime: ACCRUING while open: reserved = charge(received duration), grown frame by frame and
 *             only as far as available() allows (accrue); finish settles it (settled = reserved),
 *             a recognizer failure releases it (nothing charged). docs/protocol.md "Realtime spending".
 *
 * Invariant: reserved = settled + released; billableCharacters = settled (what is charged).
 * Charges draw on the monthly plan characters first, then on purchased (order) characters.
 */
/** The character counts of one account (the store keeps them; the functions below change them in place on an engine's working copy). */
export interface LedgerChars {
  monthlyTotal: bigint;
  monthlyUsed: bigint;
  orderTotal: bigint;
  orderUsed: bigint;
  reserved: bigint;
}

/** What the arithmetic needs of an account: its plan (recorded on each task's billing) and its counts. */
export interface Ledger {
  readonly planKey: string;
  readonly chars: LedgerChars;
}

export interface BillingRecord {
  state: 'RESERVED' | 'SETTLED' | 'RELEASED' | 'ACCRUING';
  readonly planKey: string;
  reserved: bigint;
  settled: bigint;
  released: bigint;
  billableDurationMs: bigint;
}

const PER_MINUTE = BigInt(RATE.ratePerMinute);

/** Characters for a duration rounded up to whole seconds. */
export function chargeFor(durationMs: bigint): bigint {
  const seconds = ceilDiv(durationMs, 1000n);
  return ceilDiv(seconds * PER_MINUTE, 60n);
}

/** Characters reserved for a duration rounded up to whole minutes. */
export function quoteFor(durationMs: bigint): bigint {
  return ceilDiv(durationMs, 60_000n) * PER_MINUTE;
}

export function available(ledger: Ledger): bigint {
  const c = ledger.chars;
  return c.monthlyTotal - c.monthlyUsed + (c.orderTotal - c.orderUsed) - c.reserved;
}

export function reserve(ledger: Ledger, durationMs: bigint): BillingRecord {
  const amount = quoteFor(durationMs);
  const left = available(ledger);
  if (amount > left) {
    throw new ApiError('INSUFFICIENT_CHARACTERS', `this task needs ${amount} Characters; ${left} are available`, {
      requiredCharacters: dec(amount),
      availableCharacters: dec(left < 0n ? 0n : left),
    });
  }
  ledger.chars.reserved += amount;
  return { state: 'RESERVED', planKey: ledger.planKey, reserved: amount, settled: 0n, released: 0n, billableDurationMs: 0n };
}

function charge(ledger: Ledger, amount: bigint): void {
  const c = ledger.chars;
  const monthlyLeft = c.monthlyTotal - c.monthlyUsed;
  const fromMonthly = amount <= monthlyLeft ? amount : monthlyLeft > 0n ? monthlyLeft : 0n;
  c.monthlyUsed += fromMonthly;
  c.orderUsed += amount - fromMonthly;
}

/** Settles a reservation once; a second call is a no-op (the task settles exactly once). */
export function settle(ledger: Ledger, record: BillingRecord, durationMs: bigint): void {
  if (record.state !== 'RESERVED') return;
  const due = chargeFor(durationMs);
  const settled = due < record.reserved ? due : record.reserved;
  ledger.chars.reserved -= record.reserved;
  charge(ledger, settled);
  record.settled = settled;
  record.released = record.reserved - settled;
  record.billableDurationMs = durationMs;
  record.state = 'SETTLED';
}

export function release(ledger: Ledger, record: BillingRecord): void {
  if (record.state !== 'RESERVED') return;
  ledger.chars.reserved -= record.reserved;
  record.released = record.reserved;
  record.state = 'RELEASED';
}

/** Realtime: an accruing reservation that starts empty and grows with the received audio (accrue). */
export function accruing(ledger: Ledger): BillingRecord {
  return { state: 'ACCRUING', planKey: ledger.planKey, reserved: 0n, settled: 0n, released: 0n, billableDurationMs: 0n };
}

const SAMPLE_RATE = BigInt(REALTIME.sampleRate);

/** Duration of whole received samples, rounded up to whole ms (what realtime settles on). */
export function receivedDurationMs(samples: bigint): bigint {
  return ceilDiv(samples * 1000n, SAMPLE_RATE);
}

/** What a realtime session needs available at creation: the charge of REALTIME_SPENDING.minimumMs. */
export function realtimeMinimum(): bigint {
  return chargeFor(BigInt(REALTIME_SPENDING.minimumMs));
}

/**
 * The most samples a realtime session may have received in all: the whole seconds its own
 * reservation plus the account's available balance pay for. Exact: s whole seconds cost
 * ceil(s * rate / 60) <= budget  <=>  s <= floor(budget * 60 / rate), and n samples settle as
 * ceil(ceil(n * 1000 / 16000) / 1000) seconds, which stays <= s exactly while n <= s * 16000.
 */
export function affordableSamples(ledger: Ledger, record: BillingRecord): bigint {
  const budget = record.reserved + available(ledger);
  if (budget <= 0n) return 0n;
  return ((budget * 60n) / PER_MINUTE) * SAMPLE_RATE;
}

/**
 * Grows (never shrinks) an open session's reservation to the charge of `receivedSamples`. The caller
 * (SessionAudio's spending guard) never lets received pass affordableSamples, so reserved never
 * exceeds what the account has.
 */
export function accrue(ledger: Ledger, record: BillingRecord, receivedSamples: bigint): void {
  if (record.state !== 'ACCRUING') return;
  const due = chargeFor(receivedDurationMs(receivedSamples));
  if (due <= record.reserved) return;
  ledger.chars.reserved += due - record.reserved;
  record.reserved = due;
}

/** Finish: the reservation becomes the charge (settled = reserved = charge(received), released 0). */
export function settleRealtime(ledger: Ledger, record: BillingRecord, durationMs: bigint): void {
  if (record.state !== 'ACCRUING') return;
  const due = chargeFor(durationMs);
  ledger.chars.reserved -= record.reserved;
  charge(ledger, due);
  record.reserved = due;
  record.settled = due;
  record.released = 0n;
  record.billableDurationMs = durationMs;
  record.state = 'SETTLED';
}

/** Realtime that failed (its recognizer did): nothing charged, the reservation released. */
export function releaseRealtime(ledger: Ledger, record: BillingRecord): void {
  if (record.state !== 'ACCRUING') return;
  ledger.chars.reserved -= record.reserved;
  record.released = record.reserved;
  record.state = 'RELEASED';
}

/** Spec "billing fields", every count and duration a decimal string. */
export function billingView(record: BillingRecord): Record<string, string> {
  return {
    state: record.state,
    planKey: record.planKey,
    rateVersion: RATE.rateVersion,
    ratePerMinute: dec(RATE.ratePerMinute),
    reservedCharacters: dec(record.reserved),
    settledCharacters: dec(record.settled),
    releasedCharacters: dec(record.released),
    billableCharacters: dec(record.settled),
    billableDurationMs: dec(record.billableDurationMs),
  };
}
