import { DISFLUENCIES, SOUND_EVENT_TEXT } from '../words.js';
import type { RecognitionOptions, RecognizedSegment, RecognizedWord, RecognizerStream, StreamEvent } from '../recognizer.js';
import type { DecoderLease } from './decoder-pool.js';
import type { DecoderHandle, PocketSphinxBinding } from './native.js';

export interface StreamTuning {
  /** Audio of speech between two partial hypotheses. */
  readonly partialIntervalMs: number;
  /** A segment that runs this long without a pause is committed anyway (bounds latency and lattice size). */
  readonly maxSegmentMs: number;
}

/** 20 ms: the granularity at which the detector's speech/non-speech answer is read. */
const CHUNK = 320;
const SAMPLES_PER_MS = 16;

/**
 * One PocketSphinx decoder in continuous mode behind the RecognizerStream seam:
 *
 *   detector hears speech          -> segment open; every partialIntervalMs of speech a partial
 *   detector hears the pause end   -> endUtterance: the words become one committed segment
 *   flush (pause, rotation, finish) or maxSegmentMs -> the same, at once
 *
 * The detector keeps ~0.5 s of trailing silence inside a segment, so a segment ends about half a
 * second after the speaker stops. Word times are stream-absolute (the decoder counts every frame,
 * silence included, since the stream began).
 *
 * The stream holds a lease (a slot in the decoder pool) from its creation, and a decoder only once
 * audio is coming: prepare() loads it on a worker thread, or the first push takes one. A decoder that
 * fails to load throws RecognizerError RECOGNIZER_UNAVAILABLE from prepare or push.
 */
export class PocketSphinxStream implements RecognizerStream {
  private closed = false;
  private open = false;
  private openSamples = 0;
  private sincePartial = 0;
  /** End of the last committed word: the next segment starts no earlier (see commit). */
  private committedUntilMs = 0;
  /** Samples short of a whole 20 ms chunk, held for the next push. */
  private readonly carry = new Int16Array(CHUNK);
  private carried = 0;
  partial = '';

  constructor(
    private readonly binding: PocketSphinxBinding,
    private readonly lease: DecoderLease,
    private readonly options: RecognitionOptions,
    private readonly tuning: StreamTuning,
  ) {}

  /** Loads the decoder off the main thread ahead of the audio; resolves at once when it is loaded. */
  prepare(): Promise<void> {
    return this.closed ? Promise.resolve() : this.lease.prepare();
  }

  push(samples: Int16Array): StreamEvent[] {
    if (this.closed || samples.length === 0) return [];
    const handle = this.lease.decoder();
    const events: StreamEvent[] = [];
    let at = 0;
    // The detector is read at fixed 20 ms positions of the stream, whatever the sizes of the pushes,
    // so the same audio gives the same segments whether it came in socket frames or file blocks.
    if (this.carried > 0) {
      const take = Math.min(CHUNK - this.carried, samples.length);
      this.carry.set(samples.subarray(0, take), this.carried);
      this.carried += take;
      at = take;
      if (this.carried < CHUNK) return events;
      this.carried = 0;
      this.step(handle, this.carry, events);
    }
    for (; at + CHUNK <= samples.length; at += CHUNK) this.step(handle, samples.subarray(at, at + CHUNK), events);
    if (at < samples.length) {
      this.carry.set(samples.subarray(at), 0);
      this.carried = samples.length - at;
    }
    return events;
  }

  private step(handle: DecoderHandle, chunk: Int16Array, events: StreamEvent[]): void {
    const speech = this.binding.process(handle, chunk);
    if (speech) {
      this.open = true;
      this.openSamples += chunk.length;
      this.sincePartial += chunk.length;
    }
    if (this.open && (!speech || this.openSamples >= this.tuning.maxSegmentMs * SAMPLES_PER_MS)) {
      this.commit(handle, events);
    } else if (this.open && this.sincePartial >= this.tuning.partialIntervalMs * SAMPLES_PER_MS) {
      this.sincePartial = 0;
      const text = this.binding.hypothesis(handle);
      if (text !== '' && text !== this.partial) {
        this.partial = text;
        events.push({ type: 'partial', text });
      }
    }
  }

  /**
   * Batch only, before the first push: normalise with the whole recording's statistics instead of
   * adapting from the model's generic ones (which takes ~5 s of speech: short clips never get there).
   */
  prime(samples: Int16Array): void {
    if (!this.closed) this.binding.primeCmn(this.lease.decoder(), samples);
  }

  flush(): StreamEvent[] {
    const events: StreamEvent[] = [];
    // No decoder yet means no audio yet: nothing to commit, and no reason to load one.
    if (this.closed || this.lease.current === undefined) return events;
    const handle = this.lease.decoder();
    if (this.carried > 0) {
      const rest = this.carry.subarray(0, this.carried);
      this.carried = 0;
      this.step(handle, rest, events);
    }
    if (this.open) this.commit(handle, events);
    return events;
  }

  /** Hands the decoder and the slot back to the pool; later pushes are ignored. Idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lease.release();
  }

  private commit(handle: DecoderHandle, events: StreamEvent[]): void {
    // A commit in mid-speech leaves a few frames of context in the front end that the next utterance
    // decodes again, so its first word may start up to ~50 ms before the last one ended: clamp, so
    // times stay monotonic across lines.
    const words = shapeWords(this.binding.endUtterance(handle), this.options)
      .map((w) => (w.startMs >= this.committedUntilMs ? w : { ...w, startMs: this.committedUntilMs, endMs: Math.max(w.endMs, this.committedUntilMs + 10) }));
    const hadPartial = this.partial !== '';
    this.open = false;
    this.openSamples = 0;
    this.sincePartial = 0;
    this.partial = '';
    const first = words[0];
    const last = words[words.length - 1];
    if (first === undefined || last === undefined) {
      // Noise that looked like speech: take back the partial it showed.
      if (hadPartial) events.push({ type: 'partial', text: '' });
      return;
    }
    this.committedUntilMs = last.endMs;
    const segment: RecognizedSegment = { startMs: first.startMs, endMs: last.endMs, words, speakerIndex: 0 };
    // The model is English-only and detects no language: the spec wants null rather than a guess.
    events.push({ type: 'segment', segment, languageCode: null, languageProbability: null });
  }
}

/**
 * Decoder segments to words: sentence markers and silences dropped, alternate-pronunciation suffixes
 * ("to(2)") removed, noise fillers kept as sound events only when asked, disfluencies removed when asked.
 * PocketSphinx does not separate speakers: every word is speaker 0.
 */
export function shapeWords(raw: ReadonlyArray<readonly [string, number, number, number]>, options: RecognitionOptions): RecognizedWord[] {
  const words: RecognizedWord[] = [];
  for (const [word, startMs, endMs, posterior] of raw) {
    if (word.startsWith('<')) continue;
    const filler = word.startsWith('[') || word.startsWith('+');
    if (filler && options.includeSoundEvents !== true) continue;
    const text = filler ? SOUND_EVENT_TEXT : word.replace(/\(\d+\)$/, '');
    if (options.removeDisfluencies === true && DISFLUENCIES.has(text)) continue;
    const confidence = Math.round(Math.min(1, Math.max(0, posterior)) * 100) / 100;
    words.push({ text, startMs: Math.round(startMs), endMs: Math.round(endMs), confidence, speakerIndex: 0 });
  }
  return words;
}
