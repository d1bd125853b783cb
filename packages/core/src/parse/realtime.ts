import type { RealtimeConnection, RealtimeLine, RealtimeNotice, RealtimeSession, RealtimeUsage } from '../types/realtime.js';
import { parseDecimal } from '../util/decimal.js';
import { boolean, list, number, object, string, stringArray } from '../util/read.js';
import { parseTaskError } from './transcription.js';

/**
 * The usage block (spec "usage fields"), the one parser for both the REST session view and the socket's
 * usage.updated: every counter a decimal string and `accepting` a boolean, as the service always sends them.
 */
export function parseUsage(value: unknown, path: string): RealtimeUsage {
  const u = object(value, path);
  const count = (name: string): bigint => parseDecimal(u[name], `${path}.${name}`);
  return {
    estimatedCharacters: count('estimatedCharacters'),
    billableCharacters: count('billableCharacters'),
    elapsedMs: count('elapsedMs'),
    sentSamples: count('sentSamples'),
    receivedSamples: count('receivedSamples'),
    capturedSamples: count('capturedSamples'),
    accepting: boolean(u['accepting'], `${path}.accepting`),
  };
}

function parseNotice(value: unknown, path: string): RealtimeNotice {
  const n = object(value, path);
  return {
    code: string(n['code'], `${path}.code`),
    message: string(n['message'], `${path}.message`),
    ...(n['supplements'] !== undefined ? { supplements: stringArray(n['supplements'], `${path}.supplements`) } : {}),
    ...(n['lineIds'] !== undefined ? { lineIds: stringArray(n['lineIds'], `${path}.lineIds`) } : {}),
  };
}

function parseLine(value: unknown, path: string): RealtimeLine {
  const l = object(value, path);
  string(l['id'], `${path}.id`);
  string(l['text'], `${path}.text`);
  return l as unknown as RealtimeLine;
}

function parseConnection(value: unknown, path: string): RealtimeConnection {
  const c = object(value, path);
  const deadline = c['recoveryDeadline'];
  return {
    attached: boolean(c['attached'], `${path}.attached`),
    recoveryDeadline: deadline === null || deadline === undefined ? null : string(deadline, `${path}.recoveryDeadline`),
    recoveryExpired: boolean(c['recoveryExpired'], `${path}.recoveryExpired`),
  };
}

export function parseSession(value: unknown, path = 'data'): RealtimeSession {
  const s = object(value, path);
  return {
    sessionId: string(s['sessionId'], `${path}.sessionId`),
    transcriptionId: string(s['transcriptionId'], `${path}.transcriptionId`),
    ...(typeof s['modelId'] === 'string' ? { modelId: s['modelId'] } : {}),
    status: string(s['status'], `${path}.status`),
    epoch: number(s['epoch'], `${path}.epoch`),
    accepting: boolean(s['accepting'], `${path}.accepting`),
    partial: string(s['partial'], `${path}.partial`),
    lines: list(s['lines'], `${path}.lines`, parseLine),
    notices: list(s['notices'], `${path}.notices`, parseNotice),
    usage: parseUsage(s['usage'], `${path}.usage`),
    ...(s['connection'] !== undefined ? { connection: parseConnection(s['connection'], `${path}.connection`) } : {}),
    ...(s['error'] !== undefined && s['error'] !== null ? { error: parseTaskError(s['error'], `${path}.error`) } : {}),
  };
}
