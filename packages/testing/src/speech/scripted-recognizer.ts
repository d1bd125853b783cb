import type {
  ChannelRecognition, Recognizer, RecognizerStream, RecognitionOptions, RecognitionRequest, RecognitionResult, RecognizedSegment, StreamEvent,
  SupplementDecision, SupplementKind,
} from '@soundclone/server';
import { placeScript, type PlacedLine, type SpeechScript } from './script.js';
import { samplesToMs } from './time.js';

type SegmentEvent = Extract<StreamEvent, { type: 'segment' }>;

/**
 * A Recognizer (the service's recognition seam) that hears a script instead of the audio: only the
 * count of samples received matters. As the session's audio passes the end of each scripted word a
 * partial comes with the line's words so far; when it passes the end of the line, the line is
 * committed. A pause, rotation or finish (flush) commits the words heard so far; the rest of that line
 * becomes a line of its own when its audio comes.
 *
 * Events depend on sample positions only, never on how the audio was cut into frames or when it came:
 * the same script and the same audio give the same events, run after run.
 *
 * Positions are samples the recognizer was fed. Time a client's voice gate declared skipped is not
 * fed, so with a gate on, script positions count the audio sent, not the audio captured.
 */
export class ScriptedRecognizer implements Recognizer {
  readonly id = 'scripted-v1';
  private lines: readonly PlacedLine[];
  /** Which script line each committed segment came from (supplement decisions look it up). */
  private readonly origins = new WeakMap<object, PlacedLine>();

  constructor(script: SpeechScript = []) {
    this.lines = placeScript(script);
  }

  /** Sessions opened from now on hear this script; open ones keep theirs. */
  setScript(script: SpeechScript): void {
    this.lines = placeScript(script);
  }

  get script(): readonly PlacedLine[] {
    return this.lines;
  }

  async recognize(request: RecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = request.channels.map((samples, channelIndex) => {
      const stream = new ScriptedStream(this.lines, request.maxSpeakers, () => undefined);
      const events = [...stream.advance(samples.length), ...stream.flush()];
      const segments = events.filter((e): e is SegmentEvent => e.type === 'segment').map((e) => e.segment);
      const spoken = segments.length > 0 ? this.lines[0] : undefined;
      return { channelIndex, segments, languageCode: spoken?.language === null || spoken === undefined ? null : toThreeLetter(spoken.language), languageConfidence: spoken?.languageProbability ?? null };
    });
    const longest = request.channels.reduce((max, c) => Math.max(max, c.length), 0);
    return { durationMs: samplesToMs(longest), channels };
  }

  openStream(options: RecognitionOptions): RecognizerStream {
    return new ScriptedStream(this.lines, options.maxSpeakers, (event, line) => this.origins.set(event, line));
  }

  /**
   * The service's supplement policy for scripted lines: what the line's `supplements` ask for
   * (withheld, delayed), otherwise at once.
   */
  supplementDecision(source: object, kind: SupplementKind): SupplementDecision {
    const line = this.origins.get(source);
    if (line === undefined) return 'now';
    if (line.supplements.withhold?.includes(kind) === true) return 'withhold';
    const delay = line.supplements.delayMs?.[kind];
    return delay === undefined ? 'now' : { delayMs: delay };
  }
}

class ScriptedStream implements RecognizerStream {
  /** Samples fed so far. */
  private position = 0;
  /** The script line being heard, and how many of its words were heard / already committed. */
  private lineIndex = 0;
  private heard = 0;
  private committed = 0;
  private closed = false;

  constructor(
    private readonly lines: readonly PlacedLine[],
    private readonly maxSpeakers: number,
    private readonly record: (event: SegmentEvent, line: PlacedLine) => void,
  ) {}

  get partial(): string {
    const line = this.lines[this.lineIndex];
    return line === undefined ? '' : line.words.slice(this.committed, this.heard).map((w) => w.text).join(' ');
  }

  push(samples: Int16Array): StreamEvent[] {
    return this.advance(samples.length);
  }

  /** The recognizer hears `count` more samples. */
  advance(count: number): StreamEvent[] {
    if (this.closed) return [];
    this.position += count;
    const events: StreamEvent[] = [];
    for (let line = this.lines[this.lineIndex]; line !== undefined; line = this.lines[this.lineIndex]) {
      // One partial per word whose end was passed, so how the audio was framed never shows.
      while (this.heard < line.words.length && (line.words[this.heard] as { end: number }).end <= this.position) {
        this.heard += 1;
        if (this.heard < line.words.length) events.push({ type: 'partial', text: this.partial });
      }
      if (this.heard < line.words.length) break;
      events.push(this.commit(line));
      this.lineIndex += 1;
      this.heard = 0;
      this.committed = 0;
    }
    return events;
  }

  flush(): StreamEvent[] {
    const line = this.lines[this.lineIndex];
    if (this.closed || line === undefined || this.heard === this.committed) return [];
    const event = this.commit(line);
    this.committed = this.heard;
    return [event];
  }

  close(): void {
    this.closed = true;
  }

  private commit(line: PlacedLine): SegmentEvent {
    const speaker = Math.min(line.speaker, Math.max(0, this.maxSpeakers - 1));
    const words = line.words.slice(this.committed, this.heard).map((w) => ({ text: w.text, startMs: samplesToMs(w.start), endMs: samplesToMs(w.end), confidence: 0.95, speakerIndex: speaker }));
    const first = words[0] as { startMs: number };
    const last = words[words.length - 1] as { endMs: number };
    const segment: RecognizedSegment = { startMs: first.startMs, endMs: last.endMs, words, speakerIndex: speaker };
    const event: SegmentEvent = { type: 'segment', segment, languageCode: line.language, languageProbability: line.languageProbability };
    this.record(event, line);
    return event;
  }
}

/** Batch results carry ISO 639-3 codes; the few a script is likely to use, else the code as given. */
function toThreeLetter(code: string): string {
  const known: Record<string, string> = { en: 'eng', de: 'deu', fr: 'fra', es: 'spa', it: 'ita', nl: 'nld', pt: 'por', ja: 'jpn', zh: 'zho' };
  return known[code] ?? code;
}
