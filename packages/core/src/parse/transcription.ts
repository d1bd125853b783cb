import type { Billing, HistoryItem, HistoryPage, TaskError, Transcript, TranscriptionTask } from '../types/transcription.js';
import { parseDecimal } from '../util/decimal.js';
import { boolean, list, nullableString, number, object, string, type Json } from '../util/read.js';

/**
 * Response parsers for tasks and History (spec "Transcription task", "billing fields", "History list
 * item"). Decimal strings become bigint; a malformed one names its path (MALFORMED_DECIMAL).
 * Element structures the spec leaves open (transcript contents) are checked only for being objects.
 */
export function parseBilling(value: unknown, path: string): Billing {
  const b = object(value, path);
  return {
    state: string(b['state'], `${path}.state`),
    planKey: string(b['planKey'], `${path}.planKey`),
    rateVersion: string(b['rateVersion'], `${path}.rateVersion`),
    ratePerMinute: parseDecimal(b['ratePerMinute'], `${path}.ratePerMinute`),
    reservedCharacters: parseDecimal(b['reservedCharacters'], `${path}.reservedCharacters`),
    settledCharacters: parseDecimal(b['settledCharacters'], `${path}.settledCharacters`),
    releasedCharacters: parseDecimal(b['releasedCharacters'], `${path}.releasedCharacters`),
    billableCharacters: parseDecimal(b['billableCharacters'], `${path}.billableCharacters`),
    billableDurationMs: parseDecimal(b['billableDurationMs'], `${path}.billableDurationMs`),
  };
}

export function parseTaskError(value: unknown, path: string): TaskError {
  const e = object(value, path);
  return {
    errorCode: string(e['errorCode'], `${path}.errorCode`),
    message: string(e['message'], `${path}.message`),
    retryable: boolean(e['retryable'], `${path}.retryable`),
    action: string(e['action'], `${path}.action`),
    requestId: string(e['requestId'], `${path}.requestId`),
  };
}

function parseTranscript(value: unknown, path: string): Transcript | null {
  if (value === null) return null;
  const t = object(value, path);
  string(t['text'], `${path}.text`);
  list(t['segments'], `${path}.segments`, object);
  return t as unknown as Transcript;
}

export function parseTask(value: unknown, path = 'data'): TranscriptionTask {
  const t = object(value, path);
  const task: TranscriptionTask = {
    transcriptionId: string(t['transcriptionId'], `${path}.transcriptionId`),
    status: string(t['status'], `${path}.status`),
    modelId: string(t['modelId'], `${path}.modelId`),
    ...(typeof t['title'] === 'string' ? { title: t['title'] } : {}),
    languageHint: string(t['languageHint'], `${path}.languageHint`),
    detectedLanguage: nullableString(t['detectedLanguage'], `${path}.detectedLanguage`),
    audioDurationMs: parseDecimal(t['audioDurationMs'], `${path}.audioDurationMs`),
    transcript: parseTranscript(t['transcript'] ?? null, `${path}.transcript`),
    billing: parseBilling(t['billing'], `${path}.billing`),
    ...(t['error'] !== undefined && t['error'] !== null ? { error: parseTaskError(t['error'], `${path}.error`) } : {}),
    ...('clientMetadata' in t ? { clientMetadata: t['clientMetadata'] } : {}),
    ...(t['timestamps'] !== undefined ? { timestamps: object(t['timestamps'], `${path}.timestamps`) as TranscriptionTask['timestamps'] & Json } : {}),
  };
  return task;
}

export function parseHistoryItem(value: unknown, path: string): HistoryItem {
  const h = object(value, path);
  return {
    transcriptionId: string(h['transcriptionId'], `${path}.transcriptionId`),
    modelId: string(h['modelId'], `${path}.modelId`),
    title: string(h['title'], `${path}.title`),
    status: string(h['status'], `${path}.status`),
    audioDurationMs: parseDecimal(h['audioDurationMs'], `${path}.audioDurationMs`),
    detectedLanguage: nullableString(h['detectedLanguage'], `${path}.detectedLanguage`),
    characters: parseDecimal(h['characters'], `${path}.characters`),
    timestamps: (h['timestamps'] === undefined ? {} : object(h['timestamps'], `${path}.timestamps`)) as HistoryItem['timestamps'],
  };
}

export function parseHistoryPage(value: unknown, path = 'data'): HistoryPage {
  const p = object(value, path);
  return {
    page: number(p['page'], `${path}.page`),
    pageSize: number(p['pageSize'], `${path}.pageSize`),
    total: number(p['total'], `${path}.total`),
    totalPage: number(p['totalPage'], `${path}.totalPage`),
    items: list(p['items'], `${path}.items`, parseHistoryItem),
  };
}
