import { EncodePipeline, type RingSegments, type ResamplerKernel } from '@soundclone/core';
import { protocol } from '@soundclone/core/internal';

/** The one call the encoder makes on the session: PCM16 at 16 kHz mono, bit for bit. */
export interface Pcm16Sink {
  writePcm16(samples: Int16Array): number;
}

/**
 * The context's audio to the session, on the page's thread: core's EncodePipeline (resampler + PCM16,
 * unchanged) at whatever rate the AudioContext runs, then session.writePcm16(). Owning the resampler
 * here, not in the session, means any session works (its declared sampleRate is not used) and each
 * segment can be closed exactly:
 *
 *   push(block) ─► EncodePipeline ─► int16 ring ─► (a view of it) ─► session.writePcm16()
 *   endSegment(): the resampler tail into the session, a fresh filter after it (mute, pause, stop)
 *
 * A segment ends whenever audio stops flowing to the session (mute, pause, stop), so the audio
 * before the cut is complete (the resampler's filter delay is flushed, not stranded) and the audio
 * after it starts from a clean filter state, not from a splice with the old one.
 *
 * The ring's samples go to writePcm16() as views of its storage, not through a scratch copy: the
 * session copies them into its own ring before it returns, and nothing writes this ring meanwhile.
 *
 * Garbage: one subarray view per contiguous run handed on (a page-thread cost, once or twice per block).
 */
export class SessionEncoder {
  readonly pipeline: EncodePipeline;
  readonly #sink: Pcm16Sink;
  readonly #segments: RingSegments<'int16'>;
  #framesIn = 0;
  #accepted = 0;
  #refused = 0;
  #open = false;

  constructor(inputRate: number, sink: Pcm16Sink, kernel: ResamplerKernel = 'auto') {
    this.pipeline = new EncodePipeline({ inputRate, outputRate: protocol.REALTIME.sampleRate, channels: 1, kernel, bufferMs: 2000 });
    this.#sink = sink;
    this.#segments = this.pipeline.ring.createSegments();
  }

  /** 'wasm' or 'js': which resampler kernel runs (a CSP without 'wasm-unsafe-eval' gives 'js'). */
  get kernel(): 'js' | 'wasm' {
    return this.pipeline.resampler.kernel;
  }

  /** Input frames encoded so far (context rate). */
  get framesIn(): number {
    return this.#framesIn;
  }

  /** 16 kHz samples the session took. */
  get acceptedSamples(): number {
    return this.#accepted;
  }

  /** 16 kHz samples the session refused (it was not taking audio: pausing, finishing, ended). */
  get refusedSamples(): number {
    return this.#refused;
  }

  push(block: Float32Array): void {
    this.#open = true;
    this.#framesIn += block.length;
    this.pipeline.push(block);
    this.#forward();
  }

  /** Ends the current segment: the resampler's tail goes to the session; the next push starts fresh. */
  endSegment(): void {
    if (!this.#open) return;
    this.#open = false;
    this.pipeline.endSegment();
    this.#forward();
  }

  #forward(): void {
    const ring = this.pipeline.ring;
    const segments = this.#segments;
    const available = ring.availableToRead();
    if (available === 0) return;
    const n = ring.readSegments(available, segments);
    // Consumed first, as a read would: a sink that throws has still been handed this audio.
    ring.consume(n);
    const { storage, firstStart, firstLength, secondStart, secondLength } = segments;
    this.#hand(storage.subarray(firstStart, firstStart + firstLength));
    if (secondLength > 0) this.#hand(storage.subarray(secondStart, secondStart + secondLength));
  }

  #hand(samples: Int16Array): void {
    const taken = this.#sink.writePcm16(samples);
    this.#accepted += taken;
    this.#refused += samples.length - taken;
  }
}
