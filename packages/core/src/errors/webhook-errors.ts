import { SoundCloneError } from './base.js';

/**
 * Why a completion webhook was refused (protocol.ts WEBHOOK). A receiver answers 400 to any of them
 * and never acts on the event.
 */
export type WebhookErrorCode =
  /** The signature header is missing or not `t=<seconds>,v1=<hex>`. */
  | 'WEBHOOK_MALFORMED_HEADER'
  /** No v1 digest matches any of the given secrets (tampered body, wrong secret). */
  | 'WEBHOOK_SIGNATURE_MISMATCH'
  /** The timestamp is older than now - toleranceSec. */
  | 'WEBHOOK_TIMESTAMP_TOO_OLD'
  /** The timestamp is newer than now + toleranceSec. */
  | 'WEBHOOK_TIMESTAMP_IN_FUTURE'
  /** The event id was already accepted within the tolerance window. */
  | 'WEBHOOK_REPLAYED'
  /** The signature is valid but the body is not a JSON event with an id. */
  | 'WEBHOOK_MALFORMED_PAYLOAD'
  /** verify() was called without any secret. */
  | 'WEBHOOK_NO_SECRET';

export class WebhookVerificationError extends SoundCloneError {
  override name = 'WebhookVerificationError' as const;
  declare readonly code: WebhookErrorCode;

  constructor(code: WebhookErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
