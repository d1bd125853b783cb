import { WebhookVerificationError } from '../errors/webhook-errors.js';
import { WEBHOOK } from '../protocol.js';
import { ReplayCache } from './replay-cache.js';
import type { HeaderBag } from './signature-header.js';
import { verifyWebhook, type VerifiedWebhook } from './verify.js';

export interface WebhookVerifierOptions {
  /** Active secrets; several during rotation. */
  readonly secrets: string | readonly string[];
  readonly toleranceSec?: number;
  /** Bound on remembered event ids (default 10,000). */
  readonly maxEntries?: number;
  readonly now?: () => number;
}

export interface WebhookVerifier {
  /** verifyWebhook plus WEBHOOK_REPLAYED for an event id already accepted within the window. */
  verify(rawBody: string | Uint8Array, headers: HeaderBag): Promise<VerifiedWebhook>;
  /**
   * Forgets an accepted event id. Call it when handling the event failed and you answer non-2xx, so
   * the service's retry of the same event (same id, new signature) is accepted.
   */
  forget(eventId: string): void;
  /** Replaces the active secrets (rotation without a new verifier). */
  setSecrets(secrets: string | readonly string[]): void;
}

/**
 * Verification with replay rejection. The service retries an event with the same id (protocol.ts
 * WEBHOOK), so a receiver that already accepted an id answers a repeat as a replay. The memory is
 * in-process: several receiver instances need a shared store keyed by event id instead.
 */
export function createWebhookVerifier(options: WebhookVerifierOptions): WebhookVerifier {
  let secrets = options.secrets;
  const toleranceSec = options.toleranceSec ?? WEBHOOK.defaultToleranceSec;
  const now = options.now ?? Date.now;
  const seen = new ReplayCache(options.maxEntries);
  return {
    async verify(rawBody, headers) {
      const verified = await verifyWebhook(rawBody, headers, secrets, { toleranceSec, now });
      const at = now();
      if (seen.has(verified.event.id, at)) {
        throw new WebhookVerificationError('WEBHOOK_REPLAYED', `event ${verified.event.id} was already accepted`);
      }
      // A copy of this delivery is refused as too old after t + tolerance; a fresh retry of the same event
      // is refused while within tolerance of when we accepted it. Past both, the id can go.
      const anchorSec = Math.max(verified.timestampSec, Math.floor(at / 1000));
      seen.add(verified.event.id, (anchorSec + toleranceSec + 1) * 1000, at);
      return verified;
    },
    forget(eventId) {
      seen.delete(eventId);
    },
    setSecrets(next) {
      secrets = next;
    },
  };
}
