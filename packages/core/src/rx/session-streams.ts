import { Observable } from 'rxjs';
import type { RealtimeNotice, RealtimeUsage } from '../types/realtime.js';
import type { AudioStats } from '../realtime/audio/outbox.js';
import type { LineUpdate, SessionLine } from '../realtime/transcript/line-store.js';
import type { RealtimeSocketSession } from '../realtime/realtime-session.js';
import type { PartialMessage } from '../realtime/messages/server-messages.js';
import type { RealtimeSessionEvents } from '../realtime/session-events.js';
import { TERMINAL_STATES, type SessionState, type StateChange } from '../realtime/session-state.js';

/** What the streams need of a session: its events and its current state. */
export type StreamSource = Pick<RealtimeSocketSession, 'on' | 'off' | 'state'>;

/**
 * A session's results as Observables. Each carries exactly its event (same rule, see the core README
 * "Hearing results: one rule"), completes when the session reaches a terminal state (at once for a
 * session already ended), and removes its listeners on unsubscribe or completion.
 */
export interface SessionStreams {
  /** `partial`: current epoch only. */
  readonly partials$: Observable<PartialMessage>;
  /** `line`: once per line id. */
  readonly lines$: Observable<SessionLine>;
  /** `line.updated`: supplements (entities among them) and resyncs of lines already emitted. */
  readonly lineUpdates$: Observable<LineUpdate>;
  /** `notice`: each notice once. */
  readonly notices$: Observable<RealtimeNotice>;
  readonly usage$: Observable<RealtimeUsage>;
  /** The current state on subscribe, then every change; the terminal state is the last value. */
  readonly state$: Observable<SessionState>;
  readonly backpressure$: Observable<AudioStats>;
}

type Payload<K extends keyof RealtimeSessionEvents> = Parameters<RealtimeSessionEvents[K]>[0];

function isTerminal(state: SessionState): boolean {
  return TERMINAL_STATES.includes(state);
}

/**
 * One event as an Observable. Lazy and hot: the listener is added on subscribe (nothing is replayed)
 * and removed on teardown, which rxjs runs on unsubscribe, on completion and on error alike.
 */
function eventStream<K extends 'partial' | 'line' | 'line.updated' | 'notice' | 'usage' | 'backpressure'>(session: StreamSource, event: K): Observable<Payload<K>> {
  return new Observable<Payload<K>>((subscriber) => {
    if (isTerminal(session.state)) {
      subscriber.complete();
      return undefined;
    }
    const next = ((value: Payload<K>) => subscriber.next(value)) as RealtimeSessionEvents[K];
    // The session emits `state` after every other event of a transition, so the final lines and
    // notices a finish merges reach the subscriber before it completes.
    const ended = (change: StateChange): void => {
      if (isTerminal(change.to)) subscriber.complete();
    };
    session.on(event, next as never);
    session.on('state', ended);
    return () => {
      session.off(event, next as never);
      session.off('state', ended);
    };
  });
}

function stateStream(session: StreamSource): Observable<SessionState> {
  return new Observable<SessionState>((subscriber) => {
    subscriber.next(session.state);
    if (isTerminal(session.state)) {
      subscriber.complete();
      return undefined;
    }
    const changed = (change: StateChange): void => {
      subscriber.next(change.to);
      if (isTerminal(change.to)) subscriber.complete();
    };
    session.on('state', changed);
    return () => session.off('state', changed);
  });
}

/**
 * The Observables of a session, built from its events. Cheap: nothing listens until something
 * subscribes, and each subscription holds one or two listeners until it ends.
 *
 * ```ts
 * const { lines$, partials$ } = sessionStreams(session);
 * lines$.subscribe((line) => render(line));
 * ```
 */
export function sessionStreams(session: StreamSource): SessionStreams {
  return {
    partials$: eventStream(session, 'partial'),
    lines$: eventStream(session, 'line'),
    lineUpdates$: eventStream(session, 'line.updated'),
    notices$: eventStream(session, 'notice'),
    usage$: eventStream(session, 'usage'),
    state$: stateStream(session),
    backpressure$: eventStream(session, 'backpressure'),
  };
}
