import { TERMINAL_STATUSES, type TaskStatus } from '@soundclone/core/internal';
import type { BillingRecord } from '../../domain/accounts/billing.js';
import type { DeliveryAttempt, DeliveryOutcome, DeliveryRow, IdempotencyRow, LedgerRow, TaskRow, UploadRow, VoiceRow } from '../store.js';

/**
 * SQL rows <-> the store's rows (migrations/0001_initial.sql). The pool parses int8 as bigint
 * (connection.ts); times are kept as milliseconds and read back as numbers.
 */
export interface AccountSql {
  readonly id: string;
  readonly plan_key: string;
  readonly period_ends_at: bigint;
  readonly monthly_total: bigint;
  readonly monthly_used: bigint;
  readonly order_total: bigint;
  readonly order_used: bigint;
  readonly reserved: bigint;
}

export interface VoiceSql {
  readonly id: bigint;
  readonly owner_id: string | null;
  readonly name: string;
  readonly type: VoiceRow['type'];
  readonly feature: VoiceRow['feature'];
  readonly channel: VoiceRow['channel'];
  readonly file_count: number;
  readonly total_file_size: bigint;
}

export interface TaskSql {
  readonly id: string;
  readonly owner_id: string;
  readonly kind: TaskRow['kind'];
  readonly model_id: string;
  readonly title: string;
  readonly language_hint: string;
  readonly request_id: string;
  readonly options: TaskRow['options'] | null;
  readonly status: TaskStatus;
  readonly detected_language: string | null;
  readonly audio_duration_ms: bigint;
  readonly transcript: TaskRow['transcript'];
  readonly error: TaskRow['error'] | null;
  readonly billing_state: BillingRecord['state'];
  readonly plan_key: string;
  readonly reserved: bigint;
  readonly settled: bigint;
  readonly released: bigint;
  readonly billable_duration_ms: bigint;
  readonly created_at: bigint;
  readonly updated_at: bigint;
  readonly completed_at: bigint | null;
  readonly source: TaskRow['source'] | null;
}

export interface IdempotencySql {
  readonly scope: string;
  readonly key: string;
  readonly body_hash: string;
  readonly task_id: string;
  readonly request_id: string;
  /** The realtime session the key's create made (IDEMPOTENCY_SELECT joins it); null for a transcription's key. */
  readonly session_id: string | null;
}

/**
 * A kept key with the realtime session its create made: the session row names the task (task_id is
 * unique there), so the key table needs no column of its own. `$1` scope, `$2` key.
 */
export const IDEMPOTENCY_SELECT =
  'SELECT k.scope, k.key, k.body_hash, k.task_id, k.request_id, s.id AS session_id ' +
  'FROM idempotency_key k LEFT JOIN realtime_session s ON s.task_id = k.task_id WHERE k.scope = $1 AND k.key = $2';

export const TASK_COLUMNS =
  'id, owner_id, kind, model_id, title, language_hint, request_id, options, status, detected_language, audio_duration_ms, transcript, error, ' +
  'billing_state, plan_key, reserved, settled, released, billable_duration_ms, created_at, updated_at, completed_at, source';

/** How many columns TASK_COLUMNS names (taskParams gives as many). */
export const TASK_COLUMN_COUNT = 23;

export function ledgerFrom(r: AccountSql): LedgerRow {
  return {
    accountId: r.id,
    planKey: r.plan_key,
    periodEndsAt: Number(r.period_ends_at),
    chars: { monthlyTotal: r.monthly_total, monthlyUsed: r.monthly_used, orderTotal: r.order_total, orderUsed: r.order_used, reserved: r.reserved },
  };
}

export function voiceFrom(r: VoiceSql): VoiceRow {
  return {
    id: String(r.id), ownerId: r.owner_id, name: r.name, type: r.type, feature: r.feature, channel: r.channel,
    fileCount: r.file_count, totalFileSize: Number(r.total_file_size),
  };
}

export function taskFrom(r: TaskSql): TaskRow {
  return {
    id: r.id, ownerId: r.owner_id, kind: r.kind, modelId: r.model_id, title: r.title, languageHint: r.language_hint, requestId: r.request_id,
    createdAt: Number(r.created_at), ...(r.options !== null && r.options !== undefined ? { options: r.options } : {}),
    status: r.status, detectedLanguage: r.detected_language, audioDurationMs: r.audio_duration_ms, transcript: r.transcript,
    billing: { state: r.billing_state, planKey: r.plan_key, reserved: r.reserved, settled: r.settled, released: r.released, billableDurationMs: r.billable_duration_ms },
    ...(r.error !== null && r.error !== undefined ? { error: r.error } : {}),
    updatedAt: Number(r.updated_at), completedAt: r.completed_at === null ? null : Number(r.completed_at),
    ...(r.source !== null && r.source !== undefined ? { source: r.source } : {}),
  };
}

/** The task's columns as query parameters $1..$23, in TASK_COLUMNS order (bigints as decimal strings). */
export function taskParams(t: TaskRow): unknown[] {
  const b = t.billing;
  return [
    t.id, t.ownerId, t.kind, t.modelId, t.title, t.languageHint, t.requestId,
    t.options === undefined ? null : JSON.stringify(t.options), t.status, t.detectedLanguage, String(t.audioDurationMs),
    t.transcript === null ? null : JSON.stringify(t.transcript), t.error === undefined ? null : JSON.stringify(t.error),
    b.state, b.planKey, String(b.reserved), String(b.settled), String(b.released), String(b.billableDurationMs),
    String(t.createdAt), String(t.updatedAt), t.completedAt === null ? null : String(t.completedAt),
    t.source === undefined ? null : JSON.stringify(t.source),
  ];
}

export function idempotencyFrom(r: IdempotencySql): IdempotencyRow {
  return { scope: r.scope, key: r.key, bodyHash: r.body_hash, taskId: r.task_id, requestId: r.request_id, ...(r.session_id !== null ? { sessionId: r.session_id } : {}) };
}

export interface UploadSql {
  readonly id: string;
  readonly owner_id: string;
  readonly filename: string;
  readonly content_type: string;
  readonly size_bytes: bigint;
  readonly created_at: bigint;
}

export function uploadFrom(r: UploadSql): UploadRow {
  return { id: r.id, ownerId: r.owner_id, filename: r.filename, contentType: r.content_type, sizeBytes: Number(r.size_bytes), createdAt: Number(r.created_at) };
}

export interface DeliverySql {
  readonly event_id: string;
  readonly task_id: string;
  readonly url: string;
  readonly created_at: bigint;
  readonly attempts: DeliveryAttempt[];
  readonly outcome: DeliveryOutcome;
  readonly seq: bigint;
}

export function deliveryFrom(r: DeliverySql): DeliveryRow {
  return { eventId: r.event_id, taskId: r.task_id, url: r.url, createdAt: Number(r.created_at), attempts: r.attempts, outcome: r.outcome };
}

/** The terminal statuses as an SQL list, for `status NOT IN (...)`. */
export const TERMINAL_SQL = (TERMINAL_STATUSES as readonly string[]).map((s) => `'${s}'`).join(', ');
