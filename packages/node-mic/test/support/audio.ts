import { readFileSync, writeFileSync } from 'node:fs';
import { startServer, type RunningServer } from '@soundclone/server';
import { SoundClone } from '@soundclone/core';
import { BUNDLED_SAMPLE, decodeWav } from '@soundclone/node-mic';

export const KEY = 'key-node-mic';
export const PREFIX = '/sound_clone/api/v1';

export function startRetainingServer(): Promise<RunningServer> {
  return startServer({ port: 0, host: '127.0.0.1', accessKeys: [KEY], retainRealtimeAudioSamples: 16_000 * 120 });
}

export function clientFor(server: { url: string }): SoundClone {
  return new SoundClone({ accessKey: KEY, baseUrl: server.url });
}

/** Test-only server read of the PCM16 it stored for a session. */
export async function storedAudio(server: { url: string }, sessionId: string, key = KEY): Promise<Int16Array> {
  const r = await fetch(`${server.url}${PREFIX}/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: key } });
  if (r.status !== 200) throw new Error(`stored audio: HTTP ${String(r.status)}`);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
}

/** The bundled sample's samples (16 kHz mono PCM16). */
export function sampleSamples(): Int16Array {
  return decodeWav(readFileSync(BUNDLED_SAMPLE.path)).samples as Int16Array;
}

/** A canonical 16-bit or 32-bit-float WAV file of interleaved samples. */
export function wavBytes(samples: Int16Array | Float32Array, sampleRate: number, channels: number): Uint8Array {
  const float = samples instanceof Float32Array;
  const bytesPer = float ? 4 : 2;
  const data = samples.length * bytesPer;
  const out = Buffer.alloc(44 + data);
  out.write('RIFF', 0, 'latin1');
  out.writeUInt32LE(36 + data, 4);
  out.write('WAVEfmt ', 8, 'latin1');
  out.writeUInt32LE(16, 16);
  out.writeUInt16LE(float ? 3 : 1, 20);
  out.writeUInt16LE(channels, 22);
  out.writeUInt32LE(sampleRate, 24);
  out.writeUInt32LE(sampleRate * channels * bytesPer, 28);
  out.writeUInt16LE(channels * bytesPer, 32);
  out.writeUInt16LE(bytesPer * 8, 34);
  out.write('data', 36, 'latin1');
  out.writeUInt32LE(data, 40);
  for (let i = 0; i < samples.length; i++) {
    if (float) out.writeFloatLE(samples[i] as number, 44 + 4 * i);
    else out.writeInt16LE(samples[i] as number, 44 + 2 * i);
  }
  return out;
}

export function writeWav(path: string, samples: Int16Array | Float32Array, sampleRate: number, channels = 1): string {
  writeFileSync(path, wavBytes(samples, sampleRate, channels));
  return path;
}

/**
 * Where `needle` occurs, sample for sample, inside `haystack` (-1 when nowhere). The capture of a
 * fake mic starts with silence of unknown length, so the played file is searched for, then compared whole.
 */
export function indexOfSamples(haystack: Int16Array, needle: Int16Array): number {
  const first = needle.findIndex((v) => Math.abs(v) > 1000);
  if (first < 0) throw new Error('needle has no loud sample to anchor on');
  const probe = needle.subarray(first, first + 64);
  for (let i = 0; i + probe.length <= haystack.length; i++) {
    if (haystack[i] !== probe[0]) continue;
    let same = true;
    for (let j = 1; j < probe.length && same; j++) same = haystack[i + j] === probe[j];
    if (!same) continue;
    const start = i - first;
    if (start < 0 || start + needle.length > haystack.length) return -1;
    for (let k = 0; k < needle.length; k++) if (haystack[start + k] !== needle[k]) return -1;
    return start;
  }
  return -1;
}

/**
 * What the core encode path makes of Float32 input, computed offline with the session's own
 * FrameEncoder in the same block sizes: the server must have received exactly this (one resampler,
 * nothing else).
 */
export async function encodeOffline(blocks: readonly Float32Array[], inputRate: number, channels: number): Promise<Int16Array> {
  const { FrameEncoder } = await import('@soundclone/core');
  const encoder = new FrameEncoder({ inputRate, channels });
  const parts: Int16Array[] = [];
  const drain = (): void => {
    for (let f = encoder.nextFrame(); f !== null; f = encoder.nextFrame()) {
      parts.push(new Int16Array(f.bytes.slice(FrameEncoder.headerBytes).buffer));
    }
  };
  for (const block of blocks) {
    encoder.write(block);
    drain();
  }
  encoder.flush();
  drain();
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}
