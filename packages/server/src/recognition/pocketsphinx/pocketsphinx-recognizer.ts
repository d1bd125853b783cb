import { setImmediate as nextTurn } from 'node:timers/promises';
import { RECOGNIZER_SAMPLE_RATE } from '../recognizer.js';
import type { ChannelFeed, ChannelRecognition, FedRecognitionRequest, RecognitionOptions, RecognitionRequest, RecognitionResult, RecognizedSegment, Recognizer, RecognizerStream, StreamEvent } from '../recognizer.js';
import { RecognizerError, isRecognizerError } from '../errors.js';
import { DecoderPool, RESERVED_DECODER_ARGS, decoderArgs } from './decoder-pool.js';
import { loadPocketSphinx, missingModelFile, type ModelPaths, type PocketSphinxBinding } from './native.js';
import { PocketSphinxStream, type StreamTuning } from './pocketsphinx-stream.js';

export interface PocketSphinxOptions {
  /** Directory holding en-us/, en-us.lm.bin and cmudict-en-us.dict (default: Debian's). */
  readonly modelDir?: string;
  /**
   * More pocketsphinx arguments, e.g. ['-vad_postspeech', '30']; they override ours. -logfn, -dither
   * and -seed are refused: they would change process-wide state that concurrent decoders share.
   */
  readonly decoderArgs?: readonly string[];
  /**
   * Streams (realtime sessions, channels of batch transcriptions being decoded) that may exist at
   * once, each holding at most one decoder of ~90 MB; default DEFAULT_MAX_DECODERS (4). Past it a
   * realtime session is refused (503 SERVICE_UNAVAILABLE, reason RECOGNIZER_BUSY) and a batch
   * transcription waits for a free decoder.
   */
  readonly maxDecoders?: number;
  /**
   * Slots one account (RecognitionOptions.owner) may hold at once: realtime sessions plus batch
   * channels being decoded. Default maxDecoders - floor(maxDecoders / 4) (3 of the default 4), so
   * one account cannot keep every other waiting. Past it a realtime session is refused (429
   * RATE_LIMITED, reason ACCOUNT_DECODER_LIMIT) and a batch channel waits while other accounts'
   * work goes first. At most maxDecoders.
   */
  readonly maxDecodersPerAccount?: number;
  /** Decoders kept loaded for the next stream (default 2, at most maxDecoders). */
  readonly maxIdleDecoders?: number;
  readonly partialIntervalMs?: number;
  readonly maxSegmentMs?: number;
}

/** Batch audio goes through in blocks this long, yielding to the event loop between them. */
const BATCH_BLOCK_SAMPLES = 4000;

/**
 * Decoding runs on the event loop's one thread at ~0.3 CPU seconds per second of speech (silence
 * costs little: the detector drops it before the search), so about three people talking at once fill
 * it whatever the number of cores; four leaves room for pauses and a batch transcription. Memory:
 * ~90 MB per decoder, ~370 MB for four.
 */
export const DEFAULT_MAX_DECODERS = 4;

/** A quarter of the pool (rounded down) stays for other accounts: 3 of 4, all of 1..3. */
export function defaultDecodersPerAccount(maxDecoders: number): number {
  return Math.max(1, maxDecoders - Math.floor(maxDecoders / 4));
}

/**
 * Real offline recognition with CMU PocketSphinx (Debian's libpocketsphinx and US English model)
 * through a Node-API binding. Batch and realtime share the streaming decoder, so a file and the same
 * audio streamed live give the same words (batch only adds normalisation from the whole file, see
 * PocketSphinxStream.prime). Decoding runs on the calling thread: a 20 ms frame costs ~6 ms of CPU
 * (real-time factor 0.31; `node bench/dist/run.js --only recognizer`).
 *
 * Decoders are pooled (decoder-pool.ts): a stream takes a slot when opened, and a decoder only when
 * audio is coming, loaded on a worker thread when the caller prepares the stream (a socket attaching,
 * a batch transcription starting). openStream throws RecognizerError RECOGNIZER_BUSY when every slot
 * is taken.
 *
 * Constructing it loads the binding and one decoder, and throws RecognizerError
 * RECOGNIZER_UNAVAILABLE when either is missing (RECOGNIZER_INVALID_OPTION for a bad option).
 */
export class PocketSphinxRecognizer implements Recognizer {
  readonly id = 'pocketsphinx-en-us';
  private readonly binding: PocketSphinxBinding;
  private readonly model: ModelPaths;
  private readonly pool: DecoderPool;
  private readonly limits: { readonly maxDecoders: number; readonly maxPerOwner: number };
  private readonly tuning: StreamTuning;
  private closed = false;

  constructor(options: PocketSphinxOptions = {}) {
    const maxDecoders = options.maxDecoders ?? DEFAULT_MAX_DECODERS;
    if (!Number.isInteger(maxDecoders) || maxDecoders < 1) throw invalid(`maxDecoders must be a whole number of at least 1 (got ${maxDecoders})`);
    const maxPerOwner = options.maxDecodersPerAccount ?? defaultDecodersPerAccount(maxDecoders);
    if (!Number.isInteger(maxPerOwner) || maxPerOwner < 1) throw invalid(`maxDecodersPerAccount must be a whole number of at least 1 (got ${maxPerOwner})`);
    const maxIdle = options.maxIdleDecoders ?? 2;
    if (!Number.isInteger(maxIdle) || maxIdle < 0) throw invalid(`maxIdleDecoders must be a whole number of at least 0 (got ${maxIdle})`);
    const reserved = (options.decoderArgs ?? []).filter((a) => RESERVED_DECODER_ARGS.includes(a));
    if (reserved.length > 0) throw invalid(`decoderArgs may not set ${reserved.join(', ')}: the binding owns them (decoders load on worker threads and streams run side by side)`);
    const { binding, model } = loadPocketSphinx(options.modelDir);
    this.binding = binding;
    this.model = model;
    this.limits = { maxDecoders, maxPerOwner: Math.min(maxPerOwner, maxDecoders) };
    this.pool = new DecoderPool(binding, decoderArgs(model, options.decoderArgs), { maxDecoders, maxIdle: Math.min(maxIdle, maxDecoders), maxPerOwner: Math.min(maxPerOwner, maxDecoders) });
    this.tuning = { partialIntervalMs: options.partialIntervalMs ?? 250, maxSegmentMs: options.maxSegmentMs ?? 20_000 };
    try {
      this.pool.warm();
    } catch (cause) {
      if (isRecognizerError(cause)) throw cause;
      throw new RecognizerError('RECOGNIZER_UNAVAILABLE', `PocketSphinx could not load its model: ${(cause as Error).message}`, { cause });
    }
  }

  /** Loaded decoders (in use or idle). */
  get decoders(): number {
    return this.pool.size;
  }

  /** Slots one account may hold at once (maxDecodersPerAccount in force); capabilities report it. */
  get maxDecodersPerAccount(): number {
    return this.limits.maxPerOwner;
  }

  /** Slots the whole pool holds (maxDecoders in force). */
  get maxDecoders(): number {
    return this.limits.maxDecoders;
  }

  /** Open streams, each holding a slot (at most maxDecoders). */
  get streams(): number {
    return this.pool.leased;
  }

  /**
   * A stream with a slot but no decoder yet. RecognizerError RECOGNIZER_BUSY when every slot is
   * taken; RECOGNIZER_UNAVAILABLE when no decoder is idle and a model file has gone (a decoder could
   * not load); RECOGNIZER_CLOSED after close.
   */
  openStream(options: RecognitionOptions): RecognizerStream {
    this.pool.checkOpen();
    if (this.pool.idleCount === 0) {
      const missing = missingModelFile(this.model);
      if (missing !== undefined) throw new RecognizerError('RECOGNIZER_UNAVAILABLE', `PocketSphinx cannot load a decoder: ${missing} is missing`);
    }
    return new PocketSphinxStream(this.binding, this.pool.reserve(options.owner), options, this.tuning);
  }

  async recognize(request: RecognitionRequest): Promise<RecognitionResult> {
    const feeds: ChannelFeed[] = request.channels.map((samples) => ({ samples: samples.length, blocks: () => [samples] }));
    return this.recognizeFeeds({ ...request, feeds });
  }

  async recognizeFeeds(request: FedRecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = [];
    for (const [channelIndex, feed] of request.feeds.entries()) {
      const segments: RecognizedSegment[] = [];
      const collect = (events: StreamEvent[]): void => {
        for (const event of events) if (event.type === 'segment') segments.push(event.segment);
      };
      // Batch waits for a free decoder rather than failing: the task is queued work anyway.
      const stream = new PocketSphinxStream(this.binding, await this.pool.whenFree(request.owner), request, this.tuning);
      try {
        await stream.prepare();
        stream.prime(primeSamples(feed));
        for (const block of feed.blocks()) {
          const pcm = toPcm16(block);
          for (let at = 0; at < pcm.length; at += BATCH_BLOCK_SAMPLES) {
            collect(stream.push(pcm.subarray(at, at + BATCH_BLOCK_SAMPLES)));
            // Long files must not hold the event loop: realtime sessions share this thread.
            await nextTurn();
            if (this.closed) throw new RecognizerError('RECOGNIZER_CLOSED', 'the recognizer closed during recognition');
          }
        }
        collect(stream.flush());
      } finally {
        stream.close();
      }
      channels.push({ channelIndex, segments, languageCode: null, languageConfidence: null });
    }
    const longest = request.feeds.reduce((max, f) => Math.max(max, f.samples), 0);
    return { durationMs: Math.round((longest * 1000) / RECOGNIZER_SAMPLE_RATE), channels };
  }

  close(): void {
    this.closed = true;
    this.pool.close();
  }
}

function invalid(message: string): RecognizerError {
  return new RecognizerError('RECOGNIZER_INVALID_OPTION', message);
}

/**
 * The cepstral mean is primed from the first PRIME_MAX_SAMPLES of the channel (or all of a shorter
 * one): enough speech to settle it, without holding a long file whole.
 */
const PRIME_MAX_SAMPLES = 60 * RECOGNIZER_SAMPLE_RATE;

function primeSamples(feed: ChannelFeed): Int16Array {
  const out = new Int16Array(Math.min(feed.samples, PRIME_MAX_SAMPLES));
  let at = 0;
  for (const block of feed.blocks()) {
    if (at >= out.length) break;
    const part = toPcm16(block.subarray(0, out.length - at));
    out.set(part, at);
    at += part.length;
  }
  return at === out.length ? out : out.subarray(0, at);
}

function toPcm16(samples: Float32Array): Int16Array {
  const out = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const v = samples[i] as number;
    out[i] = v >= 1 ? 32767 : v <= -1 ? -32768 : Math.round(v < 0 ? v * 32768 : v * 32767);
  }
  return out;
}
