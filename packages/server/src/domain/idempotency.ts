import { createHash } from 'node:crypto';
import { ApiError } from '../errors.js';
import { LIMITS } from '@soundclone/core/internal';

/**
 * Idempotency-Key handling for creates (spec "POST /stt/transcriptions" Idempotency; ours for realtime
 * session creation). Scoped per account and endpoint. The record binds the key to a hash of the body
 * (canonical JSON: keys sorted) and to the outcome's promise, so:
 *   same key, same body, done      -> the same result (replayed)
 *   same key, same body, in flight -> waits for the same outcome (concurrent creates: one task)
 *   same key, other body           -> IDEMPOTENCY_CONFLICT (409)
 * A create that failed does not keep the key: the record is dropped and a retry runs again.
 */
interface Entry<T> {
  readonly bodyHash: string;
  readonly outcome: Promise<T>;
}

export class IdempotencyStore<T> {
  private readonly entries = new Map<string, Entry<T>>();

  /** Kept state: a create that succeeded in an earlier run replays as it did then. */
  restore(scope: string, key: string, bodyHash: string, value: T): void {
    this.entries.set(`${scope}\n${key}`, { bodyHash, outcome: Promise.resolve(value) });
  }

  /**
   * `onCreated` runs once, after a create that ran here succeeded (not on a replay): the caller records
   * the key's outcome where it keeps state.
   */
  async run(scope: string, key: string, body: unknown, create: () => Promise<T>, onCreated?: (bodyHash: string, value: T) => void): Promise<{ value: T; replayed: boolean }> {
    const id = `${scope}\n${key}`;
    const bodyHash = hashBody(body);
    const existing = this.entries.get(id);
    if (existing !== undefined) {
      if (existing.bodyHash !== bodyHash) {
        throw new ApiError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was already used with a different request body', { idempotencyKey: key });
      }
      return { value: await existing.outcome, replayed: true };
    }
    const outcome = create();
    this.entries.set(id, { bodyHash, outcome });
    let value: T;
    try {
      value = await outcome;
    } catch (error) {
      if (this.entries.get(id)?.outcome === outcome) this.entries.delete(id);
      throw error;
    }
    onCreated?.(bodyHash, value);
    return { value, replayed: false };
  }
}

/** Reads and checks the Idempotency-Key header (required). */
export function requireIdempotencyKey(raw: string | string[] | undefined): string {
  const key = Array.isArray(raw) ? raw[0] : raw;
  if (key === undefined || key.trim() === '') throw ApiError.invalidField('Idempotency-Key', 'header is required');
  if (key.length > LIMITS.idempotencyKeyMaxChars || !/^[\x21-\x7e]+$/.test(key)) {
    throw ApiError.invalidField('Idempotency-Key', `must be 1 to ${LIMITS.idempotencyKeyMaxChars} visible ASCII characters`);
  }
  return key;
}

export function hashBody(body: unknown): string {
  return createHash('sha256').update(canonicalJson(body)).digest('hex');
}

function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
