import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeMedia } from '../../src/media/decode.js';
import { DEBIAN_MODEL_DIR } from '../../src/recognition/pocketsphinx/native.js';

/** Debian's pocketsphinx-testdata (installed by npm run setup): real speech with known words. */
export const LIBRIVOX = '/usr/share/pocketsphinx/test/data/librivox';
export const CLIP_0870 = { path: `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0870.wav`, text: 'and mister john dashwood had then leisure to consider how much there might be prudently in his power to do for them' };
export const CLIP_0880 = { path: `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0880.wav`, text: 'he was not an ill disposed young man' };
export const CLIP_0930 = { path: `${LIBRIVOX}/sense_and_sensibility_01_austen_64kb-0930.wav`, text: 'he might even have been made amiable himself' };

/** The clip as 16 kHz PCM16; a clear failure naming the package when it is missing. */
export function readClip(path: string): Int16Array {
  if (!existsSync(path)) throw new Error(`${path} is missing: install the Debian package pocketsphinx-testdata (npm run setup does)`);
  const track = decodeMedia(readFileSync(path), 'audio/wav').tracks[0]!;
  if (track.sampleRate !== 16_000) throw new Error(`${path}: expected 16 kHz, got ${track.sampleRate}`);
  if (track.source.encoding !== 's16le' || track.channelCount !== 1) throw new Error(`${path}: expected 16-bit mono`);
  // The kept bytes are the clip's own samples; copied so the Int16Array is aligned.
  const bytes = Buffer.from(track.source.bytes.subarray(0, track.frames * 2));
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
}

export function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Word edit distance over reference length. */
export function wer(reference: string, hypothesis: string): number {
  const r = reference.split(' ').filter(Boolean);
  const h = hypothesis.split(' ').filter(Boolean);
  let previous = Array.from({ length: h.length + 1 }, (_, j) => j);
  for (let i = 1; i <= r.length; i++) {
    const current = [i];
    for (let j = 1; j <= h.length; j++) current.push(Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, (previous[j - 1] as number) + (r[i - 1] === h[j - 1] ? 0 : 1)));
    previous = current;
  }
  return (previous[h.length] as number) / r.length;
}

/**
 * Debian's model, linked file by file into a temporary directory, so a test can take a file away after
 * the server started (a model that breaks underneath a running recognizer).
 */
export function linkedModel(): { dir: string; remove: (file: string) => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ps-model-'));
  mkdirSync(join(dir, 'en-us'));
  for (const file of readdirSync(join(DEBIAN_MODEL_DIR, 'en-us'))) symlinkSync(join(DEBIAN_MODEL_DIR, 'en-us', file), join(dir, 'en-us', file));
  for (const file of ['en-us.lm.bin', 'cmudict-en-us.dict']) symlinkSync(join(DEBIAN_MODEL_DIR, file), join(dir, file));
  return { dir, remove: (file) => rmSync(join(dir, file)) };
}
