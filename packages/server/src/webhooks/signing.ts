import { createHmac } from 'node:crypto';
import { webhookSignedPayload } from '@soundclone/core/internal';
import { formatWebhookSignature } from '../protocol.js';

/**
 * protocol.ts WEBHOOK: `SoundClone-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "t.rawBody")>`.
 */
export function signWebhook(secret: string, timestampSec: number, rawBody: string): string {
  const digest = createHmac('sha256', secret).update(webhookSignedPayload(timestampSec, rawBody)).digest('hex');
  return formatWebhookSignature(timestampSec, [digest]);
}
