/**
 * The recognition seam. A Recognizer turns 16 kHz mono PCM into timed words,
 * segments and speakers, per channel. Batch hands it whole channels; realtime opens a stream and pushes
 * PCM16 as it arrives, reading partials and committed segments. The default is the deterministic
 * EnergyRecognizer; PocketSphinxRecognizer (pocketsphinx/) is real recognition behind the same seam.
 */

export const RECOGNIZER_SAMPLE_RATE = 16_000;

export interface RecognizedWord {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly confidence: number;
  /** 0-based speaker the engine attributed this word to. */
  readonly speakerIndex: number;
}

export interface RecognizedSegment {
  readonly startMs: number;
  readonly endMs: number;
  readonly words: readonly RecognizedWord[];
  readonly speakerIndex: number;
}

export interface ChannelRecognition {
  readonly channelIndex: number;
  readonly segments: readonly RecognizedSegment[];
  /** ISO 639-3 code when the engine detected one, otherwise null (never copied from the hint). */
  readonly languageCode: string | null;
  readonly languageConfidence: number | null;
}

export interface RecognitionOptions {
  readonly languageHint?: string;
  readonly vocabularyHints?: readonly string[];
  /** Upper bound on distinct speakers; 1 means no separation. */
  readonly maxSpeakers: number;
  readonly includeSoundEvents?: boolean;
  readonly removeDisfluencies?: boolean;
  /**
   * Who the work is for (an account id): engines with bounded capacity (PocketSphinx's decoder pool)
   * bound each owner's share of it. Never part of the recognition itself.
   */
  readonly owner?: string;
  /**
   * Realtime streams only: start where an earlier stream of the session left a restart point
   * (RecognizerStream.checkpoint), so the audio that follows is recognised exactly as that stream would
   * have (another node taking a session over). Engines without restart points ignore it.
   */
  readonly resume?: unknown;
}

export interface RecognitionRequest extends RecognitionOptions {
  /** One Float32Array per channel to recognise, at RECOGNIZER_SAMPLE_RATE. */
  readonly channels: readonly Float32Array[];
}

/**
 * One channel of batch audio at RECOGNIZER_SAMPLE_RATE, decoded as it is consumed. `blocks()` starts
 * over on every call; a yielded block is valid until the iterator's next step.
 */
export interface ChannelFeed {
  /** Exactly how many samples the blocks add up to. */
  readonly samples: number;
  blocks(): Iterable<Float32Array>;
}

export interface FedRecognitionRequest extends RecognitionOptions {
  readonly feeds: readonly ChannelFeed[];
}

export interface RecognitionResult {
  readonly durationMs: number;
  readonly channels: readonly ChannelRecognition[];
}

export type StreamEvent =
  | { readonly type: 'partial'; readonly text: string }
  | {
      readonly type: 'segment';
      readonly segment: RecognizedSegment;
      /** ISO 639-1 code when detected (realtime lines use two-letter codes, spec "Transcription task"). */
      readonly languageCode: string | null;
      readonly languageProbability: number | null;
    };

export interface RecognizerStream {
  /** Feeds contiguous PCM16 samples at 16 kHz; returns what they produced, in order. */
  push(samples: Int16Array): StreamEvent[];
  /** Commits the open segment, if any (pause, rotation, finish). */
  flush(): StreamEvent[];
  /** Text of the open segment. */
  readonly partial: string;
  /**
   * Loads what the engine needs before audio comes, off the main thread where it can (a PocketSphinx
   * decoder: ~250 ms). Optional: push loads it on the spot otherwise. Rejects with a RecognizerError.
   */
  prepare?(): Promise<void>;
  /** Lets go of the engine's resources (a finished session); pushes after it are ignored. */
  close?(): void;
  /**
   * The last point this stream could be restarted from with nothing open (right after it closed a
   * segment, or after a flush): how many samples it had taken then, and the engine's state to hand to
   * openStream({ resume }). Optional: an engine without it restarts fresh.
   */
  checkpoint?(): RecognizerCheckpoint | undefined;
}

export interface RecognizerCheckpoint {
  /** Samples this stream had taken at that point (counted from the stream's own start). */
  readonly atSample: number;
  /** JSON-safe engine state for openStream({ resume }). */
  readonly state: unknown;
}

export interface Recognizer {
  readonly id: string;
  recognize(request: RecognitionRequest): Promise<RecognitionResult>;
  /**
   * Batch recognition from channels decoded block by block, so a long file is never whole in memory.
   * Optional: without it the service collects each channel into one Float32Array for `recognize`
   * (4 bytes a sample at 16 kHz: about 920 MB per channel of a 4-hour file, the longest accepted).
   */
  recognizeFeeds?(request: FedRecognitionRequest): Promise<RecognitionResult>;
  /**
   * A stream for one realtime session. May throw a RecognizerError (RECOGNIZER_BUSY: no capacity now;
   * RECOGNIZER_UNAVAILABLE); push and flush may throw one too, when the engine fails later.
   */
  openStream(options: RecognitionOptions): RecognizerStream;
  /** Frees what the engine holds; the server calls it on close for recognizers it made. */
  close?(): void;
}
