import { Observable } from 'rxjs';
import { resolveCaptionOptions } from '@soundclone/core/internal';
import { attachCaptions, type AttachCaptionsOptions, type CaptionSource, type CueChange, type SessionState, type StateChange } from '@soundclone/core';

/** What the cues need of a session: its result events and its current state (a RealtimeSocketSession, or a Capture's `session`). */
export type CueSource = CaptionSource & { readonly state: SessionState };

/** The states after which a session emits nothing more (the caption binding ends its engine on them). */
const ENDED: ReadonlySet<SessionState> = new Set<SessionState>(['finished', 'failed', 'closed']);

/**
 * The live caption cues of a session as an Observable: each decision of core's caption engine
 * (`attachCaptions`) as a `CueChange` — `live` and `final` cues to show or replace by id, `revised` ones
 * that keep their id, `removed` live cues to take off the screen.
 *
 * Cold: each subscription attaches its own engine (so its own ids, from `cue_0001`) when it
 * subscribes, and detaches it (every session listener and the engine's timer removed) on
 * unsubscribe or completion. It completes when the session reaches a terminal state, after the
 * engine has ended and emitted every cue's settled form; a session already ended completes at once.
 * Bad options throw `CaptionError` (`CAPTIONS_INVALID_OPTION`) here, not on subscribe.
 *
 * ```ts
 * captionCues(capture.session).subscribe(({ kind, cue }) => {
 *   if (kind === 'removed') track.removeCue(byId.get(cue.id));
 *   else upsert(new VTTCue(cue.startMs / 1000, cue.endMs / 1000, cue.text), cue.id);
 * });
 * ```
 */
export function captionCues(session: CueSource, options: AttachCaptionsOptions = {}): Observable<CueChange> {
  resolveCaptionOptions(engineOptions(options));
  return new Observable<CueChange>((subscriber) => {
    if (ENDED.has(session.state)) {
      subscriber.complete();
      return undefined;
    }
    const captions = attachCaptions(session, options);
    const next = (change: CueChange): void => subscriber.next(change);
    captions.on('cue', next);
    // Added after the binding's own `state` listener, so it runs after the engine ended and emitted
    // its last changes: the subscriber sees every settled cue before completion.
    const ended = (change: StateChange): void => {
      if (ENDED.has(change.to)) subscriber.complete();
    };
    session.on('state', ended);
    return () => {
      session.off('state', ended);
      captions.off('cue', next);
      captions.detach();
    };
  });
}

/** The engine's part of the options (the binding's clock and timers are not caption policies). */
function engineOptions(options: AttachCaptionsOptions): Omit<AttachCaptionsOptions, 'now' | 'setTimeout' | 'clearTimeout'> {
  const { now: _now, setTimeout: _set, clearTimeout: _clear, ...rest } = options;
  return rest;
}
