/**
 * Idempotency keys (spec "POST /stt/transcriptions": Idempotency-Key required). One key per logical
 * call, made before the first attempt and reused on every retry (style guide "REST"), so a create that
 * reached the service before the connection dropped is answered from the idempotency record instead
 * of creating a second task and a second reservation.
 */
export function newIdempotencyKey(): string {
  return globalThis.crypto.randomUUID();
}
