import { DEFAULT_TUNING, EnergyAnalyzer, type EnergyRestart, type EnergyTuning } from './energy-analyzer.js';
import { DISFLUENCIES, SOUND_EVENT_TEXT } from './words.js';
import type {
  ChannelRecognition,
  FedRecognitionRequest,
  RecognitionOptions,
  RecognitionRequest,
  RecognitionResult,
  RecognizedSegment,
  Recognizer,
  RecognizerCheckpoint,
  RecognizerStream,
  StreamEvent,
} from './recognizer.js';

/** A voiced burst longer than this becomes a sound event when includeSoundEvents is on. */
const SOUND_EVENT_MIN_MS = 1500;
/** Batch analysis hands the event loop back after about this much audio (10 s at 16 kHz). */
const YIELD_EVERY_SAMPLES = 160_000;

/**
 * The deterministic default Recognizer: energy-based voice activity (EnergyAnalyzer) with words picked
 * from a fixed list by hashing each burst's features. Same audio in, same transcript out, so tests can
 * assert exact text. It reports English ("eng" batch, "en" realtime) whenever it found any word, and no
 * language for silence.
 */
export class EnergyRecognizer implements Recognizer {
  readonly id = 'energy-v1';

  constructor(private readonly tuning: EnergyTuning = DEFAULT_TUNING) {}

  async recognize(request: RecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = request.channels.map((samples, channelIndex) => {
      const segments: RecognizedSegment[] = [];
      const analyzer = new EnergyAnalyzer(this.tuning, (s) => {
        const shaped = shapeSegment(s, request);
        if (shaped !== undefined) segments.push(shaped);
      });
      analyzer.push(samples);
      analyzer.flush();
      const spoke = segments.length > 0;
      return { channelIndex, segments, languageCode: spoke ? 'eng' : null, languageConfidence: spoke ? 0.9 : null };
    });
    const longest = request.channels.reduce((max, c) => Math.max(max, c.length), 0);
    return { durationMs: Math.round((longest * 1000) / 16_000), channels };
  }

  /** The same analysis as recognize(), pushed a block at a time; yields the event loop between seconds. */
  async recognizeFeeds(request: FedRecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = [];
    for (const [channelIndex, feed] of request.feeds.entries()) {
      const segments: RecognizedSegment[] = [];
      const analyzer = new EnergyAnalyzer(this.tuning, (s) => {
        const shaped = shapeSegment(s, request);
        if (shaped !== undefined) segments.push(shaped);
      });
      let pushed = 0;
      for (const block of feed.blocks()) {
        analyzer.push(block);
        pushed += block.length;
        // Long files must not hold the event loop: realtime sessions share this thread.
        if (pushed >= YIELD_EVERY_SAMPLES) {
          pushed = 0;
          await new Promise<void>((resolve) => setImmediate(resolve));
        }
      }
      analyzer.flush();
      const spoke = segments.length > 0;
      channels.push({ channelIndex, segments, languageCode: spoke ? 'eng' : null, languageConfidence: spoke ? 0.9 : null });
    }
    const longest = request.feeds.reduce((max, f) => Math.max(max, f.samples), 0);
    return { durationMs: Math.round((longest * 1000) / 16_000), channels };
  }

  openStream(options: RecognitionOptions): RecognizerStream {
    return new EnergyStream(this.tuning, options);
  }
}

class EnergyStream implements RecognizerStream {
  private readonly analyzer: EnergyAnalyzer;
  private events: StreamEvent[] = [];
  /** The last clean point (a segment just closed, or a flush): where a new stream could go on from. */
  private clean: RecognizerCheckpoint | undefined;

  constructor(tuning: EnergyTuning, private readonly options: RecognitionOptions) {
    this.analyzer = new EnergyAnalyzer(
      tuning,
      (segment) => {
        const shaped = shapeSegment(segment, this.options);
        if (shaped !== undefined) this.events.push({ type: 'segment', segment: shaped, languageCode: 'en', languageProbability: 0.9 });
        this.remember();
      },
      () => this.events.push({ type: 'partial', text: this.analyzer.openText }),
      restartFrom(options.resume),
    );
  }

  checkpoint(): RecognizerCheckpoint | undefined {
    return this.clean;
  }

  private remember(): void {
    const point = this.analyzer.cleanPoint();
    if (point !== undefined) this.clean = { atSample: point.atSample, state: point.restart };
  }

  get partial(): string {
    return this.analyzer.openText;
  }

  push(samples: Int16Array): StreamEvent[] {
    this.analyzer.push(samples, 1 / 32768);
    return this.drain();
  }

  flush(): StreamEvent[] {
    this.analyzer.flush();
    this.remember();
    return this.drain();
  }

  private drain(): StreamEvent[] {
    const out = this.events;
    this.events = [];
    return out;
  }
}

/** A restart state this engine made (EnergyAnalyzer.cleanPoint), or undefined for anything else. */
function restartFrom(resume: unknown): EnergyRestart | undefined {
  if (typeof resume !== 'object' || resume === null) return undefined;
  const { frameIndex, prevSign } = resume as Record<string, unknown>;
  if (!Number.isSafeInteger(frameIndex) || (frameIndex as number) < 0 || (prevSign !== -1 && prevSign !== 0 && prevSign !== 1)) return undefined;
  return { frameIndex: frameIndex as number, prevSign: prevSign as number };
}

/** Applies the options that change recognised words: speakers, sound events, disfluencies. */
function shapeSegment(segment: RecognizedSegment, options: RecognitionOptions): RecognizedSegment | undefined {
  const maxSpeaker = Math.max(0, options.maxSpeakers - 1);
  const words = segment.words
    .map((w) => ({
      ...w,
      speakerIndex: Math.min(w.speakerIndex, maxSpeaker),
      text: options.includeSoundEvents === true && w.endMs - w.startMs >= SOUND_EVENT_MIN_MS ? SOUND_EVENT_TEXT : w.text,
    }))
    .filter((w) => !(options.removeDisfluencies === true && DISFLUENCIES.has(w.text)));
  const first = words[0];
  const last = words[words.length - 1];
  if (first === undefined || last === undefined) return undefined;
  return { startMs: first.startMs, endMs: last.endMs, words, speakerIndex: first.speakerIndex };
}
