import { describe, expect, it } from 'vitest';
import { EnergyRecognizer, refusalForAddress, refusalForName } from '../src/index.js';
import { hashBody } from '../src/domain/idempotency.js';
import { chargeFor, quoteFor } from '../src/domain/accounts/billing.js';
import { wrapText } from '../src/exports/segmenting.js';
import { sniffVoiceFile } from '@soundclone/core/internal';
import { parseCount } from '../src/util/decimal.js';
import { pcm, toPcm16, type Piece } from './support/wav.js';

const PIECES: Piece[] = [{ silence: 120 }, { tone: 220, ms: 300 }, { silence: 100 }, { tone: 400, ms: 300 }, { silence: 700 }, { tone: 900, ms: 250 }, { silence: 500 }];

describe('EnergyRecognizer', () => {
  const recognizer = new EnergyRecognizer();

  it('gives timed words split on silence, the same every time', async () => {
    const samples = pcm(PIECES);
    const a = await recognizer.recognize({ channels: [samples], maxSpeakers: 32 });
    const b = await recognizer.recognize({ channels: [samples.slice()], maxSpeakers: 32 });
    expect(b).toEqual(a);
    const segments = a.channels[0]!.segments;
    expect(segments).toHaveLength(2);
    expect(segments[0]!.words.map((w) => [w.startMs, w.endMs])).toEqual([[120, 420], [520, 820]]);
    expect(segments[1]!.words.map((w) => [w.startMs, w.endMs])).toEqual([[1520, 1780]]);
    expect(segments[0]!.words[1]!.text).toBe('bob');
    expect(a.channels[0]!.languageCode).toBe('eng');
    expect(a.durationMs).toBe(2270);
  });

  it('streams the same words as batch, with partials, whatever the chunking', async () => {
    const samples = pcm(PIECES);
    const batch = await recognizer.recognize({ channels: [samples], maxSpeakers: 32 });
    for (const chunk of [160, 317, 4000]) {
      const stream = recognizer.openStream({ maxSpeakers: 32 });
      const pcm16 = toPcm16(samples);
      const events = [];
      for (let i = 0; i < pcm16.length; i += chunk) events.push(...stream.push(pcm16.subarray(i, i + chunk)));
      events.push(...stream.flush());
      const segments = events.filter((e) => e.type === 'segment');
      expect(segments.map((e) => e.segment.words.map((w) => w.text))).toEqual(batch.channels[0]!.segments.map((s) => s.words.map((w) => w.text)));
      expect(events.some((e) => e.type === 'partial')).toBe(true);
      expect(stream.partial).toBe('');
    }
  });

  it('finds nothing in silence or noise under the threshold', async () => {
    const quiet = pcm([{ tone: 300, ms: 1000, amp: 0.01 }]);
    const r = await recognizer.recognize({ channels: [quiet, new Float32Array(16000)], maxSpeakers: 2 });
    expect(r.channels.map((c) => c.segments.length)).toEqual([0, 0]);
    expect(r.channels[0]!.languageCode).toBeNull();
  });
});

describe('address policy', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'], ['::1', 'loopback'], ['0.0.0.0', 'unspecified'], ['::', 'unspecified'],
    ['10.1.2.3', 'private'], ['172.31.255.255', 'private'], ['192.168.0.1', 'private'], ['100.127.0.1', 'shared-address-space'],
    ['169.254.1.1', 'link-local'], ['169.254.169.254', 'cloud-metadata'], ['fd00:ec2::254', 'cloud-metadata'], ['fe80::1%eth0', 'link-local'],
    ['fc00::1', 'unique-local'], ['fdff:ffff::1', 'unique-local'], ['::ffff:127.0.0.1', 'loopback'], ['::ffff:a9fe:a9fe', 'cloud-metadata'],
    ['::ffff:10.0.0.1', 'private'], ['64:ff9b::a00:1', 'private'], ['2002:7f00:1::', 'loopback'], ['2001:0:4136:e378::1', 'reserved'], // Teredo: client 255.255.255.254 (last 32 bits inverted)
    ['2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'ipv4-translation'], // Teredo around the public 8.8.8.8
    ['224.0.0.251', 'multicast'], ['ff02::fb', 'multicast'], ['255.255.255.255', 'reserved'], ['192.0.2.1', 'documentation'], ['2001:db8::1', 'documentation'],
    ['not-an-ip', 'reserved'],
  ])('refuses %s as %s', (address, kind) => {
    expect(refusalForAddress(address)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '2606:4700::1111', '::ffff:8.8.8.8', '2002:808:808::'])('allows public %s', (address) => {
    expect(refusalForAddress(address)).toBeUndefined();
  });

  it('refuses metadata names before any lookup', () => {
    expect(refusalForName('METADATA.google.internal.')).toBe('cloud-metadata');
    expect(refusalForName('example.com')).toBeUndefined();
  });
});

describe('small pure helpers', () => {
  it('hashes bodies canonically (key order does not matter, values do)', () => {
    expect(hashBody({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(hashBody({ b: { d: 'x', c: [1, 2] }, a: 1 }));
    expect(hashBody({ a: 1 })).not.toBe(hashBody({ a: 2 }));
    expect(hashBody({ a: [1, 2] })).not.toBe(hashBody({ a: [2, 1] }));
  });

  it('quotes by started minute and charges by started second', () => {
    expect(quoteFor(0n)).toBe(0n);
    expect(quoteFor(1n)).toBe(600n);
    expect(quoteFor(60_000n)).toBe(600n);
    expect(quoteFor(60_001n)).toBe(1200n);
    expect(chargeFor(1n)).toBe(10n);
    expect(chargeFor(1000n)).toBe(10n);
    expect(chargeFor(1001n)).toBe(20n);
  });

  it('parses counts strictly', () => {
    expect(parseCount('0')).toBe(0n);
    expect(parseCount('123456789012345678901234567890')).toBe(123456789012345678901234567890n);
    expect(parseCount(42)).toBe(42n);
    for (const bad of ['-1', '01', '1.5', '1e3', '', ' 1', -1, 1.5, null, undefined, {}]) expect(parseCount(bad)).toBeUndefined();
  });

  it('wraps at word boundaries and never cuts a word', () => {
    expect(wrapText('aa bb cc dd', 5)).toEqual(['aa bb', 'cc dd']);
    expect(wrapText('aa bb cc', 4)).toEqual(['aa', 'bb', 'cc']);
    expect(wrapText('extraordinary x', 3)).toEqual(['extraordinary', 'x']);
    expect(wrapText('a b', undefined)).toEqual(['a b']);
  });

  it('sniffs wav, mp3 and m4a by content', () => {
    expect(sniffVoiceFile(Buffer.from('RIFF\0\0\0\0WAVEfmt ', 'latin1'))).toBe('wav');
    expect(sniffVoiceFile(Buffer.from('ID3\x03', 'latin1'))).toBe('mp3');
    expect(sniffVoiceFile(Buffer.from([0xff, 0xf3, 0x40, 0xc4]))).toBe('mp3');
    expect(sniffVoiceFile(Buffer.from([0xff, 0xf9, 0x40, 0xc4]))).toBeUndefined(); // ADTS AAC, layer 0
    expect(sniffVoiceFile(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypM4A isom', 'latin1')]))).toBe('m4a');
    expect(sniffVoiceFile(Buffer.concat([Buffer.from([0, 0, 0, 0x18]), Buffer.from('ftypqt  ', 'latin1')]))).toBeUndefined();
    expect(sniffVoiceFile(Buffer.from('OggS'))).toBeUndefined();
  });
});
