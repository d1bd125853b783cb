import { DspError } from '../errors/dsp-error.js';
import { assertSupportedRate } from './rates.js';
import { EnergyVoiceDetector, type VoiceDetector } from './voice-detector.js';

/**
 * The defaults, chosen on `pnpm bench:vad` (bench/results/vad.md): a 400 ms pre-roll is the shortest
 * measured that sends the 200 ms before every onset in white and pink noise at 10 dB SNR (300 ms missed
 * 4 % of them); a 300 ms hangover still sends every sample of the utterances, and 100 ms less of each
 * pause than 400 ms would.
 */
export const VOICE_GATE_DEFAULTS = { preRollMs: 400, hangoverMs: 300, commitAfterMs: 800 } as const;

export interface VoiceGateOptions {
  /** Rate of the blocks given to `process` (one of `SUPPORTED_RATES`), Hz; positions are counted in these samples. */
  readonly sampleRate: number;
  /**
   * Audio sent from before the first speech frame, ms, so a soft onset the detector did not hear (a
   * fricative under noise) is not cut. Default 400.
   */
  readonly preRollMs?: number;
  /** Audio still sent after the last speech frame, ms (trailing consonants, short pauses). Default 300. */
  readonly hangoverMs?: number;
  /**
   * Non-speech after the last speech frame before the utterance ends (`speechEnd`), ms. At least
   * `hangoverMs`; speech that resumes within it continues the same utterance. Default 800.
   */
  readonly commitAfterMs?: number;
  /** The engine; made for `sampleRate`. Default: an `EnergyVoiceDetector`. */
  readonly detector?: VoiceDetector;
}

/**
 * What to do after one block, the same object every call (read it before the next). Positions are
 * sample counts since the first sample given to the gate.
 */
export interface VoiceGateDecision {
  /** Send samples [sendFrom, sendTo); nothing when they are equal. Ranges never overlap and only grow. */
  sendFrom: number;
  sendTo: number;
  /** First sample of the first speech frame of an utterance that started in this block, or -1. */
  speechStart: number;
  /** One past the last speech frame of an utterance that ended in this block, or -1. When both are set, speechEnd < speechStart. */
  speechEnd: number;
}

/**
 * A voice-activity gate for the capture path: decides, block by block, which samples to send and where
 * utterances start and end. It returns decisions and holds no audio: its owner keeps the last
 * `historySamples` samples before the current block (a `SampleRing`), since a decision can reach back
 * that far (the pre-roll).
 *
 * ```
 *              speech frame                     non-speech for hangoverMs
 *   closed ────────────────────▶ open ─────────────────────────────────────▶ closed
 *   (send nothing)   send from the frame's start   (send every block)     (send up to last speech
 *                    minus preRollMs (not before                           + hangoverMs)
 *                    what was already sent)
 *
 *   speechStart: the first speech frame after an utterance ended (or the first ever)
 *   speechEnd:   commitAfterMs of non-speech after the last speech frame
 * ```
 *
 * Frames are the detector's (10 ms for the default engine), cut from the blocks whatever their
 * length; the samples of a block past its last whole frame are sent when the gate is open after it.
 * All memory is allocated in the constructor; `process` allocates nothing.
 */
export class VoiceGate {
  /** Samples before the current block its owner must keep for the pre-roll. */
  readonly historySamples: number;
  readonly detector: VoiceDetector;
  readonly #decision: VoiceGateDecision = { sendFrom: 0, sendTo: 0, speechStart: -1, speechEnd: -1 };
  readonly #frame: Float32Array;
  readonly #preRoll: number;
  readonly #hangover: number;
  readonly #commitAfter: number;
  #fill = 0;
  #position = 0;
  #open = false;
  #inUtterance = false;
  #lastSpeechEnd = 0;
  #sentUntil = 0;

  constructor(options: VoiceGateOptions) {
    const { sampleRate } = options;
    assertSupportedRate(sampleRate, 'VoiceGate sampleRate');
    const preRollMs = options.preRollMs ?? VOICE_GATE_DEFAULTS.preRollMs;
    const hangoverMs = options.hangoverMs ?? VOICE_GATE_DEFAULTS.hangoverMs;
    const commitAfterMs = options.commitAfterMs ?? VOICE_GATE_DEFAULTS.commitAfterMs;
    for (const [name, value] of [['preRollMs', preRollMs], ['hangoverMs', hangoverMs], ['commitAfterMs', commitAfterMs]] as const) {
      if (!(value >= 0 && value <= 10000)) throw new DspError('DSP_INVALID_OPTION', `${name} must be in [0, 10000], got ${value}`);
    }
    if (commitAfterMs < hangoverMs) {
      throw new DspError('DSP_INVALID_OPTION', `commitAfterMs (${commitAfterMs}) must be at least hangoverMs (${hangoverMs})`);
    }
    const samples = (ms: number): number => Math.round((ms * sampleRate) / 1000);
    this.#preRoll = samples(preRollMs);
    this.#hangover = samples(hangoverMs);
    this.#commitAfter = samples(commitAfterMs);
    this.detector = options.detector ?? new EnergyVoiceDetector(sampleRate);
    const frameLength = this.detector.frameLength;
    if (!Number.isInteger(frameLength) || frameLength < 1) {
      throw new DspError('DSP_INVALID_OPTION', `the detector's frameLength must be a positive integer, got ${frameLength}`);
    }
    this.#frame = new Float32Array(frameLength);
    this.historySamples = this.#preRoll + frameLength;
  }

  /** Samples given so far. */
  get position(): number {
    return this.#position;
  }

  /** Whether the gate sends the samples that follow. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Takes the next block (any length) and says what to send and which utterance edges it held. */
  process(block: Float32Array): VoiceGateDecision {
    const d = this.#decision;
    d.speechStart = -1;
    d.speechEnd = -1;
    let from = this.#open ? this.#sentUntil : -1;
    let closedAt = -1;
    const frame = this.#frame;
    const frameLength = frame.length;
    const start = this.#position;
    let i = 0;
    while (i < block.length) {
      // A copy loop rather than set(subarray(...)): subarray makes a view object per call.
      const take = Math.min(frameLength - this.#fill, block.length - i);
      for (let k = 0, f = this.#fill; k < take; k++) frame[f + k] = block[i + k];
      this.#fill += take;
      i += take;
      if (this.#fill < frameLength) break;
      this.#fill = 0;
      const frameEnd = start + i;
      const frameStart = frameEnd - frameLength;
      if (this.detector.isSpeech(frame)) {
        if (!this.#open) {
          this.#open = true;
          const preRolled = Math.max(this.#sentUntil, frameStart - this.#preRoll, 0);
          if (from < 0) from = preRolled;
        }
        if (!this.#inUtterance) {
          this.#inUtterance = true;
          d.speechStart = frameStart;
        }
        this.#lastSpeechEnd = frameEnd;
      } else {
        const silent = frameEnd - this.#lastSpeechEnd;
        if (this.#open && silent >= this.#hangover) {
          this.#open = false;
          closedAt = this.#lastSpeechEnd + this.#hangover;
        }
        if (this.#inUtterance && silent >= this.#commitAfter) {
          this.#inUtterance = false;
          d.speechEnd = this.#lastSpeechEnd;
        }
      }
    }
    this.#position = start + block.length;
    if (from < 0) {
      d.sendFrom = d.sendTo = this.#sentUntil;
    } else {
      const to = this.#open ? this.#position : Math.max(closedAt, this.#sentUntil);
      d.sendFrom = from;
      d.sendTo = to;
      this.#sentUntil = to;
    }
    return d;
  }

  /**
   * The end of the stream: ends an utterance still open (its `speechEnd` at the last speech frame) and
   * sends nothing more. The gate starts over after it, positions counting on.
   */
  finish(): VoiceGateDecision {
    const d = this.#decision;
    d.speechStart = -1;
    d.speechEnd = this.#inUtterance ? this.#lastSpeechEnd : -1;
    d.sendFrom = d.sendTo = this.#sentUntil;
    this.#inUtterance = false;
    this.#open = false;
    this.#fill = 0;
    this.detector.reset();
    return d;
  }
}
