import { WebhookVerificationError } from '../errors/webhook-errors.js';
import { HEADERS, WEBHOOK } from '../protocol.js';

/**
 * The signature header (protocol.ts WEBHOOK): `t=<unix seconds>,v1=<hex>[,v1=<hex>...]`. Several v1
 * entries let a sender sign with an old and a new secret during rotation. Unknown schemes are ignored
 * so a later v2 does not break today's receivers.
 */
export interface SignatureHeader {
  readonly timestampSec: number;
  /** The v1 digests, decoded from hex (32 bytes each for SHA-256). */
  readonly digests: readonly Uint8Array[];
}

/** Header bags we accept: fetch's Headers, or Node's IncomingHttpHeaders-style record. */
export type HeaderBag = { get(name: string): string | null } | Readonly<Record<string, string | readonly string[] | undefined>>;

export function readHeader(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as { get?: unknown }).get === 'function') return (headers as { get(name: string): string | null }).get(name) ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers as Record<string, string | readonly string[] | undefined>)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === 'string' ? value : value[0];
  }
  return undefined;
}

export function parseSignatureHeader(headers: HeaderBag): SignatureHeader {
  const raw = readHeader(headers, HEADERS.webhookSignature);
  if (raw === undefined || raw.trim() === '') throw malformed(`the ${HEADERS.webhookSignature} header is missing`);
  let timestampSec: number | undefined;
  const digests: Uint8Array[] = [];
  for (const part of raw.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) throw malformed(`"${part.trim().slice(0, 20)}" is not key=value`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (timestampSec !== undefined || !/^[0-9]{1,12}$/.test(value)) throw malformed('t must appear once, as whole unix seconds');
      timestampSec = Number(value);
    } else if (key === WEBHOOK.scheme) {
      const bytes = hexToBytes(value);
      if (bytes === undefined || bytes.length !== 32) throw malformed(`${WEBHOOK.scheme} must be 64 hex digits`);
      digests.push(bytes);
    }
  }
  if (timestampSec === undefined) throw malformed('t is missing');
  if (digests.length === 0) throw malformed(`no ${WEBHOOK.scheme} signature`);
  return { timestampSec, digests };
}

function malformed(detail: string): WebhookVerificationError {
  return new WebhookVerificationError('WEBHOOK_MALFORMED_HEADER', `malformed ${HEADERS.webhookSignature} header: ${detail}`);
}

export function hexToBytes(hex: string): Uint8Array | undefined {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return undefined;
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function bytesToHex(bytes: Uint8Array): string {
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}
