import { ValidationError } from '../errors/client-errors.js';
import { WebhookVerificationError } from '../errors/webhook-errors.js';
import { WEBHOOK } from '../protocol.js';
import { parseWebhookEvent, type WebhookEvent } from './event.js';
import { hmacSha256, signedBytes, timingSafeEqual } from './hmac.js';
import { parseSignatureHeader, type HeaderBag } from './signature-header.js';

export interface VerifyOptions {
  /** Accepted clock difference in seconds, in both directions (default 300). */
  readonly toleranceSec?: number;
  /** The current time in ms since the epoch (tests pin it). */
  readonly now?: number | (() => number);
}

export interface VerifiedWebhook {
  readonly event: WebhookEvent;
  readonly timestampSec: number;
}

/**
 * Verifies one completion webhook (protocol.ts WEBHOOK) and returns the parsed event:
 *   1. the header parses (WEBHOOK_MALFORMED_HEADER);
 *   2. some v1 digest equals HMAC-SHA256(secret, `${t}.${rawBody}`) for some secret, compared in
 *      constant time; several secrets allow rotation (WEBHOOK_SIGNATURE_MISMATCH);
 *   3. |now - t| <= toleranceSec, checked after the signature so an attacker learns nothing about the
 *      clock from forged requests (WEBHOOK_TIMESTAMP_TOO_OLD / WEBHOOK_TIMESTAMP_IN_FUTURE);
 *   4. the body is an event (WEBHOOK_MALFORMED_PAYLOAD).
 * Pass the RAW body exactly as received: re-serialised JSON does not match the signature.
 * This function has no memory; createWebhookVerifier adds replay rejection.
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  headers: HeaderBag,
  secrets: string | readonly string[],
  options: VerifyOptions = {},
): Promise<VerifiedWebhook> {
  // Misuse is told as such: a parsed body (express.json()) cannot be verified at all, and a clock that
  // reads NaN would make every timestamp pass the tolerance check (NaN compares false).
  if (typeof rawBody !== 'string' && !(rawBody instanceof Uint8Array)) {
    throw new ValidationError([{ field: 'rawBody', rule: 'must be the raw body exactly as received, a string or bytes (not parsed JSON)' }]);
  }
  if (headers === null || typeof headers !== 'object') throw new ValidationError([{ field: 'headers', rule: 'must be the request headers (a Headers object or a plain object)' }]);
  const list = (typeof secrets === 'string' ? [secrets] : [...secrets]).filter((s) => typeof s === 'string' && s !== '');
  if (list.length === 0) throw new WebhookVerificationError('WEBHOOK_NO_SECRET', 'verify needs at least one signing secret');
  const tolerance = options.toleranceSec ?? WEBHOOK.defaultToleranceSec;
  if (!(Number.isFinite(tolerance) && tolerance >= 0)) throw new RangeError(`toleranceSec must be a non-negative number, got ${tolerance}`);

  const header = parseSignatureHeader(headers);
  const message = signedBytes(header.timestampSec, rawBody);
  let matched = false;
  // Every secret and every digest is compared, whatever matched first: timing shows no position.
  for (const secret of list) {
    const expected = await hmacSha256(secret, message);
    for (const digest of header.digests) matched = timingSafeEqual(expected, digest) || matched;
  }
  if (!matched) throw new WebhookVerificationError('WEBHOOK_SIGNATURE_MISMATCH', 'no signature matches the body with any of the given secrets');

  const nowMs = typeof options.now === 'function' ? options.now() : (options.now ?? Date.now());
  if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) throw new ValidationError([{ field: 'now', rule: 'must be (or return) a finite time in ms since the epoch' }]);
  const age = nowMs / 1000 - header.timestampSec;
  if (age > tolerance) throw new WebhookVerificationError('WEBHOOK_TIMESTAMP_TOO_OLD', `signed ${Math.round(age)} s ago; tolerance is ${tolerance} s`);
  if (-age > tolerance) throw new WebhookVerificationError('WEBHOOK_TIMESTAMP_IN_FUTURE', `signed ${Math.round(-age)} s in the future; tolerance is ${tolerance} s`);

  return { event: parseWebhookEvent(rawBody), timestampSec: header.timestampSec };
}
