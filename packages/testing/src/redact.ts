import type { RequestLogEntry, SocketLogEntry } from '@soundclone/server';

export const REDACTED = '[redacted]';

/** Socket tokens the service hands out (rtt_…), wherever they appear in a string. */
const TOKEN = /rtt_[A-Za-z0-9._~-]+/g;

/**
 * A copy of `value` with every secret replaced by REDACTED: the access keys given, and socket tokens.
 * Strings, arrays and plain objects are walked; other values are kept.
 */
export function redact<T>(value: T, secrets: readonly string[]): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') {
      let out = v.replace(TOKEN, REDACTED);
      for (const secret of secrets) if (secret !== '') out = out.split(secret).join(REDACTED);
      return out;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v !== null && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]));
    }
    return v;
  };
  return walk(value) as T;
}

export type LoggedRequest = RequestLogEntry;
export type LoggedSocketEvent = SocketLogEntry;
