import { Resampler, isSupportedRate } from '@soundclone/core';
import { RECOGNIZER_SAMPLE_RATE, type ChannelFeed } from '../recognition/recognizer.js';
import type { DecodedTrack } from './decode.js';

/** Output samples per block: one second at 16 kHz (64 KiB of Float32). */
const BLOCK_OUT = RECOGNIZER_SAMPLE_RATE;

/**
 * One channel of a kept track (or the average of its channels, 'mix') as 16 kHz Float32 blocks, decoded
 * from the compact PcmSource as the recogniser consumes them: a transcription never holds the whole
 * track as Float32, at the native rate or at 16 kHz. Each `blocks()` call starts over.
 *
 * Rates the SDK's resampler takes go through it (exact counts, no delay), so the server hears what a
 * client's encode path would send; other rates (a WAV may be at any rate) are interpolated linearly,
 * which the energy recogniser tolerates.
 *
 * GC: each iteration allocates its input and output blocks once; a yielded block is valid until the
 * next step of the same iterator (consumers copy or use it at once).
 */
export function feedOf(track: DecodedTrack, select: number | 'mix'): ChannelFeed {
  const rate = track.sampleRate;
  // Both conversions produce exactly floor(frames · 16000 / rate) samples.
  const samples = rate === RECOGNIZER_SAMPLE_RATE ? track.frames : Math.floor((track.frames * RECOGNIZER_SAMPLE_RATE) / rate);
  return {
    samples,
    blocks: () => (rate === RECOGNIZER_SAMPLE_RATE ? direct(track, select) : isSupportedRate(rate) ? resampled(track, select) : interpolated(track, select)),
  };
}

function* direct(track: DecodedTrack, select: number | 'mix'): Generator<Float32Array> {
  const block = new Float32Array(BLOCK_OUT);
  for (let at = 0; at < track.frames; at += BLOCK_OUT) {
    const n = track.source.readInto(at, BLOCK_OUT, select, block);
    yield block.subarray(0, n);
  }
}

function* resampled(track: DecodedTrack, select: number | 'mix'): Generator<Float32Array> {
  const resampler = new Resampler({ inputRate: track.sampleRate, outputRate: RECOGNIZER_SAMPLE_RATE });
  const inFrames = Math.ceil((BLOCK_OUT * track.sampleRate) / RECOGNIZER_SAMPLE_RATE);
  const input = new Float32Array(inFrames);
  const output = new Float32Array(Math.max(resampler.maxOutputFor(inFrames), resampler.pendingFlush + resampler.latencyFrames + BLOCK_OUT));
  for (let at = 0; at < track.frames; at += inFrames) {
    const n = track.source.readInto(at, inFrames, select, input);
    const written = resampler.process(n === inFrames ? input : input.subarray(0, n), output);
    if (written > 0) yield output.subarray(0, written);
  }
  const rest = resampler.flush(output);
  if (rest > 0) yield output.subarray(0, rest);
}

/** Linear interpolation with random access into the source: output i reads input floor(i·step) and the next. */
function* interpolated(track: DecodedTrack, select: number | 'mix'): Generator<Float32Array> {
  const step = track.sampleRate / RECOGNIZER_SAMPLE_RATE;
  const total = Math.floor((track.frames * RECOGNIZER_SAMPLE_RATE) / track.sampleRate);
  const output = new Float32Array(BLOCK_OUT);
  const input = new Float32Array(Math.ceil(BLOCK_OUT * step) + 2);
  for (let o0 = 0; o0 < total; o0 += BLOCK_OUT) {
    const count = Math.min(BLOCK_OUT, total - o0);
    const first = Math.floor(o0 * step);
    const read = track.source.readInto(first, input.length, select, input);
    for (let k = 0; k < count; k++) {
      const pos = (o0 + k) * step;
      const i0 = Math.floor(pos);
      const frac = pos - i0;
      const j = i0 - first;
      const a = j < read ? (input[j] as number) : 0;
      const b = j + 1 < read ? (input[j + 1] as number) : a;
      output[k] = a + (b - a) * frac;
    }
    yield output.subarray(0, count);
  }
}

/**
 * The whole channel as one Float32Array, for a Recognizer that takes only whole channels
 * (`recognize`); bounded by SERVER_LIMITS.mediaMaxDurationMs at 4 bytes a sample.
 */
export function collect(feed: ChannelFeed): Float32Array {
  const out = new Float32Array(feed.samples);
  let at = 0;
  for (const block of feed.blocks()) {
    const n = Math.min(block.length, out.length - at);
    out.set(n === block.length ? block : block.subarray(0, n), at);
    at += n;
  }
  return at === out.length ? out : out.subarray(0, at);
}
