import { useEffect, useMemo, useRef, useState, useSyncExternalStore } from 'react';
import { LiveCaptions, createLiveCaptions, type LiveCaptionsOptions, type LiveCaptionsSnapshot } from '@soundclone/web-audio';

export type { LiveCaptionsOptions, LiveCaptionsSnapshot, LiveCaptionsStatus, CredentialsRequest, LiveCaptionsCredentials } from '@soundclone/web-audio';

/** What useLiveCaptions returns: the current snapshot's fields, the controls, and the store itself. */
export interface LiveCaptionsView extends LiveCaptionsSnapshot {
  readonly store: LiveCaptions;
  start(): Promise<void>;
  stop(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  mute(): void;
  unmute(): void;
}

/**
 * Live captions in a React component: the live-captions store of @soundclone/web-audio read through
 * useSyncExternalStore. Given options, the component owns a store made on its first render (making one
 * acquires nothing, so a server render and StrictMode's second render are free); given a store, it
 * holds that one. The component mounting holds the store (`autoStart` starts it) and its unmount
 * releases it; StrictMode's unmount-and-mount-again keeps the one run, microphone and session.
 * A server render shows the idle snapshot. `credentials` and `release` are read from the latest render.
 *
 * ```tsx
 * const captions = useLiveCaptions({ credentials: getGrant });
 * return <><button onClick={captions.start}>Start</button>{captions.lines.map((l) => <p key={l.id}>{l.text}</p>)}<i>{captions.partial}</i></>;
 * ```
 */
export function useLiveCaptions(options: LiveCaptionsOptions | LiveCaptions): LiveCaptionsView {
  const latest = useRef(options);
  const [store] = useState(() => (options instanceof LiveCaptions ? options : createLiveCaptions(withLatest(options, latest as { current: LiveCaptionsOptions }))));
  const snapshot = useSyncExternalStore(store.subscribe, store.getSnapshot, store.getServerSnapshot);
  useEffect(() => {
    latest.current = options;
  });
  useEffect(() => store.mount(), [store]);
  return useMemo(() => ({
    ...snapshot, store,
    start: () => store.start(), stop: () => store.stop(), pause: () => store.pause(), resume: () => store.resume(),
    mute: () => store.mute(), unmute: () => store.unmute(),
  }), [snapshot, store]);
}

/** The options with credentials and release that call the latest render's functions. */
function withLatest(options: LiveCaptionsOptions, latest: { current: LiveCaptionsOptions }): LiveCaptionsOptions {
  const release = options.release === undefined ? {} : { release: (id: string) => (latest.current.release ?? options.release!)(id) };
  return { ...options, credentials: (request) => latest.current.credentials(request), ...release };
}
