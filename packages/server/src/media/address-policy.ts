import { isIP, isIPv4, isIPv6 } from 'node:net';
import { classifyIPv4, classifyIPv6, ipv4Value, ipv6Groups, type RefusalKind } from '@soundclone/core/internal';

/**
 * Which destinations the service may connect to for mediaUrl and notifyUrl (spec "POST
 * /stt/transcriptions" mediaUrl; "Errors" 4). Works on the address actually connected to: callers pass
 * every address a name resolved to (guarded-fetch.ts uses this inside the socket's `lookup`, so there is
 * no gap between check and use). The ranges are core's (http/address-policy.ts), the same table the SDK
 * uses to refuse a literal notifyUrl before sending; this module adds validation of arbitrary address
 * text and the names refused before any lookup.
 */
export type { RefusalKind } from '@soundclone/core/internal';
export { ipv6Groups } from '@soundclone/core/internal';

/** Names refused before any lookup: cloud metadata endpoints reachable by name. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

/** Why an IP address may not be connected to, or undefined when it may. Non-IP input is refused. */
export function refusalForAddress(address: string): RefusalKind | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return classifyIPv4(ipv4Value(bare));
  if (isIPv6(bare.split('%')[0] ?? '')) return classifyIPv6(ipv6Groups(bare));
  return 'reserved';
}

/** Refusal by host name alone (before any lookup). */
export function refusalForName(hostname: string): RefusalKind | undefined {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return METADATA_NAMES.has(name) ? 'cloud-metadata' : undefined;
}

export function isIpLiteral(hostname: string): boolean {
  return isIP(hostname.replace(/^\[|\]$/g, '')) !== 0;
}
