import { onMounted, onUnmounted, shallowRef, type ShallowRef } from 'vue';
import { LiveCaptions, createLiveCaptions, type LiveCaptionsOptions, type LiveCaptionsSnapshot } from '@soundclone/web-audio';

export type { LiveCaptionsOptions, LiveCaptionsSnapshot, LiveCaptionsStatus, CredentialsRequest, LiveCaptionsCredentials } from '@soundclone/web-audio';

/** What useLiveCaptions returns: the snapshot as a shallow ref, the controls, and the store itself. */
export interface LiveCaptionsComposable {
  /** The store's current snapshot (immutable: replaced whole on each change). */
  readonly snapshot: Readonly<ShallowRef<LiveCaptionsSnapshot>>;
  readonly store: LiveCaptions;
  start(): Promise<void>;
  stop(): Promise<void>;
  pause(): Promise<void>;
  resume(): Promise<void>;
  mute(): void;
  unmute(): void;
}

/**
 * Live captions in a Vue component's setup: the live-captions store of @soundclone/web-audio as a
 * shallow ref of its snapshot. The store is subscribed and held from onMounted (`autoStart` starts it)
 * to onUnmounted (the last holder's release stops it), so a server render, which mounts nothing, shows
 * the idle snapshot and acquires nothing.
 *
 * ```vue
 * <script setup>
 * const { snapshot, start, stop } = useLiveCaptions({ credentials: getGrant });
 * </script>
 * <template><p v-for="l in snapshot.lines" :key="l.id">{{ l.text }}</p><i>{{ snapshot.partial }}</i></template>
 * ```
 */
export function useLiveCaptions(options: LiveCaptionsOptions | LiveCaptions): LiveCaptionsComposable {
  const store = options instanceof LiveCaptions ? options : createLiveCaptions(options);
  const snapshot = shallowRef(store.getSnapshot());
  let release = (): void => undefined;
  onMounted(() => {
    const off = store.subscribe(() => void (snapshot.value = store.getSnapshot()));
    const unmount = store.mount();
    snapshot.value = store.getSnapshot();
    release = () => {
      off();
      unmount();
    };
  });
  onUnmounted(() => release());
  return {
    snapshot, store,
    start: () => store.start(), stop: () => store.stop(), pause: () => store.pause(), resume: () => store.resume(),
    mute: () => store.mute(), unmute: () => store.unmute(),
  };
}
