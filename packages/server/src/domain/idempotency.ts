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

/** Where keys of earlier runs (or other processes) are kept: the key's body hash and outcome, if any. */
export type KeptKeys<T> = (scope: string, key: string) => Promise<{ readonly bodyHash: string; readonly value: T } | undefined>;

export class IdempotencyStore<T> {
  private readonly entries = new Map<string, Entry<T>>();

  /** `kept` is asked on a key this process has not seen (the store's kept keys); without it, keys live here only. */
  constructor(private readonly kept?: KeptKeys<T>) {}

  /**
   * `create` gets the body hash (a store that keeps the key records it with what it creates). A key
   * found in `kept` replays its outcome, or is IDEMPOTENCY_CONFLICT for another body.
   */
  async run(scope: string, key: string, body: unknown, create: (bodyHash: string) => Promise<T>): Promise<{ value: T; replayed: boolean }> {
    const id = `${scope}\n${key}`;
    const bodyHash = hashBody(body);
    const existing = this.entries.get(id);
    if (existing !== undefined) {
      if (existing.bodyHash !== bodyHash) throw idempotencyConflict(key);
      return { value: await existing.outcome, replayed: true };
    }
    let fromKept = false;
    const outcome = this.kept === undefined
      ? create(bodyHash)
      : (async () => {
          const kept = await this.kept?.(scope, key);
          if (kept === undefined) return create(bodyHash);
          if (kept.bodyHash !== bodyHash) throw idempotencyConflict(key);
          fromKept = true;
          return kept.value;
        })();
    this.entries.set(id, { bodyHash, outcome });
    let value: T;
    try {
      value = await outcome;
    } catch (error) {
      if (this.entries.get(id)?.outcome === outcome) this.entries.delete(id);
      throw error;
    }
    return { value, replayed: fromKept };
  }
}

/** 409 IDEMPOTENCY_CONFLICT: the key was used with another body. */
export function idempotencyConflict(key: string): ApiError {
  return new ApiError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was already used with a different request body', { idempotencyKey: key });
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
