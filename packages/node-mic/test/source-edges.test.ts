import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeWav, listMicrophones, openMicrophone, PushSource, rawPcmSource, wavFileSource, type Overflow } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { wavBytes } from './support/audio.js';
import { usePulse } from './support/fake-mic.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'node-mic-edges-'));
  mkdirSync(join(dir, 'adir'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What sox itself decodes a file to, as 32-bit float: the reference for our samples. */
function soxFloats(path: string): Float32Array {
  const out = execFileSync('sox', [path, '-t', 'f32', '-'], { maxBuffer: 64 << 20 });
  return new Float32Array(out.buffer.slice(out.byteOffset, out.byteOffset + out.byteLength));
}

/** `sox -n FORMAT NAME EFFECTS`: a file made by sox itself, in the format sox picks for it. */
function sox(format: string[], name: string, effects: string[]): string {
  const path = join(dir, name);
  execFileSync('sox', ['-q', '-n', ...format, path, ...effects]);
  return path;
}

const formatTag = (bytes: Uint8Array): number => new DataView(bytes.buffer, bytes.byteOffset).getUint16(20, true);

/** A canonical WAV rewritten with a WAVE_FORMAT_EXTENSIBLE fmt chunk of the given sub-format. */
function extensible(plain: Uint8Array, subFormat: number): Uint8Array {
  const out = Buffer.alloc(plain.length + 24);
  Buffer.from(plain.subarray(0, 20)).copy(out, 0);
  out.writeUInt32LE(out.length - 8, 4);
  out.writeUInt32LE(40, 16);
  out.writeUInt16LE(0xfffe, 20);
  Buffer.from(plain.subarray(22, 36)).copy(out, 22);
  out.writeUInt16LE(22, 36);
  out.writeUInt16LE(Buffer.from(plain).readUInt16LE(34), 38); // valid bits: all of the container
  out.writeUInt32LE(0, 40);
  out.writeUInt16LE(subFormat, 44);
  Buffer.from([0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80, 0x00, 0x00, 0xaa, 0x00, 0x38, 0x9b, 0x71]).copy(out, 46);
  Buffer.from(plain.subarray(36)).copy(out, 60);
  return out;
}

describe('a file that cannot be opened fails when the source is made', () => {
  it('raw PCM: a missing file and a directory throw SOURCE_READ_FAILED at once, no stream left to fail later', () => {
    expect(() => rawPcmSource(join(dir, 'missing.raw'))).toThrow(expect.objectContaining({ name: 'AudioSourceError', code: 'SOURCE_READ_FAILED', message: expect.stringContaining('ENOENT') }));
    expect(() => rawPcmSource(join(dir, 'adir'))).toThrow(expect.objectContaining({ code: 'SOURCE_READ_FAILED', message: expect.stringContaining('directory') }));
  });

  it('WAV: a missing file and a directory reject with SOURCE_READ_FAILED', async () => {
    await expect(wavFileSource(join(dir, 'missing.wav'))).rejects.toMatchObject({ code: 'SOURCE_READ_FAILED' });
    await expect(wavFileSource(join(dir, 'adir'))).rejects.toMatchObject({ code: 'SOURCE_READ_FAILED' });
  });

  it('a raw file source opened then read gives its frames; stopped unread, it still ends cleanly', async () => {
    const path = join(dir, 'ok.raw');
    writeFileSync(path, Buffer.from(new Int16Array([1, -2, 3, -4, 5, -6]).buffer));
    const source = rawPcmSource(path, { channels: 2 });
    const got: number[] = [];
    for await (const block of source) got.push(...block);
    expect(got).toEqual([1, -2, 3, -4, 5, -6]);
    expect(source.deliveredFrames).toBe(3);
    const unread = rawPcmSource(path);
    await unread.stop();
    const after: unknown[] = [];
    for await (const block of unread) after.push(block);
    expect(after).toEqual([]);
  });
});

describe('WAVE_FORMAT_EXTENSIBLE WAVs as sox writes them', () => {
  it('24-bit stereo: decoded to exactly the floats sox decodes it to', () => {
    const path = sox(['-r', '16000', '-b', '24', '-c', '2'], 's24.wav', ['synth', '0.3', 'sine', '440', 'sine', '660', 'gain', '-3']);
    const bytes = readFileSync(path);
    expect(formatTag(bytes)).toBe(0xfffe);
    const wav = decodeWav(bytes, 's24.wav');
    expect(wav.format).toEqual({ sampleRate: 16_000, channels: 2, encoding: 'float32' });
    expect(wav.frames).toBe(4800);
    expect(Array.from(wav.samples)).toEqual(Array.from(soxFloats(path)));
  });

  it('16-bit 6 channels: the exact Int16 values, interleaved as sox has them', () => {
    const path = sox(['-r', '48000', '-b', '16', '-c', '6'], 'c6.wav', ['synth', '0.2', 'sine', '200', 'sine', '300', 'sine', '400', 'sine', '500', 'sine', '600', 'whitenoise', 'gain', '-6']);
    const bytes = readFileSync(path);
    expect(formatTag(bytes)).toBe(0xfffe);
    const wav = decodeWav(bytes, 'c6.wav');
    expect(wav.format).toEqual({ sampleRate: 48_000, channels: 6, encoding: 'pcm16' });
    expect(wav.samples).toBeInstanceOf(Int16Array);
    expect(Array.from(wav.samples, (v) => v / 32768)).toEqual(Array.from(soxFloats(path)));
    // The caller's bytes are not patched in place.
    expect(formatTag(bytes)).toBe(0xfffe);
  });

  it('16-bit integer: the samples are the data chunk itself, not a copy (a copy only where it is not 2-aligned); mono float is the decoded plane', () => {
    const values = Int16Array.from({ length: 960 }, (_, i) => ((i * 7919) % 65536) - 32768);
    const bytes = wavBytes(values, 48_000, 2);
    const wav = decodeWav(bytes, 'view.wav');
    expect(wav.format).toEqual({ sampleRate: 48_000, channels: 2, encoding: 'pcm16' });
    expect(wav.frames).toBe(480);
    expect(wav.samples.buffer).toBe(bytes.buffer); // no Float32 round trip, no interleaving copy
    expect(Array.from(wav.samples)).toEqual(Array.from(values));
    const odd = new Uint8Array(bytes.length + 1).subarray(1);
    odd.set(bytes);
    const copied = decodeWav(odd, 'odd.wav');
    expect(copied.samples.buffer).not.toBe(odd.buffer);
    expect(Array.from(copied.samples)).toEqual(Array.from(values));
    // A data chunk declaring more than the bytes hold gives the whole frames it has.
    const short = decodeWav(bytes.subarray(0, bytes.length - 3), 'short.wav');
    expect(Array.from(short.samples)).toEqual(Array.from(values.subarray(0, 958)));
    const mono = decodeWav(wavBytes(new Float32Array([0.5, -0.25, 0.125]), 44_100, 1));
    expect(mono.format).toEqual({ sampleRate: 44_100, channels: 1, encoding: 'float32' });
    expect(Array.from(mono.samples)).toEqual([0.5, -0.25, 0.125]);
  });

  it('extensible IEEE float: the same samples as the plain float file', () => {
    const samples = new Float32Array([0.5, -0.25, 0.125, -1, 0.75, 0.001]);
    const wav = decodeWav(extensible(wavBytes(samples, 16_000, 2), 3));
    expect(wav.format).toEqual({ sampleRate: 16_000, channels: 2, encoding: 'float32' });
    expect(Array.from(wav.samples)).toEqual(Array.from(samples));
  });

  it('A-law and µ-law, plain or extensible: SOURCE_UNSUPPORTED_FORMAT naming the encoding', () => {
    const alaw = readFileSync(sox(['-r', '16000', '-e', 'a-law', '-c', '1'], 'alaw.wav', ['synth', '0.1', 'sine', '300']));
    const ulaw = readFileSync(sox(['-r', '16000', '-e', 'u-law', '-c', '1'], 'ulaw.wav', ['synth', '0.1', 'sine', '300']));
    expect(() => decodeWav(alaw, 'alaw.wav')).toThrow(expect.objectContaining({ code: 'SOURCE_UNSUPPORTED_FORMAT', message: expect.stringMatching(/^alaw\.wav: A-law WAV is not supported/) }));
    expect(() => decodeWav(ulaw, 'ulaw.wav')).toThrow(expect.objectContaining({ code: 'SOURCE_UNSUPPORTED_FORMAT', message: expect.stringMatching(/^ulaw\.wav: µ-law WAV/) }));
    const extAlaw = extensible(wavBytes(new Int16Array([1, 2, 3, 4]), 16_000, 1), 6);
    expect(() => decodeWav(extAlaw, 'x.wav')).toThrow(expect.objectContaining({ code: 'SOURCE_UNSUPPORTED_FORMAT', message: expect.stringContaining('A-law WAV (extensible)') }));
  });
});

describe('PushSource bounds its queue', () => {
  it('past maxQueuedMs the newest blocks are dropped, counted and reported; what was queued is delivered in order', async () => {
    const overflows: Overflow[] = [];
    const source = new PushSource('test', { sampleRate: 16_000, channels: 2, encoding: 'pcm16' }, () => source.end(), { maxQueuedMs: 100, onOverflow: (o) => overflows.push(o) });
    // 100 ms at 16 kHz = 1600 frames = 5 blocks of 320 stereo frames; 8 are pushed with nobody reading.
    for (let b = 0; b < 8; b++) source.push(new Int16Array(640).fill(b));
    expect(source.droppedFrames).toBe(960);
    expect(overflows).toEqual([
      { frames: 320, atFrame: 1600, totalFrames: 320 },
      { frames: 320, atFrame: 1920, totalFrames: 640 },
      { frames: 320, atFrame: 2240, totalFrames: 960 },
    ]);
    const seen: number[] = [];
    const reading = (async () => {
      for await (const block of source) seen.push(block[0] as number);
    })();
    await new Promise((r) => setTimeout(r, 10));
    // Read empty again: there is room, so the next block is taken.
    source.push(new Int16Array(640).fill(9));
    await source.stop();
    await reading;
    expect(seen).toEqual([0, 1, 2, 3, 4, 9]);
    expect(source.deliveredFrames).toBe(1920);
    expect(source.droppedFrames).toBe(960);
  });

  it('the default bound is 5 s of audio', () => {
    const source = new PushSource('test', { sampleRate: 8000, channels: 1, encoding: 'pcm16' }, () => undefined);
    for (let i = 0; i < 50; i++) source.push(new Int16Array(800));
    expect(source.droppedFrames).toBe(0);
    source.push(new Int16Array(1));
    expect(source.droppedFrames).toBe(1);
  });
});

describe('arecord without any audio server', () => {
  it('lists no ALSA plugins as microphones and never captures from "null": MIC_NO_DEVICE', async () => {
    const empty = mkdtempSync(join(dir, 'runtime-'));
    const restore = usePulse({ PULSE_SERVER: `unix:${join(empty, 'nothing-here')}`, XDG_RUNTIME_DIR: empty });
    try {
      const names = (await listMicrophones({ backend: 'arecord' })).map((d) => d.name);
      for (const plugin of ['null', 'lavrate', 'samplerate', 'speexrate', 'jack', 'oss', 'speex', 'upmix', 'vdownmix']) expect(names).not.toContain(plugin);
      const caught = await openMicrophone({ backend: 'arecord', sampleRate: 16_000 }).then(
        async (mic) => {
          await mic.stop();
          return new Error(`opened ${mic.label}`);
        },
        (e: unknown) => e,
      );
      expect(caught).toMatchObject({ name: 'MicrophoneError', backend: 'arecord', code: 'MIC_NO_DEVICE' });
      await expect(openMicrophone({ backend: 'arecord', device: 'null' })).rejects.toMatchObject({ code: expect.stringMatching(/^MIC_(NO_DEVICE|DEVICE_NOT_FOUND)$/) });
    } finally {
      restore();
    }
  }, 20_000);
});

