import { CLIENT_MESSAGES, type ClientMessageType, type ServerMessageType, type SocketErrorCode } from '@soundclone/core/internal';
import type { Violation } from '../../errors.js';
import type { Line, SessionNotice, SupplementKind } from '../session/audio.js';
import { lineView } from '../session/view.js';
import { jsonTooDeep } from '../../util/json-depth.js';

/**
 * JSON messages of the realtime socket (docs/protocol.md "Realtime socket"). The server side builds
 * them here so every shape is in one place; the client mirrors the union in its own protocol module.
 */
export type ServerMessage = { readonly type: ServerMessageType } & Record<string, unknown>;

export interface SocketErrorMessage {
  readonly type: 'error';
  readonly code: SocketErrorCode;
  readonly message: string;
  readonly fatal: boolean;
  readonly details?: Record<string, unknown>;
}

export function errorMessage(code: SocketErrorCode, message: string, details?: Record<string, unknown>, fatal = false): SocketErrorMessage {
  return { type: 'error', code, message, fatal, ...(details !== undefined ? { details } : {}) };
}

/** transcript.line: the spec line fields plus ours (epoch, times, which supplements will follow). */
export function lineMessage(line: Line): ServerMessage {
  return {
    type: 'transcript.line',
    line: { ...lineView(line), epoch: line.epoch, startMs: line.startMs, endMs: line.endMs, pendingSupplements: [...line.pending].sort() },
  };
}

/** One event per supplement and line; an entities result with no entities is `entities: []`. */
export function supplementMessage(line: Line, kind: SupplementKind): ServerMessage {
  switch (kind) {
    case 'alignment':
      return { type: 'transcript.alignment', lineId: line.id, words: line.words, characterAlignments: line.characterAlignments };
    case 'entities':
      return { type: 'transcript.entities', lineId: line.id, entities: line.entities };
    case 'revision':
      return { type: 'transcript.revision', lineId: line.id, revisedText: line.revisedText };
    case 'language':
      return { type: 'transcript.language', lineId: line.id, languageCode: line.languageCode, languageProbability: line.languageProbability };
  }
}

export function noticeMessage(notice: SessionNotice): ServerMessage {
  return { type: 'session.notice', notice };
}

/** A parsed client text frame. `unknown` types are ignored (debug event), never an error. */
export type ClientMessage =
  | { readonly kind: 'known'; readonly type: ClientMessageType; readonly body: Record<string, unknown> }
  | { readonly kind: 'unknown'; readonly type: string }
  | { readonly kind: 'invalid'; readonly reason: string };

export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  if (jsonTooDeep(text)) return { kind: 'invalid', reason: 'nested too deep' };
  try {
    value = JSON.parse(text);
  } catch {
    return { kind: 'invalid', reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'invalid', reason: 'not a JSON object' };
  const body = value as Record<string, unknown>;
  const type = body['type'];
  if (typeof type !== 'string') return { kind: 'invalid', reason: 'no string "type"' };
  if (!(CLIENT_MESSAGES as readonly string[]).includes(type)) return { kind: 'unknown', type };
  return { kind: 'known', type: type as ClientMessageType, body };
}

/** session.resume `{ epoch }`: the epoch the client is leaving (a positive integer). */
export function resumeEpoch(body: Record<string, unknown>): number | Violation {
  const epoch = body['epoch'];
  if (typeof epoch !== 'number' || !Number.isSafeInteger(epoch) || epoch < 1) return { field: 'epoch', rule: 'is required: the epoch being left, a positive integer' };
  return epoch;
}
