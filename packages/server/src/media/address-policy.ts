import { isIP, isIPv4, isIPv6 } from 'node:net';

/**
 * Which destinations the service may connect to for mediaUrl and notifyUrl (spec "POST
 * /stt/transcriptions" mediaUrl; "Errors" 4). Works on the address actually connected to: callers pass
 * every address a name resolved to (guarded-fetch.ts uses this inside the socket's `lookup`, so there is
 * no gap between check and use). Spellings such as 2130706433, 0177.0.0.1, 0x7f000001 and 127.1 are
 * normalised by the WHATWG URL parser before they get here; IPv4-mapped, IPv4-compatible, NAT64, 6to4
 * and Teredo IPv6 forms are unwrapped here.
 */
export type RefusalKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared-address-space'
  | 'link-local'
  | 'cloud-metadata'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'reserved'
  | 'documentation'
  | 'benchmarking'
  | 'ipv4-translation';

/** Names refused before any lookup: cloud metadata endpoints reachable by name. */
const METADATA_NAMES = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'instance-data', 'instance-data.ec2.internal']);

interface V4Range {
  readonly base: number;
  readonly bits: number;
  readonly kind: RefusalKind;
}

const V4_RANGES: readonly V4Range[] = [
  { base: v4('169.254.169.254'), bits: 32, kind: 'cloud-metadata' },
  { base: v4('100.100.100.200'), bits: 32, kind: 'cloud-metadata' },
  { base: v4('0.0.0.0'), bits: 8, kind: 'unspecified' },
  { base: v4('10.0.0.0'), bits: 8, kind: 'private' },
  { base: v4('100.64.0.0'), bits: 10, kind: 'shared-address-space' },
  { base: v4('127.0.0.0'), bits: 8, kind: 'loopback' },
  { base: v4('169.254.0.0'), bits: 16, kind: 'link-local' },
  { base: v4('172.16.0.0'), bits: 12, kind: 'private' },
  { base: v4('192.0.0.0'), bits: 24, kind: 'reserved' },
  { base: v4('192.0.2.0'), bits: 24, kind: 'documentation' },
  { base: v4('192.88.99.0'), bits: 24, kind: 'reserved' },
  { base: v4('192.168.0.0'), bits: 16, kind: 'private' },
  { base: v4('198.18.0.0'), bits: 15, kind: 'benchmarking' },
  { base: v4('198.51.100.0'), bits: 24, kind: 'documentation' },
  { base: v4('203.0.113.0'), bits: 24, kind: 'documentation' },
  { base: v4('224.0.0.0'), bits: 4, kind: 'multicast' },
  { base: v4('240.0.0.0'), bits: 4, kind: 'reserved' },
];

function v4(text: string): number {
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

function classifyV4(value: number): RefusalKind | undefined {
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits);
    if (value >= range.base && value < range.base + size) return range.kind;
  }
  return undefined;
}

/** Expands a valid IPv6 text (zone id allowed) into eight 16-bit groups. */
export function ipv6Groups(text: string): number[] {
  let address = text.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (tail?.[1] !== undefined) {
    const value = v4(tail[1]);
    address = address.slice(0, -tail[1].length) + `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

function classifyV6(groups: readonly number[]): RefusalKind | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = (hi: number, lo: number): number => hi * 65536 + lo;
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && (g5 === 0xffff || g5 === 0)) {
    // IPv4-mapped (::ffff:a.b.c.d) and the deprecated IPv4-compatible (::a.b.c.d): judge the IPv4 inside.
    return classifyV4(embedded(g6, g7)) ?? (g5 === 0 ? 'ipv4-translation' : undefined);
  }
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyV4(embedded(g6, g7));
  if (g0 === 0x64 && g1 === 0xff9b) return 'ipv4-translation';
  if (g0 === 0x2002) return classifyV4(embedded(g1, g2)) ?? undefined;
  if (g0 === 0x2001 && g1 === 0) return 'ipv4-translation'; // Teredo hides an IPv4 peer.
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g7 === 0x254 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0) return 'cloud-metadata';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'site-local';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved';
  return undefined;
}

/** Why an IP address may not be connected to, or undefined when it may. Non-IP input is refused. */
export function refusalForAddress(address: string): RefusalKind | undefined {
  const bare = address.replace(/^\[|\]$/g, '');
  if (isIPv4(bare)) return classifyV4(v4(bare));
  if (isIPv6(bare.split('%')[0] ?? '')) return classifyV6(ipv6Groups(bare));
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
