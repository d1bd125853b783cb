import type { RealtimeLine, RealtimeNotice, RealtimeSession } from '../../types/realtime.js';
import type { EmitAction } from '../session-events.js';
import { LineStore, type SessionLine, type SupplementMessage } from './line-store.js';
import type { WireLine } from '../messages/server-messages.js';

/** What the transcript's news is: an event for the session to emit (and its Observables to carry). */
export type TranscriptNews = EmitAction<'line' | 'line.updated' | 'notice'>;

const NOTHING: readonly TranscriptNews[] = Object.freeze([]);

/**
 * What the session heard: lines by id with their supplements, and notices. Lines and notices can
 * arrive twice (a live event and then a reconnect's or the finish's session view); each is told once.
 * Every change returns its news (nothing when it was known already): the session emits it.
 */
export class SessionTranscript {
  readonly #lines = new LineStore();
  readonly #notices: RealtimeNotice[] = [];

  get lines(): SessionLine[] {
    return this.#lines.all();
  }

  get notices(): readonly RealtimeNotice[] {
    return this.#notices;
  }

  addLine(wire: WireLine | RealtimeLine): readonly TranscriptNews[] {
    const { line, update } = this.#lines.add(wire);
    if (line === undefined && update === undefined) return NOTHING;
    const news: TranscriptNews[] = [];
    if (line !== undefined) news.push({ do: 'emit', event: 'line', payload: line });
    if (update !== undefined) news.push({ do: 'emit', event: 'line.updated', payload: update });
    return news;
  }

  supplement(message: SupplementMessage): readonly TranscriptNews[] {
    const update = this.#lines.supplement(message);
    return update === undefined ? NOTHING : [{ do: 'emit', event: 'line.updated', payload: update }];
  }

  addNotice(notice: RealtimeNotice): readonly TranscriptNews[] {
    if (this.#notices.some((n) => sameNotice(n, notice))) return NOTHING;
    this.#notices.push(notice);
    return [{ do: 'emit', event: 'notice', payload: notice }];
  }

  /**
   * A session view (reconnect or finish): new lines are told, known ones updated, notices once. Lazy:
   * each line is taken as the session emits the news of the one before, so a listener reading `lines`
   * sees the lines told so far, as with live events.
   */
  *merge(view: RealtimeSession): Generator<TranscriptNews, void, undefined> {
    for (const line of view.lines) yield* this.addLine(line);
    for (const notice of view.notices) yield* this.addNotice(notice);
  }
}

function sameNotice(a: RealtimeNotice, b: RealtimeNotice): boolean {
  return a.code === b.code && a.message === b.message && (a.lineIds ?? []).join() === (b.lineIds ?? []).join() && (a.supplements ?? []).join() === (b.supplements ?? []).join();
}
