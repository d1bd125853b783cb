import type { RecognizerStream, StreamEvent } from '../recognition/recognizer.js';
import { NAMES } from '../recognition/words.js';
import { REALTIME } from '../protocol.js';
import type { RealtimeOptions } from './realtime-options.js';

/**
 * One realtime session's audio state (spec "Real-time session"; issue 4 builds the socket on it).
 *
 *   ACTIVE --pause--> PAUSED --resume--> ACTIVE (epoch + 1)
 *   ACTIVE --rotate--> ACTIVE, accepting false, until resume (epoch + 1)
 *   ACTIVE | PAUSED --finish--> FINISHING --> COMPLETED | PARTIAL | FAILED
 *
 * Cursors are absolute sample positions since the session began (PCM16, 16 kHz, mono):
 *   receivedSamples  contiguous samples stored; the next frame must start here
 *   sentSamples      the furthest end position any frame announced (duplicates included)
 *   capturedSamples  the client's own count, reported by pause and finish
 * Frames carry { epoch, startSample }. A frame wholly before the cursor is a duplicate (dropped), one
 * overlapping it is trimmed, one starting past it is refused (the client must resend from the cursor).
 */
export type SupplementKind = 'alignment' | 'entities' | 'revision' | 'language';

export interface LineWord {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly confidence: number;
}

export interface Line {
  readonly id: string;
  readonly epoch: number;
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
  revisedText: string | null;
  languageCode: string | null;
  languageProbability: number | null;
  entities: Array<{ category: string; text: string; startMs: number; endMs: number }>;
  words: LineWord[];
  characterAlignments: Array<{ char: string; startMs: number; endMs: number }>;
  /** Requested supplements that have not arrived yet. */
  readonly pending: Set<SupplementKind>;
  /** What the recogniser produced, applied when each supplement arrives. */
  readonly source: Extract<StreamEvent, { type: 'segment' }>;
}

export type FeedOutcome =
  | { readonly kind: 'accepted'; readonly acceptedSamples: number; readonly duplicateSamples: number; readonly receivedSamples: bigint }
  | { readonly kind: 'rejected'; readonly reason: 'NOT_ACCEPTING' | 'WRONG_EPOCH' | 'BEYOND_CURSOR'; readonly receivedSamples: bigint; readonly epoch: number };

export type SessionEvent =
  | { readonly type: 'transcript.partial'; readonly text: string; readonly epoch: number }
  | { readonly type: 'transcript.line'; readonly line: Line }
  | { readonly type: 'transcript.supplement'; readonly line: Line; readonly kind: SupplementKind }
  | { readonly type: 'usage.updated'; readonly rotate: boolean };

/** Decides, per committed line and requested kind, whether the supplement arrives now or is withheld. */
export type SupplementPolicy = (line: Line, kind: SupplementKind) => 'now' | 'withhold';

export class SessionAudio {
  epoch: number = REALTIME.firstEpoch;
  accepting = true;
  state: 'ACTIVE' | 'PAUSED' | 'FINISHING' | 'CLOSED' = 'ACTIVE';
  received = 0n;
  sent = 0n;
  captured = 0n;
  partial = '';
  readonly lines: Line[] = [];
  private held: Array<Extract<StreamEvent, { type: 'segment' }>> = [];
  private readonly listeners = new Set<(event: SessionEvent) => void>();

  constructor(
    private readonly stream: RecognizerStream,
    private readonly options: RealtimeOptions,
    private readonly supplementPolicy: SupplementPolicy,
  ) {}

  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(event: SessionEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** Feeds PCM16 samples that start at absolute `startSample` of `epoch` (issue 4's socket calls this). */
  feed(epoch: number, startSample: bigint, samples: Int16Array): FeedOutcome {
    if (!this.accepting || this.state !== 'ACTIVE') return { kind: 'rejected', reason: 'NOT_ACCEPTING', receivedSamples: this.received, epoch: this.epoch };
    if (epoch !== this.epoch) return { kind: 'rejected', reason: 'WRONG_EPOCH', receivedSamples: this.received, epoch: this.epoch };
    if (startSample > this.received) return { kind: 'rejected', reason: 'BEYOND_CURSOR', receivedSamples: this.received, epoch: this.epoch };
    const end = startSample + BigInt(samples.length);
    if (end > this.sent) this.sent = end;
    const skip = Number(this.received - startSample);
    if (skip >= samples.length) return { kind: 'accepted', acceptedSamples: 0, duplicateSamples: samples.length, receivedSamples: this.received };
    const fresh = skip > 0 ? samples.subarray(skip) : samples;
    this.received += BigInt(fresh.length);
    this.handle(this.stream.push(fresh));
    return { kind: 'accepted', acceptedSamples: fresh.length, duplicateSamples: skip, receivedSamples: this.received };
  }

  /** Commits the open segment (pause, rotation, finish). */
  commit(): void {
    const events = this.stream.flush();
    if (this.options.segmentCommitMode === 'manual') {
      for (const event of events) if (event.type === 'segment') this.held.push(event);
      const merged = mergeSegments(this.held);
      this.held = [];
      if (merged !== undefined) this.addLine(merged);
    } else {
      this.handle(events);
    }
    this.partial = '';
  }

  recordCaptured(value: bigint): void {
    if (value > this.captured) this.captured = value;
  }

  pause(): void {
    this.commit();
    this.state = 'PAUSED';
    this.accepting = false;
  }

  /** Finish step 1: stop accepting audio and commit the trailing segment. */
  beginFinish(): void {
    this.accepting = false;
    this.state = 'FINISHING';
    this.commit();
  }

  /** The session settled; nothing changes any more. */
  close(): void {
    this.state = 'CLOSED';
  }

  /** Server-driven rotation: commit, stop accepting until the client resumes in the next epoch. */
  rotate(): void {
    this.commit();
    this.accepting = false;
    this.emit({ type: 'usage.updated', rotate: true });
  }

  /** session.resume: every resume starts the next epoch (after a pause or a rotation). */
  resume(): number {
    if (this.state === 'FINISHING' || this.state === 'CLOSED') return this.epoch;
    this.epoch += 1;
    this.state = 'ACTIVE';
    this.accepting = true;
    return this.epoch;
  }

  /** Delivers a withheld supplement (issue 4's delayed-supplement faults call this). */
  deliverSupplement(lineId: string, kind: SupplementKind): boolean {
    const line = this.lines.find((l) => l.id === lineId);
    if (line === undefined || !line.pending.has(kind)) return false;
    this.apply(line, kind);
    return true;
  }

  private handle(events: StreamEvent[]): void {
    for (const event of events) {
      if (event.type === 'partial') {
        this.partial = [...this.held.map((h) => textOf(h)), event.text].filter((t) => t !== '').join(' ');
        this.emit({ type: 'transcript.partial', text: this.partial, epoch: this.epoch });
      } else if (this.options.segmentCommitMode === 'manual') {
        // Manual commit mode: silence does not commit; segments wait for pause, rotation or finish.
        this.held.push(event);
      } else {
        this.addLine(event);
      }
    }
  }

  private addLine(source: Extract<StreamEvent, { type: 'segment' }>): void {
    const text = textOf(source);
    const line: Line = {
      id: `line_${String(this.lines.length + 1).padStart(4, '0')}`,
      epoch: this.epoch,
      text,
      startMs: source.segment.startMs,
      endMs: source.segment.endMs,
      revisedText: null,
      languageCode: null,
      languageProbability: null,
      entities: [],
      words: [],
      characterAlignments: [],
      pending: new Set(requestedKinds(this.options)),
      source,
    };
    this.lines.push(line);
    this.partial = '';
    this.emit({ type: 'transcript.line', line });
    for (const kind of [...line.pending]) if (this.supplementPolicy(line, kind) === 'now') this.apply(line, kind);
  }

  private apply(line: Line, kind: SupplementKind): void {
    const words = line.source.segment.words;
    if (kind === 'alignment') {
      line.words = words.map((w) => ({ text: w.text, startMs: w.startMs, endMs: w.endMs, confidence: w.confidence }));
    } else if (kind === 'entities') {
      const wanted = this.options.entityCategories.some((c) => c === 'name' || c === 'pii' || c === 'all');
      line.entities = wanted ? words.filter((w) => NAMES.has(w.text)).map((w) => ({ category: 'name', text: w.text, startMs: w.startMs, endMs: w.endMs })) : [];
    } else if (kind === 'revision') {
      line.revisedText = line.text === '' ? '' : line.text.charAt(0).toUpperCase() + line.text.slice(1) + '.';
    } else {
      line.languageCode = line.source.languageCode;
      line.languageProbability = line.source.languageProbability;
    }
    line.pending.delete(kind);
    this.emit({ type: 'transcript.supplement', line, kind });
  }
}

/** Spec "finish" 3: which supplements a line waits for. */
export function requestedKinds(options: RealtimeOptions): SupplementKind[] {
  const kinds: SupplementKind[] = [];
  if (options.includeAlignment) kinds.push('alignment');
  if (options.entityCategories.length > 0) kinds.push('entities');
  if (options.rewriteInstruction !== undefined) kinds.push('revision');
  if (options.includeDetectedLanguage) kinds.push('language');
  return kinds;
}

function textOf(event: Extract<StreamEvent, { type: 'segment' }>): string {
  return event.segment.words.map((w) => w.text).join(' ');
}

function mergeSegments(held: ReadonlyArray<Extract<StreamEvent, { type: 'segment' }>>): Extract<StreamEvent, { type: 'segment' }> | undefined {
  const first = held[0];
  const last = held[held.length - 1];
  if (first === undefined || last === undefined) return undefined;
  const words = held.flatMap((h) => h.segment.words);
  return { ...first, segment: { startMs: first.segment.startMs, endMs: last.segment.endMs, words, speakerIndex: first.segment.speakerIndex } };
}
