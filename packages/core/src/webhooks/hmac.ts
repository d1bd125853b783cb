import { WEBHOOK, webhookSignedPayload } from '../protocol.js';
import { bytesToHex } from './signature-header.js';

/**
 * HMAC-SHA256 through WebCrypto (crypto.subtle), so verification runs unchanged in Node 20+, browsers,
 * workers and edge runtimes. No Node crypto import.
 */
const encoder = new TextEncoder();

function subtle(): SubtleCrypto {
  const s = globalThis.crypto?.subtle;
  if (s === undefined) throw new TypeError('WebCrypto (crypto.subtle) is not available in this runtime');
  return s;
}

export async function hmacSha256(secret: string, message: Uint8Array): Promise<Uint8Array> {
  const key = await subtle().importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: WEBHOOK.hash }, false, ['sign']);
  return new Uint8Array(await subtle().sign('HMAC', key, message as Uint8Array<ArrayBuffer>));
}

/** The bytes that are signed: `${t}.` followed by the raw body bytes, untouched. */
export function signedBytes(timestampSec: number, rawBody: string | Uint8Array): Uint8Array {
  if (typeof rawBody === 'string') return encoder.encode(webhookSignedPayload(timestampSec, rawBody));
  const prefix = encoder.encode(webhookSignedPayload(timestampSec, ''));
  const out = new Uint8Array(prefix.length + rawBody.length);
  out.set(prefix, 0);
  out.set(rawBody, prefix.length);
  return out;
}

/**
 * Constant-time equality: the loop always runs over the whole length and accumulates differences, so
 * the time taken does not reveal how many leading bytes matched.
 */
export function timingSafeEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= (a[i] as number) ^ (b[i] as number);
  return diff === 0;
}

/** Signs like the service does (for receivers' tests): the header value `t=...,v1=...`. */
export async function signWebhookPayload(secret: string, timestampSec: number, rawBody: string | Uint8Array): Promise<string> {
  const digest = await hmacSha256(secret, signedBytes(timestampSec, rawBody));
  return `t=${timestampSec},${WEBHOOK.scheme}=${bytesToHex(digest)}`;
}
