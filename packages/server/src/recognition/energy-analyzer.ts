import { fnv1a } from '../util/random.js';
import { WORDS } from './words.js';
import type { RecognizedSegment, RecognizedWord } from './recognizer.js';

/**
 * Energy-based voice activity over 20 ms frames at 16 kHz, shared by batch and streaming so the same
 * audio gives the same words either way. A word is a run of voiced frames ended by >= wordGapMs of
 * silence; a segment ends after >= segmentSilenceMs of silence. A word's text is chosen from WORDS by
 * hashing its quantised zero-crossing rate, duration and level: deterministic, content-dependent.
 *
 *   frame: rms > threshold ? voiced : silent
 *   silent run >= wordGapMs     -> close word
 *   silent run >= segmentSilenceMs (after a word) -> close segment
 */
export interface EnergyTuning {
  readonly frameSamples: number;
  readonly threshold: number;
  readonly wordGapMs: number;
  readonly segmentSilenceMs: number;
  readonly minWordMs: number;
}

export const DEFAULT_TUNING: EnergyTuning = {
  frameSamples: 320,
  threshold: 0.02,
  wordGapMs: 60,
  segmentSilenceMs: 400,
  minWordMs: 40,
};

const SAMPLE_RATE = 16_000;

/** What an analyzer continuing another one's clean point starts from (EnergyAnalyzer.cleanPoint). */
export interface EnergyRestart {
  readonly frameIndex: number;
  readonly prevSign: number;
}

interface OpenWord {
  startFrame: number;
  endFrame: number;
  zeroCrossings: number;
  energy: number;
  frames: number;
}

export class EnergyAnalyzer {
  private readonly frame: Float32Array;
  private fill = 0;
  private frameIndex = 0;
  private word: OpenWord | undefined;
  private silentFrames = 0;
  private words: RecognizedWord[] = [];
  private prevSign = 0;
  private readonly frameMs: number;
  /** Samples pushed before the current push call. */
  private pushed = 0;
  /** Samples taken up to the end of the frame being analysed (restart points, cleanPoint). */
  private taken = 0;

  constructor(
    private readonly tuning: EnergyTuning = DEFAULT_TUNING,
    private readonly onSegment: (segment: RecognizedSegment) => void,
    private readonly onWord: () => void = () => {},
    /** Continue from a clean point of an earlier analyzer (its frame count and last sign). */
    from?: EnergyRestart,
  ) {
    this.frame = new Float32Array(tuning.frameSamples);
    this.frameMs = (tuning.frameSamples * 1000) / SAMPLE_RATE;
    if (from !== undefined) {
      this.frameIndex = from.frameIndex;
      this.prevSign = from.prevSign;
    }
  }

  /**
   * Where this analyzer stands when nothing is open (no partial frame, no word, no segment): samples
   * taken so far and what a new analyzer needs to go on exactly as this one would. Undefined otherwise.
   */
  cleanPoint(): { readonly atSample: number; readonly restart: EnergyRestart } | undefined {
    if (this.fill !== 0 || this.word !== undefined || this.words.length > 0) return undefined;
    return { atSample: this.taken, restart: { frameIndex: this.frameIndex, prevSign: this.prevSign } };
  }

  /** Text of the words of the open segment. */
  get openText(): string {
    return this.words.map((w) => w.text).join(' ');
  }

  /** Feeds samples in [-1, 1]; `scale` converts integer input (1/32768 for PCM16). */
  push(samples: ArrayLike<number>, scale = 1): void {
    for (let i = 0; i < samples.length; i++) {
      this.frame[this.fill++] = (samples[i] as number) * scale;
      if (this.fill === this.frame.length) {
        this.taken = this.pushed + i + 1;
        this.analyseFrame(this.fill);
      }
    }
    this.pushed += samples.length;
  }

  /** Ends the stream: a partial frame is analysed, the open word and segment are closed. */
  flush(): void {
    this.taken = this.pushed;
    if (this.fill > 0) this.analyseFrame(this.fill);
    this.closeWord();
    this.closeSegment();
  }

  private analyseFrame(length: number): void {
    let sum = 0;
    let crossings = 0;
    for (let i = 0; i < length; i++) {
      const v = this.frame[i] as number;
      sum += v * v;
      const sign = v > 0 ? 1 : v < 0 ? -1 : 0;
      if (sign !== 0 && this.prevSign !== 0 && sign !== this.prevSign) crossings++;
      if (sign !== 0) this.prevSign = sign;
    }
    const rms = Math.sqrt(sum / Math.max(1, length));
    const index = this.frameIndex++;
    this.fill = 0;
    if (rms > this.tuning.threshold) {
      this.silentFrames = 0;
      if (this.word === undefined) this.word = { startFrame: index, endFrame: index, zeroCrossings: 0, energy: 0, frames: 0 };
      this.word.endFrame = index;
      this.word.zeroCrossings += crossings;
      this.word.energy += rms;
      this.word.frames++;
      return;
    }
    this.silentFrames++;
    const silentMs = this.silentFrames * this.frameMs;
    if (this.word !== undefined && silentMs >= this.tuning.wordGapMs) this.closeWord();
    if (this.word === undefined && this.words.length > 0 && silentMs >= this.tuning.segmentSilenceMs) this.closeSegment();
  }

  private closeWord(): void {
    const open = this.word;
    this.word = undefined;
    if (open === undefined) return;
    const startMs = Math.round(open.startFrame * this.frameMs);
    const endMs = Math.round((open.endFrame + 1) * this.frameMs);
    if (endMs - startMs < this.tuning.minWordMs) return;
    const zcPerFrame = open.zeroCrossings / open.frames;
    const level = 20 * Math.log10(open.energy / open.frames);
    const key = `${Math.round(zcPerFrame / 4)}:${Math.round((endMs - startMs) / 100)}:${Math.round(level / 6)}`;
    const text = WORDS[fnv1a(key) % WORDS.length] as string;
    // Below ~300 Hz (12 crossings per 20 ms frame) is speaker 0, above is speaker 1.
    const speakerIndex = zcPerFrame < 12 ? 0 : 1;
    const confidence = Math.min(0.99, 0.5 + open.frames / 100);
    this.words.push({ text, startMs, endMs, confidence: Math.round(confidence * 100) / 100, speakerIndex });
    this.onWord();
  }

  private closeSegment(): void {
    if (this.words.length === 0) return;
    const words = this.words;
    this.words = [];
    const first = words[0] as RecognizedWord;
    const last = words[words.length - 1] as RecognizedWord;
    this.onSegment({ startMs: first.startMs, endMs: last.endMs, words, speakerIndex: first.speakerIndex });
  }
}
