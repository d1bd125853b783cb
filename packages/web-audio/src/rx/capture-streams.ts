import { Observable } from 'rxjs';
import { sessionStreams, type SessionStreams } from '@soundclone/core/rx';
import type { CaptureHealth } from '@soundclone/core';
import type { Capture, CaptureDrop, CaptureEvents, CaptureState } from '../capture/capture.js';
import type { AudioLevel } from '../capture/level-meter.js';
import type { WebCaptureEvent } from '../capture/health.js';

/**
 * A capture's events and its session's results as Observables, so a caption UI needs only the
 * capture. Each completes once the capture stopped (at once for a capture already stopped) and removes
 * its listeners on unsubscribe or completion; the session's streams complete with the session.
 */
export interface CaptureStreams {
  /** Level of the input, about 20 times a second, muted or not; the current level at once on subscribe. */
  readonly level$: Observable<AudioLevel>;
  /** The current state on subscribe, then every change; 'stopped' is the last value. */
  readonly state$: Observable<CaptureState>;
  /** Health on every change and about 4 times a second; the current value at once on subscribe. */
  readonly health$: Observable<CaptureHealth>;
  /** Each stretch of audio lost before the page (a stalled page), once, in stream order. */
  readonly drops$: Observable<CaptureDrop>;
  /** What the capture noticed about its device, context and clock, in order (see WebCaptureEvent). */
  readonly events$: Observable<WebCaptureEvent>;
  readonly partials$: SessionStreams['partials$'];
  readonly lines$: SessionStreams['lines$'];
  /** Supplements of lines already emitted: entities, alignment, revision, language. */
  readonly lineUpdates$: SessionStreams['lineUpdates$'];
  /** The session's connection state (connecting, streaming, reconnecting, ...). */
  readonly connection$: SessionStreams['state$'];
}

type Payload<K extends keyof CaptureEvents> = Parameters<CaptureEvents[K]>[0];

/**
 * One capture event as an Observable, hot: the listener is added on subscribe and removed on teardown.
 * `current` (for the values the capture holds) is emitted first. The capture tells `state` 'stopped'
 * after every other event of its stop, so the last health reaches the subscriber before completion.
 */
function captureStream<K extends keyof CaptureEvents, T>(capture: Capture, event: K, map: (payload: Payload<K>) => T, current?: () => T): Observable<T> {
  return new Observable<T>((subscriber) => {
    if (current !== undefined) subscriber.next(current());
    if (capture.state === 'stopped') {
      subscriber.complete();
      return undefined;
    }
    const next = ((payload: Payload<K>) => subscriber.next(map(payload))) as CaptureEvents[K];
    const ended = ({ to }: Payload<'state'>): void => {
      if (to === 'stopped') subscriber.complete();
    };
    capture.on(event, next);
    capture.on('state', ended);
    return () => {
      capture.off(event, next);
      capture.off('state', ended);
    };
  });
}

const same = <T>(value: T): T => value;

/**
 * The Observables of a capture (and of its session, `sessionStreams` of `@soundclone/core/rx`). Cheap:
 * nothing listens until something subscribes.
 *
 * ```ts
 * const { lines$, level$, health$ } = captureStreams(capture);
 * lines$.subscribe((line) => addLine(line));
 * ```
 */
export function captureStreams(capture: Capture): CaptureStreams {
  const session = sessionStreams(capture.session);
  return {
    level$: captureStream(capture, 'level', same, () => capture.level),
    state$: captureStream(capture, 'state', (change) => change.to, () => capture.state),
    health$: captureStream(capture, 'health', same, () => capture.health),
    drops$: captureStream(capture, 'drop', same),
    events$: captureStream(capture, 'event', same),
    partials$: session.partials$,
    lines$: session.lines$,
    lineUpdates$: session.lineUpdates$,
    connection$: session.state$,
  };
}
