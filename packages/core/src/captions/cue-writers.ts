import type { Cue, CueChange } from './cue.js';
import { CueSequencer } from './cue-sequencer.js';
import { CaptionError } from '../errors/caption-error.js';

/** Where a writer puts its text: a file append, a stream write, a buffer. Called with whole cues only. */
export type TextSink = (chunk: string) => void;

function clock(ms: number, separator: '.' | ','): string {
  const t = Math.max(0, Math.round(ms));
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor(t / 60_000) % 60;
  const s = Math.floor(t / 1000) % 60;
  const f = t % 1000;
  return `${String(h).padStart(2, '0')}:${String(m).padStart(2, '0')}:${String(s).padStart(2, '0')}${separator}${String(f).padStart(3, '0')}`;
}

/** WebVTT timestamp `hh:mm:ss.ttt`. */
export function vttTime(ms: number): string {
  return clock(ms, '.');
}

/** SRT timestamp `hh:mm:ss,ttt`. */
export function srtTime(ms: number): string {
  return clock(ms, ',');
}

/** Cue text is not markup: `&`, `<`, `>` are escaped (which also keeps `-->` out of a payload). */
function vttEscape(text: string): string {
  return text.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;');
}

/** One cue block of a WebVTT file (the speaker, when known, as a `<v>` voice span). */
export function vttCueBlock(cue: Cue): string {
  const text = cue.lines.map(vttEscape).join('\n');
  const body = cue.speaker === null ? text : `<v ${vttEscape(cue.speaker)}>${text}`;
  return `${cue.id}\n${vttTime(cue.startMs)} --> ${vttTime(cue.endMs)}\n${body}\n\n`;
}

abstract class IncrementalWriter {
  readonly #sequencer = new CueSequencer();
  #ended = false;
  #written = 0;

  constructor(protected readonly sink: TextSink) {}

  /** Cues written so far. */
  get written(): number {
    return this.#written;
  }

  /** Revisions that came after their cue was in the file (see CueSequencer). */
  get lateRevisions(): number {
    return this.#sequencer.lateRevisions;
  }

  /** Takes an engine decision; appends the cues it makes ready. */
  write(change: CueChange): void {
    if (this.#ended) throw new CaptionError('CAPTIONS_INVALID_STATE', 'cue written after the writer ended');
    this.#append(this.#sequencer.take(change));
  }

  /** Appends every final cue still held. The file is complete after this. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#append(this.#sequencer.end());
  }

  #append(cues: readonly Cue[]): void {
    for (const cue of cues) {
      if (cue.text === '') continue;
      this.#written += 1;
      this.sink(this.block(cue, this.#written));
    }
  }

  protected abstract block(cue: Cue, number: number): string;
}

/**
 * Appends final cues to a WebVTT file as they settle. The header goes out at once, so the text written
 * so far is a valid WebVTT file after every append.
 */
export class WebVttWriter extends IncrementalWriter {
  constructor(sink: TextSink) {
    super(sink);
    sink('WEBVTT\n\n');
  }

  protected block(cue: Cue): string {
    return vttCueBlock(cue);
  }
}

/** Appends final cues to an SRT file as they settle, numbered 1, 2, … (cues a revision emptied are skipped). */
export class SrtWriter extends IncrementalWriter {
  protected block(cue: Cue, number: number): string {
    return `${String(number)}\n${srtTime(cue.startMs)} --> ${srtTime(cue.endMs)}\n${cue.lines.join('\n')}\n\n`;
  }
}
