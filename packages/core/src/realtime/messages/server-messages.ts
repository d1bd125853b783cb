import { SERVER_MESSAGES, type ServerMessageType, type SocketErrorCode } from '../../protocol.js';
import type { RealtimeLine, RealtimeNotice, RealtimeSession, RealtimeUsage } from '../../types/realtime.js';
import { parseSession, parseUsage } from '../../parse/realtime.js';
import { parseDecimal } from '../../util/decimal.js';

/**
 * The server -> client JSON messages (docs/protocol.md "Realtime socket"), as one discriminated union.
 * The session's event map is derived from it with Extract<ServerMessage, { type: K }>, so adding a
 * message here types its event. Counters arrive as decimal strings and are bigint here; sample
 * positions that index the client's ring are also given as numbers (they stay below 2^53).
 */

/** A committed line as the socket sends it: the spec line fields (RealtimeLine) plus ours. */
export interface WireLine extends RealtimeLine {
  readonly epoch?: number;
  readonly startMs?: number;
  readonly endMs?: number;
  /** Supplements still to come for this line (alignment, entities, revision, language). */
  readonly pendingSupplements?: readonly string[];
}

export interface SessionReadyMessage {
  readonly type: 'session.ready';
  readonly connectionId: string;
  readonly sessionId: string;
  readonly transcriptionId: string;
  readonly status: string;
  readonly epoch: number;
  readonly accepting: boolean;
  readonly awaitingResume: boolean;
  readonly receivedSamples: number;
  readonly capturedSamples: number;
  readonly recoveryWindowMs: number | undefined;
  readonly heartbeatIntervalMs: number | undefined;
  readonly heartbeatTimeoutMs: number | undefined;
  readonly maxFrameSamples: number | undefined;
  /** How long the server lets this socket live (socket.recycle comes before the end); undefined: no limit. */
  readonly socketLifetimeMs: number | undefined;
  /** What the server supports beyond the base protocol (SOCKET_FEATURES); empty on a server that lists nothing. */
  readonly features: readonly string[];
  readonly session: RealtimeSession | undefined;
}

export interface AudioAckMessage { readonly type: 'audio.ack'; readonly epoch: number; readonly receivedSamples: number }
export interface PartialMessage { readonly type: 'transcript.partial'; readonly epoch: number; readonly text: string }
export interface LineMessage { readonly type: 'transcript.line'; readonly line: WireLine }
export interface AlignmentMessage {
  readonly type: 'transcript.alignment';
  readonly lineId: string;
  readonly words: WireLine['words'];
  readonly characterAlignments: WireLine['characterAlignments'];
}
export interface EntitiesMessage { readonly type: 'transcript.entities'; readonly lineId: string; readonly entities: WireLine['entities'] }
export interface RevisionMessage { readonly type: 'transcript.revision'; readonly lineId: string; readonly revisedText: string | null }
export interface LanguageMessage {
  readonly type: 'transcript.language';
  readonly lineId: string;
  readonly languageCode: string | null;
  readonly languageProbability: number | null;
}
/** `usage` is undefined when malformed: the rotate instruction must still be followed. */
export interface UsageUpdatedMessage { readonly type: 'usage.updated'; readonly rotate: boolean; readonly epoch: number; readonly usage: RealtimeUsage | undefined }
export interface NoticeMessage { readonly type: 'session.notice'; readonly notice: RealtimeNotice }
export interface PausedMessage { readonly type: 'session.paused'; readonly epoch: number; readonly receivedSamples: number; readonly capturedSamples: number }
export interface ResumedMessage { readonly type: 'session.resumed'; readonly epoch: number; readonly receivedSamples: number }
export interface FinishedMessage { readonly type: 'session.finished'; readonly session: RealtimeSession }
export interface SocketErrorMessage {
  readonly type: 'error';
  readonly code: SocketErrorCode | (string & {});
  readonly message: string;
  readonly fatal: boolean;
  readonly details?: Readonly<Record<string, unknown>>;
}
export interface PingMessage { readonly type: 'ping'; readonly id: unknown }
export interface PongMessage { readonly type: 'pong'; readonly id: unknown }
/** The server will close this socket with 4002 SOCKET_RECYCLED in `closeInMs` (its socket lifetime limit). */
export interface SocketRecycleMessage { readonly type: 'socket.recycle'; readonly closeInMs: number }

export type ServerMessage =
  | SessionReadyMessage | AudioAckMessage | PartialMessage | LineMessage | AlignmentMessage | EntitiesMessage | RevisionMessage
  | LanguageMessage | UsageUpdatedMessage | NoticeMessage | PausedMessage | ResumedMessage | FinishedMessage | SocketErrorMessage
  | PingMessage | PongMessage | SocketRecycleMessage;

/** Compile-time check that the union covers exactly protocol.ts SERVER_MESSAGES. */
type Covers = [ServerMessageType] extends [ServerMessage['type']] ? ([ServerMessage['type']] extends [ServerMessageType] ? true : never) : never;
const covers: Covers = true;
void covers;

export type ParsedServerMessage =
  | { readonly kind: 'message'; readonly message: ServerMessage }
  | { readonly kind: 'unknown'; readonly type: string }
  | { readonly kind: 'invalid'; readonly reason: string };

type Json = Record<string, unknown>;

const KNOWN = new Set<string>(SERVER_MESSAGES);

function position(value: unknown): number {
  // Decimal string on the wire; the client's ring positions are numbers (< 2^53 by protocol).
  return Number(parseDecimal(value, 'receivedSamples'));
}

function int(value: unknown, fallback = 0): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : fallback;
}

function optionalInt(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function list(value: unknown): ReadonlyArray<Readonly<Record<string, unknown>>> {
  return Array.isArray(value) ? (value as Array<Readonly<Record<string, unknown>>>) : [];
}

function lenient<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch {
    return undefined;
  }
}

function parseLine(value: unknown): WireLine {
  const l = (typeof value === 'object' && value !== null ? value : {}) as Json;
  if (typeof l['id'] !== 'string') throw new TypeError('line.id is not a string');
  return {
    ...(l as object),
    id: l['id'],
    text: text(l['text']),
    revisedText: typeof l['revisedText'] === 'string' ? l['revisedText'] : null,
    languageCode: typeof l['languageCode'] === 'string' ? l['languageCode'] : null,
    languageProbability: typeof l['languageProbability'] === 'number' ? l['languageProbability'] : null,
    entities: list(l['entities']),
    words: list(l['words']),
    characterAlignments: list(l['characterAlignments']),
    ...(Array.isArray(l['pendingSupplements']) ? { pendingSupplements: (l['pendingSupplements'] as unknown[]).filter((k): k is string => typeof k === 'string') } : {}),
  };
}

/** Turns one text frame into a typed message. Never throws: garbage is `invalid`, new types are `unknown`. */
export function parseServerMessage(raw: string): ParsedServerMessage {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { kind: 'invalid', reason: 'not JSON' };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { kind: 'invalid', reason: 'not a JSON object' };
  const m = value as Json;
  const type = m['type'];
  if (typeof type !== 'string') return { kind: 'invalid', reason: 'no string "type"' };
  if (!KNOWN.has(type)) return { kind: 'unknown', type };
  try {
    return { kind: 'message', message: build(type as ServerMessageType, m) };
  } catch (caught) {
    return { kind: 'invalid', reason: `${type}: ${caught instanceof Error ? caught.message : String(caught)}` };
  }
}

/** The `debug` event's payload for a message the session ignores: a type a newer server sends, or garbage. */
export function ignoredMessage(parsed: Exclude<ParsedServerMessage, { kind: 'message' }>): { readonly kind: string; readonly detail: Readonly<Record<string, unknown>> } {
  return parsed.kind === 'unknown' ? { kind: 'unknown-message', detail: { type: parsed.type } } : { kind: 'invalid-message', detail: { reason: parsed.reason } };
}

function build(type: ServerMessageType, m: Json): ServerMessage {
  switch (type) {
    case 'session.ready':
      return {
        type,
        connectionId: text(m['connectionId']),
        sessionId: text(m['sessionId']),
        transcriptionId: text(m['transcriptionId']),
        status: text(m['status']),
        epoch: int(m['epoch'], 1),
        accepting: m['accepting'] === true,
        awaitingResume: m['awaitingResume'] === true,
        receivedSamples: position(m['receivedSamples']),
        capturedSamples: position(m['capturedSamples'] ?? '0'),
        recoveryWindowMs: optionalInt(m['recoveryWindowMs']),
        heartbeatIntervalMs: optionalInt(m['heartbeatIntervalMs']),
        heartbeatTimeoutMs: optionalInt(m['heartbeatTimeoutMs']),
        maxFrameSamples: optionalInt(m['maxFrameSamples']),
        socketLifetimeMs: optionalInt(m['socketLifetimeMs']),
        features: Array.isArray(m['features']) ? m['features'].filter((f): f is string => typeof f === 'string') : [],
        session: m['session'] !== undefined ? parseSession(m['session'], 'session') : undefined,
      };
    case 'audio.ack':
      return { type, epoch: int(m['epoch']), receivedSamples: position(m['receivedSamples']) };
    case 'transcript.partial':
      return { type, epoch: int(m['epoch']), text: text(m['text']) };
    case 'transcript.line':
      return { type, line: parseLine(m['line']) };
    case 'transcript.alignment':
      return { type, lineId: text(m['lineId']), words: list(m['words']), characterAlignments: list(m['characterAlignments']) };
    case 'transcript.entities':
      return { type, lineId: text(m['lineId']), entities: list(m['entities']) };
    case 'transcript.revision':
      return { type, lineId: text(m['lineId']), revisedText: typeof m['revisedText'] === 'string' ? m['revisedText'] : null };
    case 'transcript.language':
      return {
        type,
        lineId: text(m['lineId']),
        languageCode: typeof m['languageCode'] === 'string' ? m['languageCode'] : null,
        languageProbability: typeof m['languageProbability'] === 'number' ? m['languageProbability'] : null,
      };
    case 'usage.updated':
      return { type, rotate: m['rotate'] === true, epoch: int(m['epoch']), usage: lenient(() => parseUsage(m['usage'], 'usage')) };
    case 'session.notice': {
      const n = (m['notice'] ?? {}) as Json;
      const notice: RealtimeNotice = {
        code: text(n['code']),
        message: text(n['message']),
        ...(Array.isArray(n['supplements']) ? { supplements: n['supplements'] as string[] } : {}),
        ...(Array.isArray(n['lineIds']) ? { lineIds: n['lineIds'] as string[] } : {}),
        ...(typeof n['receivedSamples'] === 'string' ? { receivedSamples: n['receivedSamples'] } : {}),
      };
      return { type, notice };
    }
    case 'session.paused':
      return { type, epoch: int(m['epoch']), receivedSamples: position(m['receivedSamples']), capturedSamples: position(m['capturedSamples'] ?? '0') };
    case 'session.resumed':
      return { type, epoch: int(m['epoch']), receivedSamples: position(m['receivedSamples']) };
    case 'session.finished':
      return { type, session: parseSession(m['session'], 'session') };
    case 'error':
      return {
        type,
        code: text(m['code']),
        message: text(m['message']),
        fatal: m['fatal'] === true,
        ...(typeof m['details'] === 'object' && m['details'] !== null ? { details: m['details'] as Json } : {}),
      };
    case 'ping':
    case 'pong':
      return { type, id: m['id'] };
    case 'socket.recycle':
      return { type, closeInMs: Math.max(0, int(m['closeInMs'])) };
  }
}
