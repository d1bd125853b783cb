import type { RecognizerStream, StreamEvent } from '../../recognition/recognizer.js';
import { REALTIME } from '@soundclone/core/internal';
import type { RealtimeOptions } from './options.js';
import { applySupplement, mergeSegments, requestedKinds, textOf } from './lines.js';

export { requestedKinds } from './lines.js';
import { SkippedTime } from './skipped-time.js';
import { systemClock, type TimedClock } from '../../util/clock.js';

/**
 * One realtime session's audio state (spec "Real-time session"; the realtime socket drives it).
 *
 *   ACTIVE --pause--> PAUSED --resume--> ACTIVE (epoch + 1)
 *   ACTIVE --rotate--> ACTIVE, accepting false, until resume (epoch + 1)
 *   ACTIVE | PAUSED --finish--> FINISHING --> COMPLETED | PARTIAL | FAILED
 *   recovery window expired: accepting false for good (no socket may attach); finish still works
 *
 * Cursors are absolute sample positions since the session began (PCM16, 16 kHz, mono):
 *   receivedSamples  contiguous samples stored; the next frame must start here
 *   sentSamples      the furthest end position any frame announced (duplicates included)
 *   capturedSamples  the client's own count, reported by pause and finish
 * Frames carry { epoch, startSample }. A frame wholly before the cursor is a duplicate (dropped), one
 * overlapping it is trimmed, one starting past it is refused (the client must resend from the cursor).
 * A skip frame moves the cursor the same way over captured time sent without audio (skipped-time.ts):
 * received counts it, the audio received (`audioSamples`, what is charged) does not.
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
  | {
      readonly kind: 'accepted';
      readonly acceptedSamples: number;
      readonly duplicateSamples: number;
      /** Samples of this frame past the spending limit (present only then): never stored, recognised or charged. */
      readonly refusedSamples?: number;
      readonly receivedSamples: bigint;
    }
  | { readonly kind: 'rejected'; readonly reason: 'NOT_ACCEPTING' | 'WRONG_EPOCH' | 'BEYOND_CURSOR' | 'BALANCE_EXHAUSTED'; readonly receivedSamples: bigint; readonly epoch: number }
  /**
   * The spending guard must wait for the store (an engine with transactions, at most once per started
   * second): nothing changed. Feed the same frame again once `answer` settles; it is then checked
   * against the session as it is by then and decided at once. `answer` rejects when the store failed:
   * the frame is not stored.
   */
  | { readonly kind: 'pending'; readonly answer: Promise<void> };

/**
 * How far the account's balance lets this session's audio go (docs/protocol.md "Realtime spending").
 * Asked before every new sample is stored, because the account's other sessions spend from the same
 * balance; the check and the reservation for what the frame adds are one step (Store.accrueRealtime).
 * An engine without I/O answers synchronously, so a frame is stored or refused in the call that
 * brought it; one that must wait (a database transaction) makes feed answer `pending`.
 */
export interface SpendingGuard {
  /**
   * The session wants to have received `wantedSamples` in all: reserves the charge of as much of it as
   * the balance allows and returns the limit (the most samples the session may have received). Or a
   * promise when the answer must be awaited: it settles once the guard holds the answer, and the same
   * want asked again then answers synchronously; it rejects when the store failed.
   */
  reserve(wantedSamples: bigint): bigint | Promise<void>;
}

export interface SessionNotice {
  readonly code: string;
  readonly message: string;
  readonly supplements?: readonly SupplementKind[];
  readonly lineIds?: readonly string[];
  /** BALANCE_EXHAUSTED: the sample where the balance was used up (decimal string). */
  readonly receivedSamples?: string;
}

/**
 * What a session announces; the socket connection (../socket/connection.ts) turns each into a
 * message. REST pause and finish announce too, so an attached socket hears about them.
 */
export type SessionEvent =
  | { readonly type: 'transcript.partial'; readonly text: string; readonly epoch: number }
  | { readonly type: 'transcript.line'; readonly line: Line }
  | { readonly type: 'transcript.supplement'; readonly line: Line; readonly kind: SupplementKind }
  | { readonly type: 'usage.updated'; readonly rotate: boolean }
  | { readonly type: 'session.paused' }
  | { readonly type: 'session.resumed' }
  | { readonly type: 'session.notice'; readonly notice: SessionNotice }
  | { readonly type: 'session.finished' }
  /**
   * This node let the session go (another node owns it now, or the live state cannot be reached): sockets
   * close retryably. `recycle`: it was handed over on purpose (a drain): sockets are recycled instead
   * (socket.recycle, close 4002), which a client follows at once, as a routine recycle, not a loss.
   */
  | { readonly type: 'session.moved'; readonly recycle?: boolean };

/**
 * Decides, per committed line and requested kind, whether the supplement arrives now, later (after
 * `delayMs`) or is withheld (only `deliverSupplement` brings it).
 */
export type SupplementDecision = 'now' | 'withhold' | { readonly delayMs: number };
export type SupplementPolicy = (line: Line, kind: SupplementKind, context: { readonly sessionId: string }) => SupplementDecision;

/** Ours: server-driven rotation, whichever comes first; undefined disables that trigger. */
export interface RotationSchedule {
  readonly rotateEveryMs?: number;
  readonly rotateEverySamples?: number;
}

/** TEST-ONLY: keep every received sample so tests can compare stored audio with what was sent. */
export interface AudioRetention {
  readonly maxSamples: number;
}

/** A session's audio state as the live state kept it (SessionAudio.restore). */
export interface RestoredAudio {
  readonly epoch: number;
  readonly epochStart: bigint;
  readonly sent: bigint;
  readonly captured: bigint;
  readonly state: 'ACTIVE' | 'PAUSED' | 'FINISHING';
  readonly accepting: boolean;
  readonly exhausted: boolean;
  readonly anchor: bigint;
  readonly anchorState: unknown;
  /** Captured time declared skipped before the received cursor (skip frames). */
  readonly skipped: bigint;
  readonly lines: ReadonlyArray<Pick<Line, 'id' | 'epoch' | 'text' | 'startMs' | 'endMs' | 'source'>>;
  /** The open segment's samples, from `anchor` to the received cursor. */
  readonly open: Int16Array;
  /** TEST-ONLY: every sample the session received (retention on). */
  readonly retained?: Int16Array;
}

export type ResumeOutcome =
  | { readonly kind: 'resumed'; readonly epoch: number; readonly changed: boolean }
  | { readonly kind: 'refused'; readonly reason: 'WRONG_EPOCH' | 'SESSION_CLOSED'; readonly epoch: number };

export class SessionAudio {
  epoch: number = REALTIME.firstEpoch;
  accepting = true;
  state: 'ACTIVE' | 'PAUSED' | 'FINISHING' | 'CLOSED' = 'ACTIVE';
  received = 0n;
  sent = 0n;
  captured = 0n;
  partial = '';
  /** The recovery window passed with no socket attached: audio is never accepted again. */
  expired = false;
  readonly lines: Line[] = [];
  private held: Array<Extract<StreamEvent, { type: 'segment' }>> = [];
  private readonly listeners = new Set<(event: SessionEvent) => void>();
  /** Received position where the current epoch began (sample-based rotation counts from here). */
  epochStart = 0n;
  /**
   * Where the open segment starts: the received position the recogniser could be restarted from after
   * the last committed line (its checkpoint, or the commit itself), with the engine state for that.
   * The live state (src/live) keeps the audio from here on, so another node can rebuild the recogniser.
   */
  anchor = 0n;
  anchorState: unknown = undefined;
  /** The received position the current recogniser stream started at (0, or the anchor it was rebuilt from). */
  private streamBase = 0n;
  /** Samples skipped before the current recogniser stream started (its positions count only audio fed). */
  private skippedAtBase = 0n;
  private cancelRotation: (() => void) | undefined;
  /** Delayed supplements (fault injection); cleared on close so no timer outlives the session. */
  private readonly supplementTimers = new Set<() => void>();
  private retained: Int16Array[] | undefined;
  private retainedSamples = 0;
  /** Captured time the client declared skipped: in `received`, never fed, charged or stored as audio. */
  private readonly skipped = new SkippedTime();

  /** What the recogniser threw, once it failed: the session accepts no more audio. */
  failure: unknown;
  /** The account's balance was used up at `received`: no audio is accepted again. */
  exhausted = false;
  /** Set by the owner (RealtimeSessions): bounds received by the account's balance. */
  spending: SpendingGuard | undefined;

  /**
   * `onRecognizerFailure` hears a recogniser failure (a decoder that would not load, an engine error)
   * once; the owner ends the session. Without it the error propagates to the caller of feed.
   */
  constructor(
    private stream: RecognizerStream,
    private readonly options: RealtimeOptions,
    private readonly supplementPolicy: (line: Line, kind: SupplementKind) => SupplementDecision,
    private readonly rotation: RotationSchedule = {},
    private readonly retention?: AudioRetention,
    private readonly onRecognizerFailure?: (error: unknown) => void,
    /** The service's clock: rotations on a schedule and delayed supplements follow it. */
    private readonly clock: TimedClock = systemClock,
  ) {
    if (retention !== undefined) this.retained = [];
    this.armRotation();
  }

  /**
   * Loads what the recogniser needs before audio comes (a socket attaching: a PocketSphinx decoder,
   * off the main thread). Undefined when there is nothing to wait for; never rejects: a failure
   * fails the session instead.
   */
  prepare(): Promise<void> | undefined {
    return this.stream.prepare?.().catch((error: unknown) => this.fail(error));
  }

  subscribe(listener: (event: SessionEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Samples of audio received: `received` less the skipped time. What the session is charged for. */
  get audioSamples(): bigint {
    return this.received - this.skipped.samples;
  }

  /** Samples of captured time the client declared skipped. */
  get skippedSamples(): bigint {
    return this.skipped.samples;
  }

  /** Paused, or rotated and waiting for session.resume. */
  get awaitingResume(): boolean {
    return !this.expired && (this.state === 'PAUSED' || (this.state === 'ACTIVE' && !this.accepting));
  }

  /** Announces a session-level event (pause, notices, finish) to subscribers such as the socket. */
  announce(event: Extract<SessionEvent, { type: 'session.paused' | 'session.resumed' | 'session.notice' | 'session.finished' | 'session.moved' }>): void {
    this.emit(event);
  }

  private emit(event: SessionEvent): void {
    for (const listener of [...this.listeners]) listener(event);
  }

  /** TEST-ONLY: the samples stored so far, in order (undefined unless retention is on). */
  storedAudio(): Int16Array | undefined {
    if (this.retained === undefined) return undefined;
    const out = new Int16Array(this.retainedSamples);
    let at = 0;
    for (const chunk of this.retained) {
      out.set(chunk, at);
      at += chunk.length;
    }
    return out;
  }

  /**
   * Feeds PCM16 samples that start at absolute `startSample` of `epoch` (the realtime socket calls this).
   * With a spending guard, a frame is stored only up to the guard's limit; reaching it sets `exhausted`
   * (the owner then ends the session) and the rest of the frame is refused, never recognised. When
   * the guard must wait for the store, nothing changes and the outcome is `pending` (see FeedOutcome).
   */
  feed(epoch: number, startSample: bigint, samples: Int16Array): FeedOutcome {
    const refusal = this.refusal(epoch, startSample);
    if (refusal !== undefined) return refusal;
    const end = startSample + BigInt(samples.length);
    const skip = Number(this.received - startSample);
    if (skip >= samples.length) {
      if (end > this.sent) this.sent = end;
      return { kind: 'accepted', acceptedSamples: 0, duplicateSamples: samples.length, receivedSamples: this.received };
    }
    let fresh = skip > 0 ? samples.subarray(skip) : samples;
    let refused = 0;
    if (this.spending !== undefined) {
      // The limit is in samples of audio: skipped time is never charged.
      const limit = this.spending.reserve(this.audioSamples + BigInt(fresh.length));
      if (typeof limit !== 'bigint') return { kind: 'pending', answer: limit };
      const room = limit - this.audioSamples;
      if (room <= 0n) {
        this.exhausted = true;
        this.accepting = false;
        this.disarmRotation();
        return { kind: 'rejected', reason: 'BALANCE_EXHAUSTED', receivedSamples: this.received, epoch: this.epoch };
      }
      if (BigInt(fresh.length) >= room) {
        refused = fresh.length - Number(room);
        fresh = fresh.subarray(0, Number(room));
        this.exhausted = true;
      }
    }
    // sentSamples counts what frames announced, but never past the limit: audio beyond it was refused.
    const announced = end - BigInt(refused);
    if (announced > this.sent) this.sent = announced;
    this.received += BigInt(fresh.length);
    this.retain(fresh);
    let events: StreamEvent[];
    try {
      events = this.skipped.shift(this.stream.push(fresh));
    } catch (error) {
      this.fail(error);
      return { kind: 'rejected', reason: 'NOT_ACCEPTING', receivedSamples: this.received, epoch: this.epoch };
    }
    this.handle(events);
    const outcome: FeedOutcome = { kind: 'accepted', acceptedSamples: fresh.length, duplicateSamples: skip, ...(refused > 0 ? { refusedSamples: refused } : {}), receivedSamples: this.received };
    if (this.exhausted) {
      this.accepting = false;
      this.disarmRotation();
      return outcome;
    }
    const every = this.rotation.rotateEverySamples;
    if (every !== undefined && this.received - this.epochStart >= BigInt(every)) this.rotate();
    return outcome;
  }

  /** Why a frame or skip of `epoch` starting at `startSample` is refused now, or undefined. */
  private refusal(epoch: number, startSample: bigint): Extract<FeedOutcome, { kind: 'rejected' }> | undefined {
    if (this.exhausted) return { kind: 'rejected', reason: 'BALANCE_EXHAUSTED', receivedSamples: this.received, epoch: this.epoch };
    if (!this.accepting || this.state !== 'ACTIVE') return { kind: 'rejected', reason: 'NOT_ACCEPTING', receivedSamples: this.received, epoch: this.epoch };
    if (epoch !== this.epoch) return { kind: 'rejected', reason: 'WRONG_EPOCH', receivedSamples: this.received, epoch: this.epoch };
    if (startSample > this.received) return { kind: 'rejected', reason: 'BEYOND_CURSOR', receivedSamples: this.received, epoch: this.epoch };
    return undefined;
  }

  /**
   * A skip frame: captured samples [startSample, startSample + count) of `epoch` were not sent (the
   * client's voice gate heard silence). Checked like a frame (epoch, cursor; a duplicate is dropped,
   * an overlap trimmed); the cursor moves over the fresh part. The recogniser hears it as the end of
   * what it was fed: the open segment is committed (in `auto` mode a line; in `manual` mode it waits
   * for pause, rotation or finish as ever) and its later times move past the stretch (skipped-time.ts).
   * Nothing is charged, so the spending guard is not asked. Retained audio (test-only) gets zeros for
   * it, so its positions stay capture positions.
   */
  skip(epoch: number, startSample: bigint, count: number): FeedOutcome {
    const refusal = this.refusal(epoch, startSample);
    if (refusal !== undefined) return refusal;
    const end = startSample + BigInt(count);
    if (end > this.sent) this.sent = end;
    const duplicate = Number(this.received - startSample);
    if (duplicate >= count) return { kind: 'accepted', acceptedSamples: 0, duplicateSamples: count, receivedSamples: this.received };
    const fresh = count - duplicate;
    let events: StreamEvent[] = [];
    try {
      events = this.skipped.shift(this.stream.flush());
    } catch (error) {
      this.fail(error);
      return { kind: 'rejected', reason: 'NOT_ACCEPTING', receivedSamples: this.received, epoch: this.epoch };
    }
    this.handle(events);
    if (this.options.segmentCommitMode !== 'manual') this.partial = '';
    // Everything fed so far was just flushed: when the recogniser can restart right there (or has no
    // restart points), the open segment starts after the skip, so the live state keeps no audio for it.
    const point = this.stream.checkpoint?.();
    const clean = this.stream.checkpoint === undefined || (point !== undefined && this.streamPosition(point.atSample) === this.received);
    this.skipped.add(BigInt(fresh));
    this.received += BigInt(fresh);
    if (clean) {
      this.anchor = this.received;
      this.anchorState = point?.state;
    }
    this.retainSilence(fresh);
    return { kind: 'accepted', acceptedSamples: fresh, duplicateSamples: duplicate, receivedSamples: this.received };
  }

  private retainSilence(count: number): void {
    if (this.retained === undefined || this.retention === undefined) return;
    const kept = Math.min(count, this.retention.maxSamples - this.retainedSamples);
    if (kept <= 0) return;
    this.retained.push(new Int16Array(kept));
    this.retainedSamples += kept;
  }

  private retain(fresh: Int16Array): void {
    if (this.retained === undefined || this.retention === undefined) return;
    // A copy: the caller's buffer (a socket frame) is reused or freed after feed returns.
    const room = this.retention.maxSamples - this.retainedSamples;
    if (room <= 0) return;
    const kept = fresh.length <= room ? fresh.slice() : fresh.slice(0, room);
    this.retained.push(kept);
    this.retainedSamples += kept.length;
  }

  /** The recogniser failed: no more audio, and the owner hears it once (it ends the session). */
  private fail(error: unknown): void {
    if (this.state === 'CLOSED' || this.failure !== undefined) return;
    this.failure = error;
    this.accepting = false;
    this.disarmRotation();
    if (this.onRecognizerFailure === undefined) throw error;
    this.onRecognizerFailure(error);
  }

  /** Commits the open segment (pause, rotation, finish). */
  commit(): void {
    let events: StreamEvent[] = [];
    try {
      events = this.skipped.shift(this.stream.flush());
    } catch (error) {
      this.fail(error);
    }
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
    this.disarmRotation();
  }

  /** Finish step 1: stop accepting audio and commit the trailing segment. */
  beginFinish(): void {
    this.accepting = false;
    this.state = 'FINISHING';
    this.disarmRotation();
    this.commit();
  }

  /**
   * The session settled; nothing changes any more and no timer of this session stays armed. The
   * recogniser stream is let go: a finished session keeps only its lines (it stays readable by GET).
   */
  close(): void {
    this.state = 'CLOSED';
    this.stream.close?.();
    this.stream = CLOSED_STREAM;
    this.held = [];
    this.dispose();
  }

  /** Clears every timer (close, server shutdown). Idempotent. */
  dispose(): void {
    this.disarmRotation();
    for (const cancel of this.supplementTimers) cancel();
    this.supplementTimers.clear();
  }

  /** The recovery window passed: no more audio, no more rotations; finish over REST still works. */
  expire(): void {
    this.expired = true;
    this.accepting = false;
    this.disarmRotation();
    // No audio can come any more: an engine holding real resources (a PocketSphinx decoder, ~100 MB)
    // commits the open segment now and lets go, rather than waiting for a finish that may never come.
    if (this.stream.close !== undefined) {
      this.commit();
      this.stream.close();
      this.stream = CLOSED_STREAM;
    }
  }

  /**
   * Server-driven rotation: commit, stop accepting until the client resumes in the next epoch. Only
   * from ACTIVE and accepting (a rotation never stacks on a pause or another rotation).
   */
  rotate(): boolean {
    if (this.state !== 'ACTIVE' || !this.accepting) return false;
    this.disarmRotation();
    this.commit();
    this.accepting = false;
    this.emit({ type: 'usage.updated', rotate: true });
    return true;
  }

  /** Every resume starts the next epoch (after a pause or a rotation). */
  resume(): number {
    if (this.state === 'FINISHING' || this.state === 'CLOSED' || this.expired) return this.epoch;
    this.epoch += 1;
    this.epochStart = this.received;
    this.state = 'ACTIVE';
    this.accepting = true;
    this.armRotation();
    return this.epoch;
  }

  /**
   * session.resume `{ epoch }`, where epoch is the epoch the client is leaving. Idempotent so that a
   * resume repeated after a reconnect never skips an epoch:
   *   awaiting resume and epoch = current        -> next epoch
   *   not awaiting and epoch = current or current - 1 -> already resumed: the current epoch, unchanged
   *   anything else                             -> WRONG_EPOCH
   */
  resumeFrom(epoch: number): ResumeOutcome {
    if (this.state === 'FINISHING' || this.state === 'CLOSED' || this.expired) return { kind: 'refused', reason: 'SESSION_CLOSED', epoch: this.epoch };
    if (this.awaitingResume && epoch === this.epoch) return { kind: 'resumed', epoch: this.resume(), changed: true };
    if (!this.awaitingResume && (epoch === this.epoch || epoch === this.epoch - 1)) return { kind: 'resumed', epoch: this.epoch, changed: false };
    return { kind: 'refused', reason: 'WRONG_EPOCH', epoch: this.epoch };
  }

  private armRotation(): void {
    const every = this.rotation.rotateEveryMs;
    if (every === undefined || this.cancelRotation !== undefined) return;
    this.cancelRotation = this.clock.setTimer(every, () => {
      this.cancelRotation = undefined;
      this.rotate();
    });
  }

  private disarmRotation(): void {
    this.cancelRotation?.();
    this.cancelRotation = undefined;
  }

  /** Delivers a withheld supplement (the delayed-supplement socket faults call this). */
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

  /** The received position of a recogniser stream's sample position (skipped time is never fed to it). */
  private streamPosition(atSample: number): bigint {
    return this.streamBase + BigInt(atSample) + (this.skipped.samples - this.skippedAtBase);
  }

  private addLine(source: Extract<StreamEvent, { type: 'segment' }>): void {
    const point = this.stream.checkpoint?.();
    if (point !== undefined) {
      this.anchor = this.streamPosition(point.atSample);
      this.anchorState = point.state;
    } else {
      this.anchor = this.received;
      this.anchorState = undefined;
    }
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
    for (const kind of [...line.pending]) {
      const decision = this.supplementPolicy(line, kind);
      if (decision === 'now') {
        this.apply(line, kind);
      } else if (decision !== 'withhold') {
        const cancel = this.clock.setTimer(decision.delayMs, () => {
          this.supplementTimers.delete(cancel);
          if (line.pending.has(kind) && this.state !== 'CLOSED') this.apply(line, kind);
        });
        this.supplementTimers.add(cancel);
      }
    }
  }

  /**
   * Another node's session taken over (src/live): the cursors, state and committed lines as that node
   * made them durable; the received cursor stands at `anchor` until replay() has fed the open segment's
   * audio (`state.open`) to this fresh recogniser stream, which was opened at the anchor's restart
   * point. Lines are not announced again; supplements of restored lines are applied at once (they
   * follow from the recognised words).
   */
  restore(state: RestoredAudio): void {
    this.epoch = state.epoch;
    this.epochStart = state.epochStart;
    this.received = state.anchor;
    this.sent = state.sent;
    this.captured = state.captured;
    this.state = state.state;
    this.accepting = state.accepting;
    this.exhausted = state.exhausted;
    this.anchor = state.anchor;
    this.anchorState = state.anchorState;
    this.streamBase = state.anchor;
    this.skipped.add(state.skipped);
    this.skippedAtBase = state.skipped;
    // Without a restart state the stream was opened fresh: its clock starts at the anchor. The audio
    // fed before it is the anchor less the time skipped by then (an engine without restart points has
    // its open segment start after the last skip: feed() commits it first).
    if (state.anchorState === undefined) this.skipped.startedAfter(state.anchor - state.skipped);
    if (!this.accepting || this.state !== 'ACTIVE') this.disarmRotation();
    for (const kept of state.lines) {
      const line: Line = { ...kept, revisedText: null, languageCode: null, languageProbability: null, entities: [], words: [], characterAlignments: [], pending: new Set(requestedKinds(this.options)) };
      this.lines.push(line);
      for (const kind of [...line.pending]) applySupplement(line, kind, this.options);
    }
    if (state.retained !== undefined && this.retained !== undefined) {
      this.retained = [state.retained];
      this.retainedSamples = state.retained.length;
    }
  }

  /** Part of a restored open segment, in order: fed to the recogniser as audio received before the takeover. */
  replay(samples: Int16Array): void {
    if (samples.length === 0) return;
    this.received += BigInt(samples.length);
    this.handle(this.stream.push(samples));
  }

  private apply(line: Line, kind: SupplementKind): void {
    applySupplement(line, kind, this.options);
    this.emit({ type: 'transcript.supplement', line, kind });
  }
}

const CLOSED_STREAM: RecognizerStream = { push: () => [], flush: () => [], partial: '' };
