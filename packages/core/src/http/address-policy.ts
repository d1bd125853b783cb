/**
 * Which IP addresses the service refuses to connect to for mediaUrl and notifyUrl (spec "POST
 * /stt/transcriptions" mediaUrl: "Private, loopback, link-local and cloud-metadata addresses are
 * refused"; "Errors" 4). One table for both sides: the reference service judges every address it
 * connects to with it, and the client refuses a notifyUrl whose host is a literal refused address
 * before sending (docs/protocol.md "Destinations"). Host names are judged only at connect time, by the
 * service, on the addresses they resolve to.
 *
 * Pure: no platform objects. Spellings such as 2130706433, 0177.0.0.1, 0x7f000001 and 127.1 are
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

interface V4Range {
  readonly base: number;
  readonly bits: number;
  readonly kind: RefusalKind;
}

/** Value of a dotted-quad IPv4 text (assumed valid). */
export function ipv4Value(text: string): number {
  return text.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
}

const V4_RANGES: readonly V4Range[] = [
  { base: ipv4Value('169.254.169.254'), bits: 32, kind: 'cloud-metadata' },
  { base: ipv4Value('100.100.100.200'), bits: 32, kind: 'cloud-metadata' },
  { base: ipv4Value('0.0.0.0'), bits: 8, kind: 'unspecified' },
  { base: ipv4Value('10.0.0.0'), bits: 8, kind: 'private' },
  { base: ipv4Value('100.64.0.0'), bits: 10, kind: 'shared-address-space' },
  { base: ipv4Value('127.0.0.0'), bits: 8, kind: 'loopback' },
  { base: ipv4Value('169.254.0.0'), bits: 16, kind: 'link-local' },
  { base: ipv4Value('172.16.0.0'), bits: 12, kind: 'private' },
  { base: ipv4Value('192.0.0.0'), bits: 24, kind: 'reserved' },
  { base: ipv4Value('192.0.2.0'), bits: 24, kind: 'documentation' },
  { base: ipv4Value('192.88.99.0'), bits: 24, kind: 'reserved' },
  { base: ipv4Value('192.168.0.0'), bits: 16, kind: 'private' },
  { base: ipv4Value('198.18.0.0'), bits: 15, kind: 'benchmarking' },
  { base: ipv4Value('198.51.100.0'), bits: 24, kind: 'documentation' },
  { base: ipv4Value('203.0.113.0'), bits: 24, kind: 'documentation' },
  { base: ipv4Value('224.0.0.0'), bits: 4, kind: 'multicast' },
  { base: ipv4Value('240.0.0.0'), bits: 4, kind: 'reserved' },
];

/** Why an IPv4 address (as a 32-bit value) is refused, or undefined when it may be connected to. */
export function classifyIPv4(value: number): RefusalKind | undefined {
  for (const range of V4_RANGES) {
    const size = 2 ** (32 - range.bits);
    if (value >= range.base && value < range.base + size) return range.kind;
  }
  return undefined;
}

/** Expands a valid IPv6 text (brackets and zone id allowed) into eight 16-bit groups. */
export function ipv6Groups(text: string): number[] {
  let address = text.replace(/^\[|\]$/g, '').split('%')[0] ?? '';
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (tail?.[1] !== undefined) {
    const value = ipv4Value(tail[1]);
    address = address.slice(0, -tail[1].length) + `${(value >>> 16).toString(16)}:${(value & 0xffff).toString(16)}`;
  }
  const [head = '', rest] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = rest === undefined || rest === '' ? [] : rest.split(':');
  const fill = rest === undefined ? [] : new Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...fill, ...right].map((g) => parseInt(g, 16));
}

/** Why an IPv6 address (eight groups) is refused, or undefined when it may be connected to. */
export function classifyIPv6(groups: readonly number[]): RefusalKind | undefined {
  const [g0 = 0, g1 = 0, g2 = 0, g3 = 0, g4 = 0, g5 = 0, g6 = 0, g7 = 0] = groups;
  const embedded = (hi: number, lo: number): number => hi * 65536 + lo;
  if (groups.every((g) => g === 0)) return 'unspecified';
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0 && g7 === 1) return 'loopback';
  const low = embedded(g6, g7);
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0) {
    // IPv4-mapped ::ffff:a.b.c.d and IPv4-translated ::ffff:0:a.b.c.d: the IPv4 inside is the destination.
    if ((g4 === 0 && g5 === 0xffff) || (g4 === 0xffff && g5 === 0)) return classifyIPv4(low);
    // The deprecated IPv4-compatible ::a.b.c.d: judged by the IPv4 inside, and refused even when public.
    if (g4 === 0 && g5 === 0) return classifyIPv4(low) ?? 'ipv4-translation';
  }
  // NAT64, well-known prefix 64:ff9b::/96: the IPv4 inside is the destination.
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return classifyIPv4(low);
  // Local-use NAT64 64:ff9b:1::/48 (and the rest of 64:ff9b::/32): the prefix length is not known, so the
  // low 32 bits (the /96 layout) are judged and the address is refused anyway.
  if (g0 === 0x64 && g1 === 0xff9b) return classifyIPv4(low) ?? 'ipv4-translation';
  // 6to4 2002:a.b.c.d::/48: the IPv4 of the relay router inside.
  if (g0 === 0x2002) return classifyIPv4(embedded(g1, g2));
  // Teredo 2001:0::/32: server IPv4 in bits 32..63, client IPv4 in the last 32 bits, inverted. The tunnel
  // hides an IPv4 peer, so it is refused anyway; a refused IPv4 inside names the refusal.
  if (g0 === 0x2001 && g1 === 0) return classifyIPv4((~low) >>> 0) ?? classifyIPv4(embedded(g2, g3)) ?? 'ipv4-translation';
  if (g0 === 0xfd00 && g1 === 0x0ec2 && g7 === 0x254 && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0 && g6 === 0) return 'cloud-metadata';
  if ((g0 & 0xfe00) === 0xfc00) return 'unique-local';
  if ((g0 & 0xffc0) === 0xfe80) return 'link-local';
  if ((g0 & 0xffc0) === 0xfec0) return 'site-local';
  if ((g0 & 0xff00) === 0xff00) return 'multicast';
  if (g0 === 0x2001 && g1 === 0x0db8) return 'documentation';
  if (g0 === 0x0100 && g1 === 0 && g2 === 0 && g3 === 0) return 'reserved';
  return undefined;
}

/** The WHATWG URL parser writes every IPv4 host as a dotted quad and every IPv6 host in brackets. */
const URL_IPV4_HOST = /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/;

/**
 * Why the host of an http(s) URL is a refused literal address, or undefined when it is a host name
 * (judged at connect time) or an address that may be connected to. Unparsable URLs give undefined
 * (their own rule reports them).
 */
export function literalHostRefusal(url: string | URL): RefusalKind | undefined {
  let hostname: string;
  try {
    hostname = (typeof url === 'string' ? new URL(url) : url).hostname;
  } catch {
    return undefined;
  }
  if (hostname.startsWith('[') && hostname.endsWith(']')) return classifyIPv6(ipv6Groups(hostname));
  if (URL_IPV4_HOST.test(hostname)) return classifyIPv4(ipv4Value(hostname));
  return undefined;
}
