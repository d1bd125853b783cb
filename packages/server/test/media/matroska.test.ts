import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demuxMatroskaAudio, type MatroskaAudioTrack } from '../../src/media/matroska.js';
import { UndecodableMediaError } from '../../src/media/media-error.js';

/** Channel `c` of a kept track, decoded whole (the service itself reads blocks). */
function channel(track: MatroskaAudioTrack, c: number): Float32Array {
  const out = new Float32Array(track.source.frames);
  track.source.readInto(0, out.length, c, out);
  return out;
}

/** A 16-bit PCM WAV from per-channel integer samples. */
function wav(rate: number, channels: Int16Array[]): Buffer {
  const frames = channels[0]!.length;
  const data = Buffer.alloc(frames * channels.length * 2);
  for (let f = 0; f < frames; f++) channels.forEach((c, i) => data.writeInt16LE(c[f]!, (f * channels.length + i) * 2));
  const header = Buffer.alloc(44);
  header.write('RIFF', 0); header.writeUInt32LE(36 + data.length, 4); header.write('WAVE', 8);
  header.write('fmt ', 12); header.writeUInt32LE(16, 16); header.writeUInt16LE(1, 20); header.writeUInt16LE(channels.length, 22);
  header.writeUInt32LE(rate, 24); header.writeUInt32LE(rate * channels.length * 2, 28); header.writeUInt16LE(channels.length * 2, 32);
  header.writeUInt16LE(16, 34); header.write('data', 36); header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

function ramp(length: number, seed: number): Int16Array {
  return Int16Array.from({ length }, (_, i) => ((i * 7919 + seed * 104729) % 65536) - 32768);
}

// EBML writing, for hand-built files that exercise what mkvmerge does not emit (lacing).
const vint = (n: number): number[] => (n < 0x7f ? [0x80 | n] : [0x40 | (n >> 8), n & 0xff]);
const el = (id: number[], body: number[]): number[] => [...id, ...vint(body.length), ...body];
const u = (n: number): number[] => [n];

function laced(mode: 'xiph' | 'ebml' | 'fixed', frames: number[][]): Uint8Array {
  const flags = { xiph: 0x02, fixed: 0x04, ebml: 0x06 }[mode];
  const head: number[] = [frames.length - 1];
  if (mode === 'xiph') for (const f of frames.slice(0, -1)) { let n = f.length; while (n >= 255) { head.push(255); n -= 255; } head.push(n); }
  if (mode === 'ebml') {
    head.push(...vint(frames[0]!.length));
    // 2-byte signed vints: the difference plus 2^13 - 1.
    for (let i = 1; i < frames.length - 1; i++) {
      const v = frames[i]!.length - frames[i - 1]!.length + 8191;
      head.push(0x40 | (v >> 8), v & 0xff);
    }
  }
  const block = [0x81, 0, 0, flags, ...head, ...frames.flat()];
  const track = el([0xae], [...el([0xd7], u(1)), ...el([0x83], u(2)), ...el([0x86], [...Buffer.from('A_PCM/INT/LIT')]),
    ...el([0xe1], [...el([0x9f], u(1)), ...el([0x62, 0x64], u(16))])]);
  const segment = [...el([0x16, 0x54, 0xae, 0x6b], track), ...el([0x1f, 0x43, 0xb6, 0x75], el([0xa3], block))];
  return Uint8Array.from([...el([0x1a, 0x45, 0xdf, 0xa3], el([0x42, 0x82], [...Buffer.from('matroska')])),
    0x18, 0x53, 0x80, 0x67, 0x01, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, ...segment]); // segment of unknown size
}

const dir = mkdtempSync(join(tmpdir(), 'mka-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Matroska PCM demuxer', () => {
  it('reads every audio track of a file made by mkvmerge, sample for sample', () => {
    const a = [ramp(16000, 1)];
    const b = [ramp(24000, 2), ramp(24000, 3)];
    writeFileSync(join(dir, 'a.wav'), wav(16000, a));
    writeFileSync(join(dir, 'b.wav'), wav(48000, b));
    execFileSync('mkvmerge', ['-q', '-o', join(dir, 'two.mka'), join(dir, 'a.wav'), join(dir, 'b.wav')]);
    const tracks = demuxMatroskaAudio(readFileSync(join(dir, 'two.mka')));
    expect(tracks.map((t) => [t.index, t.codecId, t.source.sampleRate, t.source.channels])).toEqual([
      [0, 'A_PCM/INT/LIT', 16000, 1],
      [1, 'A_PCM/INT/LIT', 48000, 2],
    ]);
    for (const [track, source] of [[tracks[0]!, a], [tracks[1]!, b]] as const) {
      source.forEach((samples, c) => expect(Int16Array.from(channel(track, c), (v) => v * 32768)).toEqual(samples));
    }
  });

  for (const mode of ['xiph', 'ebml', 'fixed'] as const) {
    it(`splits ${mode}-laced blocks`, () => {
      const sizes = mode === 'fixed' ? [40, 40, 40] : [300, 40, 100, 64];
      let n = 0;
      const frames = sizes.map((size) => Array.from({ length: size }, () => n++ & 0xff));
      const [track] = demuxMatroskaAudio(laced(mode, frames));
      const bytes = Uint8Array.from(frames.flat());
      const view = new DataView(bytes.buffer);
      const expected = Float32Array.from({ length: bytes.length / 2 }, (_, i) => view.getInt16(i * 2, true) / 32768);
      expect(channel(track!, 0)).toEqual(expected);
    });
  }

  it('refuses what it cannot read with an UndecodableMediaError', () => {
    expect(() => demuxMatroskaAudio(Uint8Array.from([1, 2, 3, 4]))).toThrow(UndecodableMediaError);
    const truncated = laced('xiph', [[1, 2], [3, 4]]).subarray(0, 30);
    expect(() => demuxMatroskaAudio(truncated)).toThrow(UndecodableMediaError);
  });
});
