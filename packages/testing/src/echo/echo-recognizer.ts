import type {
  ChannelRecognition, Recognizer, RecognizerStream, RecognitionOptions, RecognitionRequest, RecognitionResult, RecognizedSegment, StreamEvent,
} from '@soundclone/server';
import { ALPHABET, TONE, toneHz } from './tone-code.js';

type SegmentEvent = Extract<StreamEvent, { type: 'segment' }>;

/** Block length in ms (20). */
const BLOCK_MS = (TONE.blockSamples * 1000) / 16_000;

/**
 * A Recognizer (the service's recognition seam) that hears the echo tone code (tone-code.ts): it reads
 * the audio in 20 ms blocks at fixed positions, names each sounding block by its strongest tone, and
 * spells words and lines from the silences between. A word is reported as a partial once 80 ms of
 * silence closed it; a line is committed after 400 ms of silence, or at a pause, rotation or finish
 * (flush).
 *
 * Every event depends on the samples alone: the same audio, however framed, gives the same events.
 * The block analysis allocates nothing per block (Goertzel over preset coefficients).
 */
export class EchoRecognizer implements Recognizer {
  readonly id = 'echo-v1';

  async recognize(request: RecognitionRequest): Promise<RecognitionResult> {
    const channels: ChannelRecognition[] = request.channels.map((samples, channelIndex) => {
      const stream = new EchoStream(request.maxSpeakers);
      const pcm = new Int16Array(samples.length);
      for (let i = 0; i < samples.length; i++) pcm[i] = Math.max(-32768, Math.min(32767, Math.round((samples[i] as number) * 32768)));
      const events = [...stream.push(pcm), ...stream.flush()];
      const segments = events.filter((e): e is SegmentEvent => e.type === 'segment').map((e) => e.segment);
      return { channelIndex, segments, languageCode: segments.length > 0 ? 'eng' : null, languageConfidence: segments.length > 0 ? 0.9 : null };
    });
    const longest = request.channels.reduce((max, c) => Math.max(max, c.length), 0);
    return { durationMs: Math.round(longest / 16), channels };
  }

  openStream(options: RecognitionOptions): RecognizerStream {
    return new EchoStream(options.maxSpeakers);
  }
}

/** Goertzel coefficients of the alphabet's tones for one block. */
const COEFFICIENTS = Float64Array.from(ALPHABET, (_c, i) => 2 * Math.cos((2 * Math.PI * toneHz(i)) / 16_000));

interface HeardWord {
  readonly text: string;
  readonly startBlock: number;
  readonly endBlock: number;
}

class EchoStream implements RecognizerStream {
  private readonly block = new Int16Array(TONE.blockSamples);
  private filled = 0;
  /** Blocks read so far (the next block's index). */
  private blocks = 0;
  private silent = Number.POSITIVE_INFINITY;
  /** The letter sounding now: its strongest block's tone and power. */
  private letterOpen = false;
  private letterTone = 0;
  private letterPower = 0;
  private word = '';
  private wordStart = 0;
  private wordEnd = 0;
  private line: HeardWord[] = [];
  private closed = false;

  constructor(readonly maxSpeakers: number) {}

  get partial(): string {
    return this.line.map((w) => w.text).join(' ');
  }

  push(samples: Int16Array): StreamEvent[] {
    if (this.closed) return [];
    const events: StreamEvent[] = [];
    for (let at = 0; at < samples.length;) {
      const take = Math.min(samples.length - at, TONE.blockSamples - this.filled);
      this.block.set(samples.subarray(at, at + take), this.filled);
      this.filled += take;
      at += take;
      if (this.filled === TONE.blockSamples) {
        this.read(events);
        this.filled = 0;
      }
    }
    return events;
  }

  flush(): StreamEvent[] {
    if (this.closed) return [];
    const events: StreamEvent[] = [];
    this.endLetter();
    this.endWord(events);
    this.endLine(events);
    return events;
  }

  close(): void {
    this.closed = true;
  }

  /** One whole block: sound extends the letter, silence ends the letter, then the word, then the line. */
  private read(events: StreamEvent[]): void {
    const index = this.blocks++;
    const block = this.block;
    let energy = 0;
    for (let i = 0; i < block.length; i++) energy += (block[i] as number) * (block[i] as number);
    if (Math.sqrt(energy / block.length) >= TONE.soundRms) {
      this.silent = 0;
      this.hear(index);
      return;
    }
    this.silent += 1;
    if (this.silent === 1) this.endLetter();
    if (this.silent === TONE.wordEndBlocks) this.endWord(events);
    if (this.silent === TONE.lineEndBlocks) this.endLine(events);
  }

  private hear(index: number): void {
    let best = 0;
    let bestPower = -1;
    for (let k = 0; k < COEFFICIENTS.length; k++) {
      const coefficient = COEFFICIENTS[k] as number;
      let s1 = 0;
      let s2 = 0;
      for (let i = 0; i < this.block.length; i++) {
        const s0 = (this.block[i] as number) + coefficient * s1 - s2;
        s2 = s1;
        s1 = s0;
      }
      const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
      if (power > bestPower) {
        bestPower = power;
        best = k;
      }
    }
    if (this.word === '' && !this.letterOpen) this.wordStart = index;
    this.wordEnd = index;
    if (!this.letterOpen || bestPower > this.letterPower) {
      this.letterTone = best;
      this.letterPower = bestPower;
    }
    this.letterOpen = true;
  }

  private endLetter(): void {
    if (!this.letterOpen) return;
    this.word += ALPHABET[this.letterTone] as string;
    this.letterOpen = false;
    this.letterPower = 0;
  }

  private endWord(events: StreamEvent[]): void {
    if (this.word === '') return;
    this.line.push({ text: this.word, startBlock: this.wordStart, endBlock: this.wordEnd });
    this.word = '';
    events.push({ type: 'partial', text: this.partial });
  }

  private endLine(events: StreamEvent[]): void {
    if (this.line.length === 0) return;
    // One voice: echo has no speakers (maxSpeakers only bounds them).
    const speaker = 0;
    const words = this.line.map((w) => ({ text: w.text, startMs: w.startBlock * BLOCK_MS, endMs: (w.endBlock + 1) * BLOCK_MS, confidence: 0.9, speakerIndex: speaker }));
    const segment: RecognizedSegment = { startMs: (words[0] as { startMs: number }).startMs, endMs: (words[words.length - 1] as { endMs: number }).endMs, words, speakerIndex: speaker };
    this.line = [];
    events.push({ type: 'segment', segment, languageCode: 'en', languageProbability: 0.9 });
  }
}
