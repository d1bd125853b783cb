import type { LoggedRequest } from './redact.js';

/** The errorCode the service answers a reused Idempotency-Key with, when the body differs (409). */
const CONFLICT = 'IDEMPOTENCY_CONFLICT';

/**
 * A request the service refused because its Idempotency-Key was used before with another body: an
 * app that reuses a key for a different call (one key per logical call, reused only by its retries).
 */
export interface IdempotencyConflict {
  readonly idempotencyKey: string;
  /** The refused request (409 IDEMPOTENCY_CONFLICT). */
  readonly request: LoggedRequest;
  /** The earliest request in the log with the same key, method and path: the call that took the key (undefined when it left the log). */
  readonly first: LoggedRequest | undefined;
}

/** The conflicts in a request log, oldest first, each with the request that first used its key. */
export function idempotencyConflicts(requests: readonly LoggedRequest[]): IdempotencyConflict[] {
  const conflicts: IdempotencyConflict[] = [];
  requests.forEach((request, index) => {
    if (request.errorCode !== CONFLICT || request.idempotencyKey === undefined) return;
    const first = requests.slice(0, index).find((r) => r.idempotencyKey === request.idempotencyKey && r.method === request.method && r.path === request.path);
    conflicts.push({ idempotencyKey: request.idempotencyKey, request, first });
  });
  return conflicts;
}
