import { LiveCaptions, createLiveCaptions, type LiveCaptionsOptions, type LiveCaptionsSnapshot } from '@soundclone/web-audio';

export type { LiveCaptionsOptions, LiveCaptionsSnapshot, LiveCaptionsStatus, CredentialsRequest, LiveCaptionsCredentials } from '@soundclone/web-audio';

/** A Svelte readable store of the snapshot (`$captions`, or `fromStore(captions).current` with runes), with the controls. */
export interface LiveCaptionsReadable {
  subscribe(run: (snapshot: LiveCaptionsSnapshot) => void): () => void;
  readonly store: LiveCaptions;
  start(): Promise<void>;
  stop(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  mute(): void;
  unmute(): void;
}

/**
 * Live captions for Svelte: the live-captions store of @soundclone/web-audio as a readable store (the
 * store contract, so it needs nothing from svelte itself). Each subscriber in a browser holds the store
 * (`autoStart` starts it with the first) and its unsubscribe releases it; the last release stops it. A
 * server render (no `window`) reads the idle snapshot and acquires nothing.
 *
 * ```svelte
 * <script>
 *   const captions = liveCaptions({ credentials: getGrant });
 * </script>
 * <button onclick={captions.start}>Start</button>
 * {#each $captions.lines as line (line.id)}<p>{line.text}</p>{/each}<i>{$captions.partial}</i>
 * ```
 */
export function liveCaptions(options: LiveCaptionsOptions | LiveCaptions): LiveCaptionsReadable {
  const store = options instanceof LiveCaptions ? options : createLiveCaptions(options);
  return {
    store,
    subscribe(run) {
      const browser = typeof window === 'object';
      run(browser ? store.getSnapshot() : store.getServerSnapshot());
      if (!browser) return () => undefined;
      const off = store.subscribe(() => run(store.getSnapshot()));
      const release = store.mount();
      return () => {
        off();
        release();
      };
    },
    start: () => store.start(), stop: () => store.stop(), pause: () => store.pause(), resume: () => store.resume(),
    mute: () => store.mute(), unmute: () => store.unmute(),
  };
}
