import type { RealtimeLine, RealtimeNotice, RealtimeSession } from '../../types/realtime.js';
import { LineStore, type LineUpdate, type SessionLine } from './line-store.js';
import type { AlignmentMessage, EntitiesMessage, LanguageMessage, RevisionMessage, WireLine } from '../messages/server-messages.js';

/** Where the transcript's news goes: the session's emitter and its Observables. */
export interface TranscriptOutput {
  line(line: SessionLine): void;
  lineUpdated(update: LineUpdate): void;
  notice(notice: RealtimeNotice): void;
}

/**
 * What the session heard: lines by id with their supplements, and notices. Lines and notices can
 * arrive twice (a live event and then a reconnect's or the finish's session view); each is told once.
 */
export class SessionTranscript {
  readonly #lines = new LineStore();
  readonly #notices: RealtimeNotice[] = [];

  constructor(private readonly out: TranscriptOutput) {}

  get lines(): SessionLine[] {
    return this.#lines.all();
  }

  get notices(): readonly RealtimeNotice[] {
    return this.#notices;
  }

  addLine(wire: WireLine | RealtimeLine): void {
    const { line, update } = this.#lines.add(wire);
    if (line !== undefined) this.out.line(line);
    if (update !== undefined) this.out.lineUpdated(update);
  }

  supplement(message: AlignmentMessage | EntitiesMessage | RevisionMessage | LanguageMessage): void {
    const update = this.#lines.supplement(message);
    if (update !== undefined) this.out.lineUpdated(update);
  }

  addNotice(notice: RealtimeNotice): void {
    if (this.#notices.some((n) => sameNotice(n, notice))) return;
    this.#notices.push(notice);
    this.out.notice(notice);
  }

  /** A session view (reconnect or finish): new lines are emitted, known ones updated, notices once. */
  merge(view: RealtimeSession): void {
    for (const line of view.lines) this.addLine(line);
    for (const notice of view.notices) this.addNotice(notice);
  }
}

function sameNotice(a: RealtimeNotice, b: RealtimeNotice): boolean {
  return a.code === b.code && a.message === b.message && (a.lineIds ?? []).join() === (b.lineIds ?? []).join() && (a.supplements ?? []).join() === (b.supplements ?? []).join();
}
