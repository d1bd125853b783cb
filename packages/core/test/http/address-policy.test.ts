import { describe, expect, it } from 'vitest';
import { classifyIPv6, ipv6Groups, literalHostRefusal } from '../../src/http/address-policy.js';

const judge = (host: string): string | undefined => classifyIPv6(ipv6Groups(host));

/** The Teredo spelling of a client IPv4: the last 32 bits hold it inverted. */
function teredo(ipv4: string): string {
  const value = ipv4.split('.').reduce((acc, part) => acc * 256 + Number(part), 0);
  const inverted = (~value) >>> 0;
  return `2001:0:4136:e378:8000:63bf:${(inverted >>> 16).toString(16)}:${(inverted & 0xffff).toString(16)}`;
}

describe('address policy: IPv6 forms that embed an IPv4 address are judged by the address inside', () => {
  const loopbackSpellings = [
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '0:0:0:0:0:ffff:7f00:1',
    '::ffff:0:7f00:1',
    '::ffff:0:127.0.0.1',
    '0:0:0:0:ffff:0:7f00:1',
    '::127.0.0.1',
    '::7f00:1',
    '64:ff9b::127.0.0.1',
    '64:ff9b::7f00:1',
    '64:ff9b:1::7f00:1',
    '64:ff9b:1::127.0.0.1',
    '2002:7f00:1::',
    '2002:7f00:1:1::1',
    teredo('127.0.0.1'),
  ];
  for (const spelling of loopbackSpellings) {
    it(`refuses ${spelling} as loopback`, () => {
      expect(judge(spelling)).toBe('loopback');
      expect(literalHostRefusal(`http://[${spelling}]/x`)).toBe('loopback');
    });
  }

  it('names the refusal of every embedded private and metadata address', () => {
    expect(judge('::ffff:0:a00:1')).toBe('private');
    expect(judge('::ffff:0:169.254.169.254')).toBe('cloud-metadata');
    expect(judge('::ffff:10.1.2.3')).toBe('private');
    expect(judge('::192.168.0.1')).toBe('private');
    expect(judge('64:ff9b::169.254.169.254')).toBe('cloud-metadata');
    expect(judge('64:ff9b:1::a9fe:a9fe')).toBe('cloud-metadata');
    expect(judge('2002:a9fe:a9fe::')).toBe('cloud-metadata');
    expect(judge('2002:c0a8:101::1')).toBe('private');
    expect(judge(teredo('10.0.0.1'))).toBe('private');
    expect(judge(teredo('169.254.169.254'))).toBe('cloud-metadata');
    expect(judge('::ffff:0:0.0.0.0')).toBe('unspecified');
  });

  it('allows mapped, translated, well-known NAT64 and 6to4 forms of a public IPv4', () => {
    expect(judge('::ffff:8.8.8.8')).toBeUndefined();
    expect(judge('::ffff:0:808:808')).toBeUndefined();
    expect(judge('64:ff9b::8.8.8.8')).toBeUndefined();
    expect(judge('2002:808:808::1')).toBeUndefined();
  });

  it('still refuses tunnel and deprecated forms of a public IPv4, whose real peer is hidden', () => {
    expect(judge('::8.8.8.8')).toBe('ipv4-translation');
    expect(judge('64:ff9b:1::808:808')).toBe('ipv4-translation');
    expect(judge(teredo('8.8.8.8'))).toBe('ipv4-translation');
  });

  it('leaves ordinary public IPv6 alone', () => {
    expect(judge('2606:4700:4700::1111')).toBeUndefined();
    expect(judge('::1')).toBe('loopback');
    expect(judge('::')).toBe('unspecified');
  });
});
