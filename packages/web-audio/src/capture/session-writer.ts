import type { ResamplerKernel } from '@soundclone/core';
import type { SourceGateSink } from '@soundclone/core/internal';
import { WebAudioError } from '../errors.js';
import type { CaptureSession } from './session.js';

/**
 * The context's audio to the session, on the page's thread, with no encoder of its own: the session
 * is told the AudioContext's rate (setInputFormat) and resamples it itself, in its one encode path,
 * straight into the ring it frames from:
 *
 *   push(block) ─► session.write(block)            (Float32 at the context rate, read into the resampler)
 *   endSegment() ─► session.markDiscontinuity()     (mute, pause, a loss, stop)
 *
 * A segment ends whenever the audio stops flowing to the session, so the audio before the cut is
 * complete (the resampler's filter delay is flushed, not stranded) and the audio after it starts from
 * a clean filter state, not from a splice with the old one.
 *
 * Counts are kept here so the capture's books balance: frames handed on and refused at the context
 * rate; samples sent at 16 kHz are the session's own producedSamples since this writer began (the
 * capture is the session's only writer).
 *
 * Gated (the worklet runs the voice gate): the writer writes through the session's gateSource() sink
 * instead: push() is the audio the gate sent, skip() the frames it did not, speech() its edges, placed
 * in the sink's frames (written and skipped, since the sink was made) from the feed's lag.
 *
 * Garbage: none per block (stats reads allocate the session's stats object, off the audio path).
 */
export class SessionWriter {
  readonly #session: CaptureSession;
  readonly #kernel: ResamplerKernel;
  readonly #startSample: number;
  #framesIn = 0;
  #refused = 0;
  #skipped = 0;
  #open = false;
  readonly #gate: SourceGateSink | undefined;
  /** Gated: an utterance the session was told of is open (a speech.end without its start is not passed on). */
  #inSpeech = false;

  constructor(inputRate: number, session: CaptureSession, kernel: ResamplerKernel = 'auto', gated = false) {
    this.#session = session;
    this.#kernel = kernel;
    try {
      session.setInputFormat({ sampleRate: inputRate, channels: 1, kernel });
    } catch (caught) {
      const detail = caught instanceof Error ? caught.message : String(caught);
      throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', `the session cannot take this capture's audio (${inputRate} Hz mono): ${detail}`, { cause: caught });
    }
    if (gated) {
      if (typeof session.gateSource !== 'function') throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', 'gate needs a RealtimeSocketSession (its gateSource())');
      try {
        this.#gate = session.gateSource();
      } catch (caught) {
        const detail = caught instanceof Error ? caught.message : String(caught);
        throw new WebAudioError('WEB_AUDIO_INVALID_OPTION', `the capture's gate cannot run on this session (${detail}): connect it without its own gate option`, { cause: caught });
      }
    }
    this.#startSample = session.stats.producedSamples;
  }

  /** Whether the worklet's voice gate decides what is sent. */
  get gated(): boolean {
    return this.#gate !== undefined;
  }

  /** Of framesIn, those the gate declared skipped (taken or refused). */
  get skippedFrames(): number {
    return this.#skipped;
  }

  /** 'wasm' or 'js': which resampler kernel the session runs (a CSP without 'wasm-unsafe-eval' gives 'js'). */
  get kernel(): 'js' | 'wasm' {
    return this.#session.stats.resamplerKernel;
  }

  /** Input frames handed to the session so far (context rate), taken or refused. */
  get framesIn(): number {
    return this.#framesIn;
  }

  /** 16 kHz samples the session produced from them (after endSegment(): all of them). */
  get sentSamples(): number {
    return this.#session.stats.producedSamples - this.#startSample;
  }

  /** Input frames the session refused (it was not taking audio: pausing, finishing, ended). */
  get refusedFrames(): number {
    return this.#refused;
  }

  push(block: Float32Array): void {
    this.#open = true;
    this.#framesIn += block.length;
    const taken = this.#gate === undefined ? this.#session.write(block) : this.#gate.write(block);
    this.#refused += block.length - taken;
  }

  /** Gated: `frames` right after the audio pushed, which the gate did not send. */
  skip(frames: number): void {
    const gate = this.#gate;
    if (gate === undefined) return;
    this.#open = true;
    this.#framesIn += frames;
    this.#skipped += frames;
    this.#refused += frames - gate.skip(frames);
  }

  /** Gated: an utterance edge `lag` frames after the end of what was pushed and skipped (negative: before it). */
  speech(event: 'speech.start' | 'speech.end', lag: number): void {
    const gate = this.#gate;
    if (gate === undefined) return;
    if (event === 'speech.end' ? !this.#inSpeech : this.#inSpeech) return;
    this.#inSpeech = event === 'speech.start';
    const taken = this.#framesIn - this.#refused;
    gate.speech(event, Math.max(0, taken + lag));
  }

  /**
   * Gated: audio stopped flowing to the session in the middle of an utterance (mute, pause, a loss):
   * it ends there for the session, and the next start begins the next one.
   */
  endSpeech(): void {
    if (this.#gate === undefined || !this.#inSpeech) return;
    this.speech('speech.end', 0);
  }

  /**
   * The capture moved to a device running at another rate (or the same): the segment ends and the
   * session resamples from `inputRate` on. The session takes a new format only at a discontinuity.
   */
  setRate(inputRate: number): void {
    this.endSegment();
    try {
      this.#session.setInputFormat({ sampleRate: inputRate, channels: 1, kernel: this.#kernel });
    } catch (caught) {
      const detail = caught instanceof Error ? caught.message : String(caught);
      throw new WebAudioError('WEB_AUDIO_CAPTURE_FAILED', `the session cannot take the new device's audio (${inputRate} Hz mono): ${detail}; the capture stopped`, { cause: caught });
    }
  }

  /** Ends the current segment: the resampler's tail goes to the session; the next push starts fresh. */
  endSegment(): void {
    if (!this.#open) return;
    this.#open = false;
    this.#session.markDiscontinuity();
  }
}
