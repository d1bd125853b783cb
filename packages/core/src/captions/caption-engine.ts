import { cueId, type Cue, type CueChange } from './cue.js';
import { breakLines, fitsBox, readChars, splitWords } from './cue-layout.js';
import { resolveCaptionOptions, type CaptionOptions, type ResolvedCaptionOptions } from './caption-options.js';
import { StablePrefix } from './stable-prefix.js';
import { CaptionError } from '../errors/caption-error.js';

/** A partial as the engine needs it: the open segment's whole text in its epoch. */
export interface CaptionPartial {
  readonly epoch: number;
  readonly text: string;
}

/**
 * A committed line as the engine needs it (a session's SessionLine fits). Times are ms on the session's
 * audio clock; `words` are filled in by the alignment supplement (`{ text, startMs, endMs }`).
 */
export interface CaptionLine {
  readonly id: string;
  readonly text: string;
  readonly revisedText?: string | null;
  readonly epoch?: number | undefined;
  readonly startMs?: number | undefined;
  readonly endMs?: number | undefined;
  readonly words?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly pendingSupplements?: readonly string[];
  readonly speakerId?: unknown;
}

interface TimedWord {
  readonly text: string;
  readonly startMs: number;
  readonly endMs: number;
}

interface FinalCue {
  readonly index: number;
  readonly lineId: string;
  words: TimedWord[];
  startMs: number;
  endMs: number;
  settled: boolean;
  revision: number;
  speaker: string | null;
  /** What was last emitted, to emit a revision only when something a viewer sees changed. */
  emitted: Cue | undefined;
}

/** Supplements that can change a cue's words or times; entities and language never do. */
const CHANGING = new Set(['alignment', 'revision']);

/**
 * The caption engine: one object owns the whole caption state of one session; each input returns the
 * cue changes it decided. It reads no clock and sets no timer: inputs carry the caller's `nowMs`, and
 * `nextWakeMs()` says when `tick()` has work (a word turning stable by age).
 *
 *   partial ──> StablePrefix ──> live cue (not final; replaced by id, removed when its line commits)
 *   line ─────> words with times ──> final cues (ids allocated once, in time order)
 *   update ───> same cues, new words/times ──> revised cues (same ids; never new ones)
 *
 * Exactness: the words of a line are split across its cues and nothing else is, so the final cues'
 * words in id order are the lines' words in arrival order (revisedText where a revision arrived). A line
 * id is taken once: the same line again (a reconnect's view, a repeated message) is an update.
 */
export class CaptionEngine {
  readonly options: ResolvedCaptionOptions;
  readonly #cues: FinalCue[] = [];
  readonly #lineCues = new Map<string, number[]>();
  readonly #prefix: StablePrefix;
  #epoch = 0;
  /** Ids of live cues on screen. */
  #live = new Map<string, Cue>();
  #ended = false;

  constructor(options: CaptionOptions = {}) {
    this.options = resolveCaptionOptions(options);
    this.#prefix = new StablePrefix(this.options.stableUpdates, this.options.stableMs);
  }

  /** The final cues so far, in time order (the latest version of each). */
  cues(): Cue[] {
    return this.#cues.map((c) => this.#view(c));
  }

  /** The words the live caption shows now (stable or held), across all its chunks; empty when none. */
  liveWords(): readonly string[] {
    return this.#prefix.shown;
  }

  /** A partial of the open segment (latest epoch only: an older epoch's partial is stale and ignored). */
  partial(partial: CaptionPartial, nowMs: number): CueChange[] {
    this.#checkOpen();
    if (partial.epoch < this.#epoch) return [];
    if (partial.epoch > this.#epoch) {
      this.#epoch = partial.epoch;
      this.#prefix.reset();
    }
    this.#prefix.update(partial.text, nowMs);
    return this.#liveChanges();
  }

  /** Time passed: words may have turned stable by age. */
  tick(nowMs: number): CueChange[] {
    if (this.#ended) return [];
    return this.#prefix.tick(nowMs) ? this.#liveChanges() : [];
  }

  /** When `tick()` next has something to do (caller's clock), or null. */
  nextWakeMs(): number | null {
    return this.#ended ? null : this.#prefix.nextStableAtMs();
  }

  /** A committed line. A line id seen before is treated as an update. */
  line(line: CaptionLine): CueChange[] {
    this.#checkOpen();
    if (this.#lineCues.has(line.id)) return this.lineUpdated(line);
    // A line of an older epoch (a reconnect's view bringing a line late) is not the open segment: the
    // partial of the current epoch stays on screen, under a new id after the line's cues.
    const closesOpenSegment = line.epoch === undefined || line.epoch >= this.#epoch;
    if (line.epoch !== undefined && line.epoch > this.#epoch) this.#epoch = line.epoch;
    const words = timedWords(line, this.#floorMs());
    const groups = this.#chunk(words);
    const first = this.#cues.length;
    const changes: CueChange[] = [];
    // Live cues go first: a live cue whose id a final cue now takes is replaced by it (the final comes
    // after), any other is removed before a final could take its id.
    for (const [id, cue] of this.#live) {
      const index = Number(id.slice(4)) - 1;
      if (!closesOpenSegment || index < first || index >= first + groups.length) changes.push({ kind: 'removed', cue });
    }
    this.#live.clear();
    const indexes: number[] = [];
    for (const group of groups) {
      const index = this.#cues.length;
      this.#cues.push({ index, lineId: line.id, words: group, startMs: 0, endMs: 0, settled: settledOf(line), revision: 0, speaker: speakerOf(line), emitted: undefined });
      indexes.push(index);
    }
    this.#lineCues.set(line.id, indexes);
    this.#retime(first, changes);
    // The open segment is now this line: what the partial showed is replaced by final cues.
    if (closesOpenSegment) this.#prefix.reset();
    else changes.push(...this.#liveChanges());
    return changes;
  }

  /** A supplement (alignment, revision, …) changed a committed line: its cues are revised, same ids. */
  lineUpdated(line: CaptionLine): CueChange[] {
    this.#checkOpen();
    const indexes = this.#lineCues.get(line.id);
    if (indexes === undefined) return this.line(line);
    if (indexes.length === 0) return []; // an empty line has no cue to revise (documented)
    const cues = indexes.map((i) => this.#cues[i] as FinalCue);
    const words = timedWords(line, (cues[0] as FinalCue).words[0]?.startMs ?? this.#floorMs());
    const oldCounts = cues.map((c) => c.words.length);
    const sameWords = words.length === oldCounts.reduce((a, b) => a + b, 0) && words.every((w, i) => w.text === flat(cues)[i]?.text);
    const groups = sameWords ? regroup(words, oldCounts) : this.#spread(words, cues.length);
    const settled = settledOf(line);
    const speaker = speakerOf(line);
    cues.forEach((c, i) => {
      c.words = groups[i] ?? [];
      c.settled = settled;
      c.speaker = speaker;
    });
    const changes: CueChange[] = [];
    this.#retime(indexes[0] as number, changes);
    return changes;
  }

  /** The session ended: every final cue is settled (no supplement will come any more). */
  end(): CueChange[] {
    if (this.#ended) return [];
    const changes: CueChange[] = [];
    for (const cue of this.#live.values()) changes.push({ kind: 'removed', cue });
    this.#live.clear();
    for (const c of this.#cues) c.settled = true;
    this.#retime(0, changes, true);
    this.#ended = true;
    return changes;
  }

  #checkOpen(): void {
    if (this.#ended) throw new CaptionError('CAPTIONS_INVALID_STATE', 'the caption engine was ended; it takes no more input');
  }

  /** Where the next cue may start: the end of the last final cue (no overlap). */
  #floorMs(): number {
    return this.#cues.at(-1)?.endMs ?? 0;
  }

  /** Words into cue-sized groups: each fits the box, its span stays within maxDurationMs, and it can be read in it. */
  #chunk(words: readonly TimedWord[]): TimedWord[][] {
    const o = this.options;
    const groups: TimedWord[][] = [];
    let current: TimedWord[] = [];
    for (const w of words) {
      const next = [...current, w];
      const texts = next.map((x) => x.text);
      const span = w.endMs - (current[0]?.startMs ?? w.startMs);
      const fits = fitsBox(texts, o.maxLines, o.maxLineChars) && span <= o.maxDurationMs && (readChars(texts) * 1000) / o.maxCharsPerSecond <= o.maxDurationMs;
      if (current.length > 0 && !fits) {
        groups.push(current);
        current = [w];
      } else current = next;
    }
    if (current.length > 0) groups.push(current);
    return groups;
  }

  /**
   * A revised text over a fixed number of cues: chunked as usual; fewer groups leave later cues empty,
   * more are folded into the last cue (ids are never added for a revision; that cue may then exceed the box).
   */
  #spread(words: readonly TimedWord[], count: number): TimedWord[][] {
    const groups = this.#chunk(words);
    if (groups.length <= count) return groups;
    return [...groups.slice(0, count - 1), groups.slice(count - 1).flat()];
  }

  /**
   * Times from cue `from` on: start at the first word (never before the previous cue's end: no overlap),
   * end at the last word, stretched to minDurationMs and to the reading rate, capped at maxDurationMs.
   * A cue whose viewer-visible fields changed is emitted (final the first time, revised after).
   */
  #retime(from: number, changes: CueChange[], all = false): void {
    const o = this.options;
    let floor = from > 0 ? (this.#cues[from - 1] as FinalCue).endMs : 0;
    for (let i = from; i < this.#cues.length; i++) {
      const c = this.#cues[i] as FinalCue;
      const texts = c.words.map((w) => w.text);
      const first = c.words[0]?.startMs ?? floor;
      const last = c.words.at(-1)?.endMs ?? first;
      c.startMs = Math.max(first, floor);
      const readMs = Math.ceil((readChars(texts) * 1000) / o.maxCharsPerSecond);
      const wanted = c.words.length === 0 ? 0 : Math.max(last - c.startMs, o.minDurationMs, readMs);
      c.endMs = c.startMs + Math.min(wanted, o.maxDurationMs);
      floor = c.endMs;
      const view = this.#view(c);
      const before = c.emitted;
      if (before === undefined) {
        c.emitted = view;
        changes.push({ kind: 'final', cue: view });
      } else if (before.startMs !== view.startMs || before.endMs !== view.endMs || before.text !== view.text || before.settled !== view.settled || before.speaker !== view.speaker) {
        c.revision += 1;
        const revised = { ...view, revision: c.revision };
        c.emitted = revised;
        changes.push({ kind: 'revised', cue: revised });
      } else if (!all && i > from && c.lineId !== (this.#cues[from] as FinalCue).lineId) {
        break; // times settle: later cues start from the same floor, so nothing after changes
      }
    }
  }

  #view(c: FinalCue): Cue {
    const texts = c.words.map((w) => w.text);
    const lines = breakLines(texts, this.options.maxLineChars);
    return { id: cueId(c.index), index: c.index, startMs: c.startMs, endMs: c.endMs, lines, text: lines.join('\n'), tail: '', speaker: c.speaker, final: true, settled: c.settled, revision: c.revision, lineId: c.lineId };
  }

  /** The live cue: the last box-full of the shown words, ids those of the final cues they are likely to become. */
  #liveChanges(): CueChange[] {
    const o = this.options;
    const shown = [...this.#prefix.shown];
    const tail = o.unstableTail === 'separate' ? this.#prefix.tail.join(' ') : '';
    const changes: CueChange[] = [];
    if (shown.length === 0 && tail === '') {
      for (const cue of this.#live.values()) changes.push({ kind: 'removed', cue });
      this.#live.clear();
      return changes;
    }
    const floor = this.#floorMs();
    const groups = this.#chunk(shown.map((text) => ({ text, startMs: floor, endMs: floor })));
    const index = this.#cues.length + Math.max(0, groups.length - 1);
    const lines = breakLines(groups.at(-1)?.map((w) => w.text) ?? [], o.maxLineChars);
    const cue: Cue = { id: cueId(index), index, startMs: floor, endMs: floor + o.maxDurationMs, lines, text: lines.join('\n'), tail, speaker: null, final: false, settled: false, revision: 0, lineId: null };
    for (const [id, old] of this.#live) {
      if (id !== cue.id) changes.push({ kind: 'removed', cue: old });
    }
    const before = this.#live.get(cue.id);
    this.#live.clear();
    this.#live.set(cue.id, cue);
    if (before === undefined || before.text !== cue.text || before.tail !== cue.tail) changes.push({ kind: 'live', cue });
    return changes;
  }
}

function flat(cues: readonly FinalCue[]): TimedWord[] {
  return cues.flatMap((c) => c.words);
}

function regroup(words: readonly TimedWord[], counts: readonly number[]): TimedWord[][] {
  const out: TimedWord[][] = [];
  let at = 0;
  for (const n of counts) {
    out.push(words.slice(at, at + n));
    at += n;
  }
  return out;
}

function settledOf(line: CaptionLine): boolean {
  return !(line.pendingSupplements ?? []).some((k) => CHANGING.has(k));
}

function speakerOf(line: CaptionLine): string | null {
  return typeof line.speakerId === 'string' ? line.speakerId : null;
}

/**
 * The line's words with times: the alignment's own when it covers the shown text word for word, else
 * the line's span shared out by characters (a line with no times starts at `floorMs`).
 */
function timedWords(line: CaptionLine, floorMs: number): TimedWord[] {
  const texts = splitWords(line.revisedText ?? line.text);
  const aligned = line.words ?? [];
  if (aligned.length === texts.length && texts.length > 0) {
    const out: TimedWord[] = [];
    for (let i = 0; i < texts.length; i++) {
      const w = aligned[i] as Record<string, unknown>;
      const s = w['startMs'];
      const e = w['endMs'];
      if (typeof s !== 'number' || typeof e !== 'number' || !Number.isFinite(s) || !Number.isFinite(e)) break;
      out.push({ text: texts[i] as string, startMs: s, endMs: Math.max(s, e) });
    }
    if (out.length === texts.length) return out;
  }
  const start = typeof line.startMs === 'number' && Number.isFinite(line.startMs) ? line.startMs : floorMs;
  const end = typeof line.endMs === 'number' && Number.isFinite(line.endMs) ? Math.max(start, line.endMs) : start;
  const total = texts.reduce((n, t) => n + t.length, 0);
  const out: TimedWord[] = [];
  let at = 0;
  for (const text of texts) {
    const s = start + ((end - start) * at) / Math.max(1, total);
    at += text.length;
    out.push({ text, startMs: Math.round(s), endMs: Math.round(start + ((end - start) * at) / Math.max(1, total)) });
  }
  return out;
}
