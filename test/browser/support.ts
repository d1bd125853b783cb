import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import type { ResamplerKernel } from '@soundclone/core';
import { encodeStream } from '../realtime/offline-encode.ts';

/**
 * Real-Chromium helpers for the web-audio tests: Debian's chromium driven by playwright-core
 * (no browser download), its fake capture device fed from a WAV made here, and the Node-side
 * references the captured audio is compared with.
 */
export const CHROMIUM = '/usr/bin/chromium';
export const ARTIFACTS = join(dirname(fileURLToPath(import.meta.url)), '..', 'artifacts', 'browser');

/**
 * `autoAccept: false` leaves out the flag that grants every getUserMedia prompt: a page then gets the
 * microphone only from its context's permissions (browser.newContext({ permissions: ['microphone'] })),
 * and clearing them revokes it for real (Chromium ends the live track; getUserMedia refuses).
 */
export async function launchChromium(wavPath: string, options: { autoAccept?: boolean } = {}): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: these tests drive Debian's Chromium. Install it with \`apt-get install chromium\` (scripts/setup.sh does).`);
  }
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
      ...(options.autoAccept === false ? [] : ['--use-fake-ui-for-media-stream']), '--use-fake-device-for-media-stream',
      // %noloop: the file plays once per getUserMedia, then silence.
      `--use-file-for-fake-audio-capture=${wavPath}%noloop`,
      '--autoplay-policy=no-user-gesture-required',
    ],
    timeout: 30_000,
  });
}

export interface SpeechWavOptions {
  /** The lead-in before the first line, ms (default 1000). */
  readonly leadMs?: number;
  /** The pause after each of the three lines, ms (default 750, 900, 650). */
  readonly pausesMs?: readonly [number, number, number];
  /**
   * Each line's first word: tone Hz, ms, amplitude (default 250/260/0.5, 520/360/0.5, 330/200/0.5).
   * The recogniser's word is keyed by zero crossings per 20 ms / 4, tenths of a second and dB / 6,
   * each rounded: a tone whose features sit mid-bucket (200 Hz: 8 crossings; 200 ms; -12 dB) gives the
   * same word in every run, where one on a bucket's edge (250 Hz: 10 crossings, 2.5) may not. The
   * partly covered frames at a word's edges lower its mean crossings: a short high tone (700 Hz for
   * 200 ms: 28, but about 25.5 with its edges) falls into the bucket below in some runs.
   */
  readonly firstWords?: readonly (readonly [number, number, number])[];
}

/** The fake microphone's script: 1 s of lead-in, then "lines" of tone bursts (words) and pauses (`pausesMs` after each line: longer ones for the voice gate). */
export const WAV_RATE = 44_100;

export function speechWav(options: SpeechWavOptions = {}): { samples: Float32Array; pcm: Int16Array } {
  const parts: Array<{ tone?: number; ms: number; amplitude?: number }> = [{ ms: options.leadMs ?? 1000 }];
  const pauses = options.pausesMs ?? [750, 900, 650];
  const firsts = options.firstWords ?? [[250, 260, 0.5], [520, 360, 0.5], [330, 200, 0.5]];
  // Lines of different lengths, so that no shift by a whole line lines the envelopes up again.
  for (const [k, gap] of pauses.entries()) {
    const [base, first, amplitude] = firsts[k]!;
    // 400 Hz for 300 ms at -12 dB RMS is "bob" (recogniser key 4:3:-2: 16 crossings per frame / 4,
    // 3 tenths of a second, level / 6 dB), which its entity pass calls a name. Each feature sits in
    // the middle of its bucket, so the word does not depend on where the 20 ms frames fall.
    parts.push({ tone: base, ms: first, amplitude }, { ms: 110 }, { tone: 400, ms: 300, amplitude: 0.355 }, { ms: gap });
  }
  parts.push({ ms: 400 });
  const total = parts.reduce((n, p) => n + Math.round((p.ms * WAV_RATE) / 1000), 0);
  const pcm = new Int16Array(total);
  let at = 0;
  let seed = 12345;
  for (const p of parts) {
    const n = Math.round((p.ms * WAV_RATE) / 1000);
    for (let i = 0; i < n; i++, at++) {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      // About -56 dBFS, every sample different (so the bit-exact checks mean something), far below the
      // recogniser's voicing threshold, and positive: noise that crossed zero would add crossings to
      // a burst's edge frames and move its zero-crossing rate (and so its word) from run to run.
      const noise = 10 + ((seed >>> 16) % 80);
      const ramp = Math.min(1, i / 200, (n - i) / 200); // no clicks at the edges of a burst
      const tone = p.tone === undefined ? 0 : (p.amplitude ?? 0.5) * 32767 * ramp * Math.sin((2 * Math.PI * p.tone * i) / WAV_RATE);
      pcm[at] = Math.round(tone) + noise;
    }
  }
  return { pcm, samples: Float32Array.from(pcm, (v) => v / 32768) };
}

export function writeWav(path: string, pcm: Int16Array, rate: number): void {
  mkdirSync(dirname(path), { recursive: true });
  const header = Buffer.alloc(44);
  header.write('RIFF', 0);
  header.writeUInt32LE(36 + pcm.byteLength, 4);
  header.write('WAVEfmt ', 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36);
  header.writeUInt32LE(pcm.byteLength, 40);
  writeFileSync(path, Buffer.concat([header, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}

/** What the page's encoder must have produced: the session's FrameEncoder over the same input, in Node. */
export function encodeLikeThePage(input: Float32Array, inputRate: number, kernel: ResamplerKernel): Int16Array {
  return encodeStream(input, inputRate, { kernel });
}

export function decodeFloat32(base64: string): Float32Array {
  const bytes = Buffer.from(base64, 'base64');
  return new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
}

/**
 * What the server must hold when the page handed on `input` with a segment ending at each of `ends`
 * (frames into `input`, in order): every stretch resampled on its own (encodeLikeThePage, at its own
 * rate when `rate` lists one per stretch), one after the other. `cuts[k]` is where stretch k + 1
 * starts in the session's stream (a gap's atSample, a drop's sessionSample).
 */
export function stretchesLikeThePage(input: Float32Array, ends: readonly number[], rate: number | readonly number[], kernel: ResamplerKernel): { parts: Int16Array[]; expected: Int16Array; cuts: number[] } {
  const bounds = [0, ...ends, input.length];
  const parts = bounds.slice(1).map((end, k) => encodeLikeThePage(input.subarray(bounds[k], end), typeof rate === 'number' ? rate : (rate[k] as number), kernel));
  const expected = new Int16Array(parts.reduce((n, p) => n + p.length, 0));
  const cuts: number[] = [];
  parts.reduce((at, p, k) => {
    if (k > 0) cuts.push(at);
    expected.set(p, at);
    return at + p.length;
  }, 0);
  return { parts, expected, cuts };
}

export function pearson(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = 0; i < n; i++) {
    const x = a[i]! - ma;
    const y = b[i]! - mb;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return ab / Math.sqrt(aa * bb + 1e-30);
}

/**
 * Where `reference` sits inside `captured` (the fake device starts the file when getUserMedia opens
 * it, a little before the worklet sees its first sample): coarse on 10 ms energy envelopes, then
 * sample by sample around the best coarse lag. Returns the lag and the waveform correlation there.
 */
export function align(captured: Float32Array, reference: Float32Array, rate: number): { lag: number; envelope: number; waveform: number } {
  const hop = rate / 100;
  const env = (x: Float32Array): Float32Array =>
    Float32Array.from({ length: Math.floor(x.length / hop) }, (_, i) => {
      let s = 0;
      for (let j = i * hop; j < (i + 1) * hop; j++) s += x[j]! * x[j]!;
      return Math.sqrt(s / hop);
    });
  const ce = env(captured);
  const re = env(reference);
  let coarse = { d: 0, c: -1 };
  for (let d = -re.length + 50; d < ce.length - 50; d++) {
    const a0 = Math.max(0, d);
    const r0 = a0 - d;
    const n = Math.min(ce.length - a0, re.length - r0);
    const c = pearson(ce.subarray(a0, a0 + n), re.subarray(r0, r0 + n));
    if (c > coarse.c) coarse = { d, c };
  }
  let fine = { lag: 0, c: -1 };
  for (let lag = (coarse.d - 1) * hop; lag <= (coarse.d + 1) * hop; lag++) {
    const a0 = Math.max(0, lag);
    const r0 = a0 - lag;
    const n = Math.min(captured.length - a0, reference.length - r0);
    const c = pearson(captured.subarray(a0, a0 + n), reference.subarray(r0, r0 + n));
    if (c > fine.c) fine = { lag, c };
  }
  return { lag: fine.lag, envelope: coarse.c, waveform: fine.c };
}

/**
 * The capture against the reference at every burst onset: a 40 ms window around each silence-to-tone
 * edge of the reference, found in the capture by correlation. Pure tones are periodic, so only a
 * window that holds an edge pins the timing down. Returns each onset's lag (capture index minus
 * reference index) and correlation; a capture glitch upstream of the worklet (Chromium's fake device
 * skipping or repeating 10 ms on a loaded machine) shows as a step between consecutive lags.
 */
export function onsetMatches(captured: Float32Array, reference: Float32Array, around: number, search: number): Array<{ at: number; lag: number; c: number }> {
  const onsets: number[] = [];
  let quiet = 0;
  for (let i = 0; i < reference.length; i++) {
    if (Math.abs(reference[i]!) < 0.05) quiet++;
    else {
      if (quiet > 800) onsets.push(i);
      quiet = 0;
    }
  }
  const W = 640;
  return onsets.map((at) => {
    const r0 = at - W / 2;
    const seg = reference.subarray(r0, r0 + W);
    let best = { at, lag: 0, c: -1 };
    for (let lag = around - search; lag <= around + search; lag++) {
      const a0 = r0 + lag;
      if (a0 < 0 || a0 + W > captured.length) continue;
      const c = pearson(captured.subarray(a0, a0 + W), seg);
      if (c > best.c) best = { at, lag, c };
    }
    return best;
  });
}
