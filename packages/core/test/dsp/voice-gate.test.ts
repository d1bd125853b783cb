import { describe, expect, it } from 'vitest';
import { VoiceGate, type VoiceGateOptions } from '../../src/dsp/voice-gate.js';
import { EnergyVoiceDetector, type VoiceDetector } from '../../src/dsp/voice-detector.js';
import { expectDspError } from '../support/dsp-errors.js';
import { mulberry32 } from '../support/prng.js';

const RATE = 16000;
const ms = (m: number, rate = RATE): number => Math.round((m * rate) / 1000);

/**
 * The gate's logic is checked with an engine whose answer is known by construction: a frame is speech
 * when any of its samples is not zero. The real engine (`EnergyVoiceDetector`) decides on levels, so
 * exact positions would depend on its floor; it has its own tests below, on synthesized noise and tones.
 */
class NonZeroDetector implements VoiceDetector {
  constructor(readonly frameLength: number) {}
  isSpeech(frame: Float32Array): boolean {
    for (let i = 0; i < this.frameLength; i++) if (frame[i] !== 0) return true;
    return false;
  }
  reset(): void {}
}

/** Zeros with 0.5 over each [from, to). */
function signal(length: number, spans: readonly (readonly [number, number])[]): Float32Array {
  const x = new Float32Array(length);
  for (const [from, to] of spans) x.fill(0.5, from, to);
  return x;
}

interface Run {
  /** The sent ranges, adjacent ones merged. */
  ranges: [number, number][];
  starts: number[];
  ends: number[];
  /** Whether every range reached no further back than historySamples before its block. */
  withinHistory: boolean;
}

function runGate(x: Float32Array, options: VoiceGateOptions, block = 128, finish = false): Run {
  const gate = new VoiceGate(options);
  const run: Run = { ranges: [], starts: [], ends: [], withinHistory: true };
  let last = 0;
  const take = (d: { sendFrom: number; sendTo: number; speechStart: number; speechEnd: number }, blockStart: number): void => {
    if (d.sendTo > d.sendFrom) {
      expect(d.sendFrom).toBeGreaterThanOrEqual(last);
      if (d.sendFrom < blockStart - gate.historySamples) run.withinHistory = false;
      const previous = run.ranges[run.ranges.length - 1];
      if (previous !== undefined && previous[1] === d.sendFrom) previous[1] = d.sendTo;
      else run.ranges.push([d.sendFrom, d.sendTo]);
      last = d.sendTo;
    }
    if (d.speechEnd >= 0) run.ends.push(d.speechEnd);
    if (d.speechStart >= 0) run.starts.push(d.speechStart);
  };
  for (let at = 0; at < x.length; at += block) take(gate.process(x.subarray(at, Math.min(x.length, at + block))), at);
  if (finish) take(gate.finish(), x.length);
  return run;
}

const base = { sampleRate: RATE, preRollMs: 300, hangoverMs: 400, commitAfterMs: 800 } as const;
const detector = (): NonZeroDetector => new NonZeroDetector(RATE / 100);

describe('VoiceGate', () => {
  it('sends from pre-roll before the first speech frame to hangover after the last, and ends the utterance after commitAfterMs', () => {
    const x = signal(96000, [[32000, 48000]]);
    const run = runGate(x, { ...base, detector: detector() });
    expect(run.ranges).toEqual([[32000 - ms(300), 48000 + ms(400)]]);
    expect(run.starts).toEqual([32000]);
    expect(run.ends).toEqual([48000]);
    expect(run.withinHistory).toBe(true);
  });

  it('emits speechEnd in the block that completes commitAfterMs of non-speech, not before', () => {
    const gate = new VoiceGate({ ...base, detector: detector() });
    const x = signal(96000, [[32000, 48000]]);
    // speechEnd is due when the frame ending at 48000 + 12800 = 60800 is classified; that frame
    // completes in the block [60672, 60800).
    for (let at = 0; at < x.length; at += 128) {
      const d = gate.process(x.subarray(at, at + 128));
      if (d.speechEnd >= 0) {
        expect(at).toBe(60672);
        return;
      }
    }
    throw new Error('no speechEnd');
  });

  it('starts the frame holding the onset: an onset inside a frame sends pre-roll from that frame', () => {
    const run = runGate(signal(64000, [[32050, 40000]]), { ...base, detector: detector() });
    expect(run.starts).toEqual([32000]);
    expect(run.ranges[0]?.[0]).toBe(32000 - ms(300));
  });

  it('a pause longer than the hangover but shorter than commitAfterMs closes the gate and keeps the utterance', () => {
    // Speech, then 600 ms of silence (> 400 ms hangover, < 800 ms commit), then speech again.
    const x = signal(120000, [[32000, 48000], [57600, 64000]]);
    const run = runGate(x, { ...base, detector: detector() });
    // Closed at 48000 + 6400 = 54400; reopened with pre-roll from 57600 - 4800 = 52800, which was sent already.
    expect(run.ranges).toEqual([[27200, 64000 + ms(400)]]);
    expect(run.starts).toEqual([32000]);
    expect(run.ends).toEqual([64000]);
  });

  it('a pause longer than commitAfterMs gives two utterances, with a gap in what is sent', () => {
    const x = signal(160000, [[32000, 48000], [80000, 96000]]);
    const run = runGate(x, { ...base, detector: detector() });
    expect(run.ranges).toEqual([[27200, 54400], [75200, 102400]]);
    expect(run.starts).toEqual([32000, 80000]);
    expect(run.ends).toEqual([48000, 96000]);
  });

  it('never sends before the first sample, nor a sample twice', () => {
    const run = runGate(signal(48000, [[1600, 8000]]), { ...base, detector: detector() });
    expect(run.ranges).toEqual([[0, 8000 + ms(400)]]);
  });

  it('gives the same ranges and events whatever the block length', () => {
    const x = signal(200000, [[5000, 9000], [31000, 47000], [57000, 58000], [120000, 150000]]);
    const reference = runGate(x, { ...base, detector: detector() }, 128);
    for (const block of [1, 100, 160, 441, 4096]) {
      expect(runGate(x, { ...base, detector: detector() }, block)).toEqual(reference);
    }
  });

  it('counts positions at the capture rate (48 kHz, 480-sample frames)', () => {
    const rate = 48000;
    const x = signal(rate * 4, [[rate * 2, rate * 3]]);
    const run = runGate(x, { sampleRate: rate, preRollMs: 500, hangoverMs: 300, commitAfterMs: 600, detector: new NonZeroDetector(480) });
    expect(run.ranges).toEqual([[rate * 2 - ms(500, rate), rate * 3 + ms(300, rate)]]);
    expect(run.starts).toEqual([rate * 2]);
    expect(run.ends).toEqual([rate * 3]);
  });

  it('finish() ends an utterance still open and sends nothing more', () => {
    const run = runGate(signal(40000, [[32000, 40000]]), { ...base, detector: detector() }, 128, true);
    expect(run.starts).toEqual([32000]);
    expect(run.ends).toEqual([40000]);
    expect(run.ranges).toEqual([[27200, 40000]]);
  });

  it('keeps historySamples for the pre-roll plus one frame', () => {
    expect(new VoiceGate({ ...base, detector: detector() }).historySamples).toBe(ms(300) + 160);
  });

  it('refuses options out of range', () => {
    expectDspError(() => new VoiceGate({ ...base, hangoverMs: 900, commitAfterMs: 800 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new VoiceGate({ ...base, preRollMs: -1 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new VoiceGate({ ...base, sampleRate: 4000 }), 'DSP_UNSUPPORTED_RATE');
    expectDspError(() => new VoiceGate({ ...base, detector: new NonZeroDetector(0) }), 'DSP_INVALID_OPTION');
  });
});

describe('EnergyVoiceDetector', () => {
  function whiteNoise(length: number, rms: number, seed: number): Float32Array {
    const random = mulberry32(seed);
    const x = new Float32Array(length);
    for (let i = 0; i < length; i++) x[i] = (random() - 0.5) * rms * Math.sqrt(12);
    return x;
  }

  /** A voiced-like burst: harmonics of 140 Hz up to 3.5 kHz, at `rms`. */
  function voiced(length: number, rms: number, rate: number): Float32Array {
    const x = new Float32Array(length);
    let power = 0;
    for (let h = 1; h * 140 < 3500; h++) {
      for (let i = 0; i < length; i++) x[i] += Math.sin((2 * Math.PI * 140 * h * i) / rate) / h;
      power += 0.5 / (h * h);
    }
    const gain = rms / Math.sqrt(power);
    for (let i = 0; i < length; i++) x[i] *= gain;
    return x;
  }

  function speechFrames(detector: EnergyVoiceDetector, x: Float32Array): number[] {
    const out: number[] = [];
    const n = detector.frameLength;
    for (let f = 0; f + n <= x.length; f += n) if (detector.isSpeech(x.subarray(f, f + n))) out.push(f);
    return out;
  }

  const dbfs = (db: number): number => 10 ** (db / 20);

  it('hears a voiced burst 10 dB above white noise from its first frame, and none of the noise after the floor has settled', () => {
    const x = whiteNoise(RATE * 5, dbfs(-45), 1);
    const burst = voiced(RATE, dbfs(-35), RATE);
    for (let i = 0; i < burst.length; i++) x[RATE * 3 + i] += burst[i]!;
    const frames = speechFrames(new EnergyVoiceDetector(RATE), x);
    const inNoise = frames.filter((f) => f >= RATE * 0.5 && f < RATE * 3);
    expect(inNoise).toEqual([]);
    expect(frames.filter((f) => f >= RATE * 3)[0]).toBe(RATE * 3);
  });

  it('hears a quiet speaker (-35 dBFS) in digital silence at its first frame, at 48 kHz', () => {
    const rate = 48000;
    const x = new Float32Array(rate * 3);
    x.set(voiced(rate, dbfs(-35), rate), rate * 2);
    const frames = speechFrames(new EnergyVoiceDetector(rate), x);
    expect(frames[0]).toBe(rate * 2);
    expect(frames.every((f) => f >= rate * 2 && f < rate * 3)).toBe(true);
  });

  it('hears a fricative-like hiss (3.5-7 kHz band) over low-frequency rumble louder than it overall', () => {
    const random = mulberry32(3);
    const x = new Float32Array(RATE * 4);
    // Rumble: 100 Hz and 200 Hz tones at -30 dBFS, throughout.
    for (let i = 0; i < x.length; i++) x[i] = dbfs(-33) * (Math.sin((2 * Math.PI * 100 * i) / RATE) + Math.sin((2 * Math.PI * 200 * i) / RATE));
    // Hiss from 3 s: white noise differentiated twice (rising with frequency), -45 dBFS overall.
    let p1 = 0, p2 = 0;
    for (let i = RATE * 3; i < x.length; i++) {
      const w = (random() - 0.5) * dbfs(-45) * Math.sqrt(12);
      x[i] += (w - 2 * p1 + p2) / 4;
      p2 = p1; p1 = w;
    }
    const frames = speechFrames(new EnergyVoiceDetector(RATE), x);
    expect(frames.filter((f) => f >= RATE && f < RATE * 3)).toEqual([]);
    expect(frames.filter((f) => f >= RATE * 3)[0]).toBe(RATE * 3);
  });

  it('forgets its floor on reset(): the same input gives the same answers', () => {
    const detector = new EnergyVoiceDetector(RATE);
    const x = whiteNoise(RATE * 3, dbfs(-50), 5);
    x.set(voiced(RATE / 2, dbfs(-30), RATE), RATE * 2);
    const first = speechFrames(detector, x);
    detector.reset();
    expect(speechFrames(detector, x)).toEqual(first);
    expect(first.length).toBeGreaterThan(0);
  });

  it('drives the gate at 44.1 kHz: 441-sample frames, onset and pre-roll counted in capture samples', () => {
    const rate = 44100;
    const x = new Float32Array(rate * 4);
    x.set(voiced(rate, dbfs(-35), rate), rate * 2);
    const gate = new VoiceGate({ sampleRate: rate, preRollMs: 500, hangoverMs: 400, commitAfterMs: 800 });
    expect(gate.detector.frameLength).toBe(441);
    let start = -1, end = -1, from = -1;
    for (let at = 0; at < x.length; at += 128) {
      const d = gate.process(x.subarray(at, at + 128));
      if (d.speechStart >= 0) start = d.speechStart;
      if (d.speechEnd >= 0) end = d.speechEnd;
      if (from < 0 && d.sendTo > d.sendFrom) from = d.sendFrom;
    }
    expect(start).toBe(rate * 2);
    expect(from).toBe(rate * 2 - ms(500, rate));
    // The burst's last frame ends at 3 s; its filters ring for part of a frame more at most.
    expect(end).toBeGreaterThanOrEqual(rate * 3);
    expect(end).toBeLessThanOrEqual(rate * 3 + 2 * 441);
  });

  it('refuses a rate it does not take and thresholds out of range', () => {
    expectDspError(() => new EnergyVoiceDetector(4000), 'DSP_UNSUPPORTED_RATE');
    expectDspError(() => new EnergyVoiceDetector(RATE, { thresholdDb: 0 }), 'DSP_INVALID_OPTION');
    expectDspError(() => new EnergyVoiceDetector(RATE, { absoluteFloorDb: 10 }), 'DSP_INVALID_OPTION');
  });
});
