import { BehaviorSubject, Subject, type Observable } from 'rxjs';
import type { RealtimeNotice, RealtimeUsage } from '../types/realtime.js';
import type { AudioStats } from './audio-outbox.js';
import type { LineUpdate, SessionLine } from './line-store.js';
import type { EntitiesMessage, PartialMessage } from './server-messages.js';
import type { SessionState } from './session-state.js';

/**
 * The session's rxjs side: one Subject per stream, exposed read-only. Every stream completes
 * when the session reaches a terminal state, so `for await`/subscriptions end and nothing is retained.
 */
export class SessionStreams {
  readonly partials = new Subject<PartialMessage>();
  readonly lines = new Subject<SessionLine>();
  readonly lineUpdates = new Subject<LineUpdate>();
  readonly entities = new Subject<EntitiesMessage>();
  readonly notices = new Subject<RealtimeNotice>();
  readonly usage = new Subject<RealtimeUsage>();
  /** Replays the current state to a new subscriber. */
  readonly state = new BehaviorSubject<SessionState>('idle');
  readonly backpressure = new Subject<AudioStats>();

  complete(): void {
    for (const subject of [this.partials, this.lines, this.lineUpdates, this.entities, this.notices, this.usage, this.state, this.backpressure]) subject.complete();
  }
}

/** The Observables a session exposes (partials$, lines$, ...). */
export interface SessionObservables {
  readonly partials$: Observable<PartialMessage>;
  readonly lines$: Observable<SessionLine>;
  readonly lineUpdates$: Observable<LineUpdate>;
  readonly entities$: Observable<EntitiesMessage>;
  readonly notices$: Observable<RealtimeNotice>;
  readonly usage$: Observable<RealtimeUsage>;
  readonly state$: Observable<SessionState>;
  readonly backpressure$: Observable<AudioStats>;
}
