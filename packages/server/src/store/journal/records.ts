import { TASK_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import type { BillingRecord, LedgerChars } from '../../domain/accounts/billing.js';
import type { LedgerRow, TaskRow, VoiceRow } from '../store.js';

/**
 * The journal's lines (docs/protocol.md "Local state"). Every line is one JSON object with a `type`;
 * counts that are bigints in memory are decimal strings. The first line is the header.
 *
 *   header          { format: "soundclone-state", version: 1 }
 *   account         { id, periodEndsAt, chars: { monthlyTotal, monthlyUsed, orderTotal, orderUsed, reserved } }
 *   voice           { voice: { id, ownerId, name, type, feature, channel, fileCount, totalFileSize }, savedDesignId? }
 *   design-saved    { designId }                      (compaction's form of a voice's savedDesignId)
 *   task            { task: { ...every field but cached downloads }, account? }   (account: the owner's ledger)
 *   covers-deleted  { accountId, ids }
 *   idempotency     { scope, key, bodyHash, taskId, requestId, sessionId? }   (a create's key; sessionId: a realtime session's)
 */
export const FORMAT = 'soundclone-state';
export const VERSION = 1;

type Chars = Record<keyof LedgerChars, string>;
export interface AccountRecord { readonly type: 'account'; readonly id: string; readonly periodEndsAt: number; readonly chars: Chars }
export interface VoiceRecord { readonly type: 'voice'; readonly voice: VoiceRow; readonly savedDesignId?: string }
export interface DesignSavedRecord { readonly type: 'design-saved'; readonly designId: string }
export interface TaskRecord { readonly type: 'task'; readonly task: StoredTask; readonly account?: AccountRecord }
export interface CoversDeletedRecord { readonly type: 'covers-deleted'; readonly accountId: string; readonly ids: readonly string[] }
export interface IdempotencyRecord { readonly type: 'idempotency'; readonly scope: string; readonly key: string; readonly bodyHash: string; readonly taskId: string; readonly requestId: string; readonly sessionId?: string }
export interface HeaderRecord { readonly type: 'header'; readonly format: string; readonly version: number }
export type StateRecord = HeaderRecord | AccountRecord | VoiceRecord | DesignSavedRecord | TaskRecord | CoversDeletedRecord | IdempotencyRecord;

/** A task as written: its fields as they are, its counts as decimal strings. */
type StoredTask = Readonly<Omit<TaskRow, 'audioDurationMs' | 'billing'>> & {
  readonly audioDurationMs: string;
  readonly billing: { readonly [K in keyof BillingRecord]: K extends 'state' | 'planKey' ? BillingRecord[K] : string };
};

export function header(): HeaderRecord {
  return { type: 'header', format: FORMAT, version: VERSION };
}

export function accountRecord(ledger: LedgerRow): AccountRecord {
  const c = ledger.chars;
  return {
    type: 'account', id: ledger.accountId, periodEndsAt: ledger.periodEndsAt,
    chars: { monthlyTotal: String(c.monthlyTotal), monthlyUsed: String(c.monthlyUsed), orderTotal: String(c.orderTotal), orderUsed: String(c.orderUsed), reserved: String(c.reserved) },
  };
}

export function accountFromRecord(r: AccountRecord): { periodEndsAt: number; chars: LedgerChars } {
  const c = r.chars;
  return {
    periodEndsAt: r.periodEndsAt,
    chars: { monthlyTotal: BigInt(c.monthlyTotal), monthlyUsed: BigInt(c.monthlyUsed), orderTotal: BigInt(c.orderTotal), orderUsed: BigInt(c.orderUsed), reserved: BigInt(c.reserved) },
  };
}

export function taskRecord(task: TaskRow, owner: LedgerRow | undefined): TaskRecord {
  const b = task.billing;
  const stored: StoredTask = {
    id: task.id, ownerId: task.ownerId, kind: task.kind, modelId: task.modelId, title: task.title, languageHint: task.languageHint,
    requestId: task.requestId, createdAt: task.createdAt, ...(task.options !== undefined ? { options: task.options } : {}),
    status: task.status, detectedLanguage: task.detectedLanguage, audioDurationMs: String(task.audioDurationMs), transcript: task.transcript,
    billing: { state: b.state, planKey: b.planKey, reserved: String(b.reserved), settled: String(b.settled), released: String(b.released), billableDurationMs: String(b.billableDurationMs) },
    ...(task.error !== undefined ? { error: task.error } : {}),
    updatedAt: task.updatedAt, completedAt: task.completedAt,
  };
  return owner === undefined ? { type: 'task', task: stored } : { type: 'task', task: stored, account: accountRecord(owner) };
}

/** Downloads are not kept: each format is rendered again from the transcript on first download. */
export function taskFromRecord(r: TaskRecord): TaskRow {
  const t = r.task;
  const b = t.billing;
  return {
    id: t.id, ownerId: t.ownerId, kind: t.kind, modelId: t.modelId, title: t.title, languageHint: t.languageHint, requestId: t.requestId,
    createdAt: t.createdAt, ...(t.options !== undefined ? { options: t.options } : {}), status: t.status, detectedLanguage: t.detectedLanguage,
    audioDurationMs: BigInt(t.audioDurationMs), transcript: t.transcript,
    billing: { state: b.state, planKey: b.planKey, reserved: BigInt(b.reserved), settled: BigInt(b.settled), released: BigInt(b.released), billableDurationMs: BigInt(b.billableDurationMs) },
    ...(t.error !== undefined ? { error: t.error } : {}),
    updatedAt: t.updatedAt, completedAt: t.completedAt,
  };
}

/** Throws an Error saying what is wrong when `value` is not a StateRecord (the journal adds file and line). */
export function checkRecord(value: unknown): asserts value is StateRecord {
  const r = object(value, 'the line');
  switch (r['type']) {
    case 'header':
      if (r['format'] !== FORMAT) throw new Error(`not a ${FORMAT} journal (format ${JSON.stringify(r['format'])})`);
      if (r['version'] !== VERSION) throw new Error(`journal version ${JSON.stringify(r['version'])}; this server reads version ${VERSION}`);
      return;
    case 'account':
      return checkAccount(r, 'account');
    case 'voice': {
      const v = object(r['voice'], 'voice');
      for (const f of ['id', 'name', 'type', 'feature', 'channel']) str(v, f, 'voice');
      for (const f of ['fileCount', 'totalFileSize']) num(v, f, 'voice');
      if (!/^[0-9]{1,19}$/.test(v['id'] as string)) throw new Error('voice.id must be a decimal id');
      if (v['ownerId'] !== null && typeof v['ownerId'] !== 'string') throw new Error('voice.ownerId must be a string or null');
      if (r['savedDesignId'] !== undefined) str(r, 'savedDesignId', 'voice record');
      return;
    }
    case 'design-saved':
      str(r, 'designId', 'design-saved');
      return;
    case 'idempotency':
      for (const f of ['scope', 'key', 'bodyHash', 'taskId', 'requestId']) str(r, f, 'idempotency');
      // Optional: a field an older server ignores, so the journal version stays 1.
      if (r['sessionId'] !== undefined) str(r, 'sessionId', 'idempotency');
      return;
    case 'covers-deleted':
      str(r, 'accountId', 'covers-deleted');
      if (!Array.isArray(r['ids']) || !r['ids'].every((id) => typeof id === 'string')) throw new Error('covers-deleted.ids must be an array of strings');
      return;
    case 'task': {
      const t = object(r['task'], 'task');
      for (const f of ['id', 'ownerId', 'modelId', 'title', 'languageHint', 'requestId']) str(t, f, 'task');
      for (const f of ['createdAt', 'updatedAt']) num(t, f, 'task');
      if (t['kind'] !== 'batch' && t['kind'] !== 'realtime') throw new Error('task.kind must be batch or realtime');
      if (!(TASK_STATUSES as readonly unknown[]).includes(t['status'])) throw new Error(`task.status ${JSON.stringify(t['status'])} is not a status`);
      decimal(t, 'audioDurationMs', 'task');
      const b = object(t['billing'], 'task.billing');
      for (const f of ['reserved', 'settled', 'released', 'billableDurationMs']) decimal(b, f, 'task.billing');
      if (t['transcript'] !== null) object(t['transcript'], 'task.transcript');
      if (r['account'] !== undefined) checkAccount(object(r['account'], 'task.account'), 'task.account');
      return;
    }
    default:
      throw new Error(`unknown record type ${JSON.stringify(r['type'])}`);
  }
}

function checkAccount(r: Record<string, unknown>, where: string): void {
  str(r, 'id', where);
  num(r, 'periodEndsAt', where);
  const c = object(r['chars'], `${where}.chars`);
  for (const f of ['monthlyTotal', 'monthlyUsed', 'orderTotal', 'orderUsed', 'reserved']) decimal(c, f, `${where}.chars`, true);
}

function object(value: unknown, where: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error(`${where} must be a JSON object`);
  return value as Record<string, unknown>;
}

function str(r: Record<string, unknown>, field: string, where: string): void {
  if (typeof r[field] !== 'string') throw new Error(`${where}.${field} must be a string`);
}

function num(r: Record<string, unknown>, field: string, where: string): void {
  if (typeof r[field] !== 'number' || !Number.isFinite(r[field])) throw new Error(`${where}.${field} must be a number`);
}

function decimal(r: Record<string, unknown>, field: string, where: string, signed = false): void {
  if (typeof r[field] !== 'string' || !(signed ? /^-?[0-9]+$/ : /^[0-9]+$/).test(r[field])) throw new Error(`${where}.${field} must be a decimal string`);
}
