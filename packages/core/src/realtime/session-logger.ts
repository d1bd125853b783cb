import type { GuardedEmitter } from './plumbing/guarded-emitter.js';
import type { RealtimeSessionEvents } from './session-events.js';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** One structured record: what happened (`event`), to which session, and its facts. Secrets are redacted. */
export interface LogRecord {
  readonly level: LogLevel;
  readonly event: string;
  readonly sessionId: string;
  readonly [field: string]: unknown;
}

/** A method per level: `(message, record)`, as `console` and the client's `logger` option take them. */
export type LogMethod = (message: string, record: LogRecord) => void;

/**
 * Where a session's records go: an object with a method per level, each called with a message
 * ("soundclone: reconnecting") and the record (`console` fits, as does the client's `logger`; missing
 * levels are skipped), or one function taking every record.
 */
export type SessionLogger = ((record: LogRecord) => void) | { readonly debug?: LogMethod; readonly info?: LogMethod; readonly warn?: LogMethod; readonly error?: LogMethod };

/** Field, header and query names whose values are never logged. */
const SECRET_NAME = /key|token|authorization|secret|password|cookie/i;
const REDACTED = '[redacted]';

/**
 * A copy of `value` safe to log: fields named like a secret are replaced, query parameters named like
 * one are replaced inside URLs, and any string containing one of `secrets` (the session's own API key
 * and token) has it replaced, wherever it appears.
 */
export function redact(value: unknown, secrets: readonly string[] = [], depth = 0): unknown {
  if (typeof value === 'string') return redactString(value, secrets);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (Array.isArray(value)) return value.map((v) => redact(v, secrets, depth + 1));
  if (value instanceof Error) return { name: value.name, message: redactString(value.message, secrets), ...('code' in value ? { code: value.code } : {}) };
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[k] = SECRET_NAME.test(k) && v !== undefined && v !== null ? REDACTED : redact(v, secrets, depth + 1);
  return out;
}

function redactString(text: string, secrets: readonly string[]): string {
  let out = text.replace(/([?&])([^=&#\s]+)=([^&#\s]*)/g, (whole, sep: string, name: string) => (SECRET_NAME.test(name) ? `${sep}${name}=${REDACTED}` : whole));
  for (const secret of secrets) if (secret.length >= 4) out = out.split(secret).join(REDACTED);
  return out;
}

/** The session as the logger hears it: its public events, nothing more. */
type Loggable = GuardedEmitter<RealtimeSessionEvents> & { readonly sessionId: string };

/** Writes one record (redacted) to the session's logger: for what no public event tells, such as the address dialled. */
export type LogWrite = (level: LogLevel, event: string, fields?: Record<string, unknown>) => void;

/**
 * Sends what happens to a session (connects, state changes, losses, reconnects, health changes, gaps)
 * to `logger`, each record redacted. Listens to the public events; a throwing logger is reported like
 * any throwing listener (`debug` listener-error). Returns the writer for the session's own records.
 */
export function logSession(session: Loggable, logger: SessionLogger, context: { readonly socketUrl: string; readonly auth: 'accessKey' | 'token'; readonly secrets: readonly string[] }): LogWrite {
  const write = (level: LogLevel, event: string, fields: Record<string, unknown> = {}): void => {
    const record = { ...(redact(fields, context.secrets) as Record<string, unknown>), level, event, sessionId: session.sessionId };
    if (typeof logger === 'function') logger(record);
    else logger[level]?.(`soundclone: ${event}`, record);
  };
  session.on('state', (c) => {
    if (c.to === 'connecting') write('info', 'connect', { url: context.socketUrl, auth: context.auth, reason: c.reason });
    write(c.to === 'failed' ? 'error' : 'info', 'state', { from: c.from, to: c.to, reason: c.reason });
  });
  session.on('reconnecting', (i) => write('warn', 'reconnecting', { attempt: i.attempt, delayMs: i.delayMs, reason: i.reason, closeCode: i.closeCode, error: i.error }));
  session.on('reconnected', (i) => write('info', 'reconnected', { ...i }));
  session.on('rotated', (i) => write('debug', 'rotated', { ...i }));
  session.on('gap', (g) => write('warn', 'gap', { ...g }));
  session.on('recovery.expired', (i) => write('warn', 'recovery.expired', { ...i }));
  session.on('debug', (d) => write('debug', d.kind, { detail: d.detail }));
  session.on('health', (h) => {
    if (h.kind === 'interval') return; // the periodic snapshot is for metrics, not the log
    write(h.state === 'degraded' ? 'warn' : 'info', 'health', { kind: h.kind, state: h.state, reason: h.reason, unackedMs: h.unackedMs, bufferedMs: h.bufferedMs, lastReconnect: h.lastReconnect });
  });
  return write;
}
