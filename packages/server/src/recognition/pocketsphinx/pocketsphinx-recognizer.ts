import { setImmediate as nextTurn } from 'node:timers/promises';
import { RECOGNIZER_SAMPLE_RATE } from '../recognizer.js';
import type { ChannelRecognition, RecognitionOptions, RecognitionRequest, RecognitionResult, RecognizedSegment, Recognizer, StreamEvent } from '../recognizer.js';
import { RecognizerError } from '../errors.js';
import { DecoderPool, decoderArgs } from './decoder-pool.js';
import { loadPocketSphinx, type PocketSphinxBinding } from './native.js';
import { PocketSphinxStream, type StreamTuning } from './pocketsphinx-stream.js';

export interface PocketSphinxOptions {
  /** Directory holding en-us/, en-us.lm.bin and cmudict-en-us.dict (default: Debian's). */
  readonly modelDir?: string;
  /** More pocketsphinx arguments, e.g. ['-vad_postspeech', '30']; they override ours. */
  readonly decoderArgs?: readonly string[];
  /** Decoders kept loaded for the next stream (default 2). */
  readonly maxIdleDecoders?: number;
  readonly partialIntervalMs?: number;
  readonly maxSegmentMs?: number;
}

/** Batch audio goes through in blocks this long, yielding to the event loop between them. */
const BATCH_BLOCK_SAMPLES = 4000;

/**
 * Real offline recognition with CMU PocketSphinx (Debian's libpocketsphinx and US English model)
 * through a Node-API binding. Batch and realtime share the streaming decoder, so a file and the same
 * audio streamed live give the same words (batch only adds normalisation from the whole file, see
 * PocketSphinxStream.prime). Decoding runs on the calling thread: a 20 ms frame costs ~6 ms of CPU
 * (real-time factor 0.31; `node bench/dist/run.js --only recognizer`).
 *
 * Constructing it loads the binding and one decoder, and throws RecognizerError
 * RECOGNIZER_UNAVAILABLE when either is missing.
 */
export class PocketSphinxRecognizer implements Recognizer {
  readonly id = 'pocketsphinx-en-us';
  private readonly binding: PocketSphinxBinding;
  private readonly pool: DecoderPool;
  private readonly tuning: StreamTuning;
  private closed = false;

  constructor(options: PocketSphinxOptions = {}) {
    const { binding, model } = loadPocketSphinx(options.modelDir);
    this.binding = binding;
    this.pool = new DecoderPool(binding, decoderArgs(model, options.decoderArgs), options.maxIdleDecoders ?? 2);
    this.tuning = { partialIntervalMs: options.partialIntervalMs ?? 250, maxSegmentMs: options.maxSegmentMs ?? 20_000 };
    try {
      this.pool.warm();
    } catch (cause) {
      throw new RecognizerError('RECOGNIZER_UNAVAILABLE', `PocketSphinx could not load its model: ${(cause as Error).message}`, { cause });
    }
  }

  /** Loaded decoders (in use or idle). */
  get decoders(): number {
    return this.pool.size;
  }

  openStream(options: RecognitionOptions): PocketSphinxStream {
    return new PocketSphinxStream(this.binding, this.pool, options, this.tuning);
  }

  async recognize(request: RecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = [];
    for (const [channelIndex, samples] of request.channels.entries()) {
      const segments: RecognizedSegment[] = [];
      const collect = (events: StreamEvent[]): void => {
        for (const event of events) if (event.type === 'segment') segments.push(event.segment);
      };
      const stream = this.openStream(request);
      try {
        const pcm = toPcm16(samples);
        stream.prime(pcm);
        for (let at = 0; at < pcm.length; at += BATCH_BLOCK_SAMPLES) {
          collect(stream.push(pcm.subarray(at, at + BATCH_BLOCK_SAMPLES)));
          // Long files must not hold the event loop: realtime sessions share this thread.
          await nextTurn();
          if (this.closed) throw new Error('the server closed during recognition');
        }
        collect(stream.flush());
      } finally {
        stream.close();
      }
      channels.push({ channelIndex, segments, languageCode: null, languageConfidence: null });
    }
    const longest = request.channels.reduce((max, c) => Math.max(max, c.length), 0);
    return { durationMs: Math.round((longest * 1000) / RECOGNIZER_SAMPLE_RATE), channels };
  }

  close(): void {
    this.closed = true;
    this.pool.close();
  }
}

function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i] as number;
    out[i] = v >= 1 ? 32767 : v <= -1 ? -32768 : Math.round(v < 0 ? v * 32768 : v * 32767);
  }
  return out;
}
