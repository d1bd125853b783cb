import { createLiveCaptions, type LiveCaptions, type LiveCaptionsOptions } from '@soundclone/web-audio';

/**
 * The live-captions store's test page (bundled from the sources like the demo's): `window.live` makes
 * stores wired to this page's backend (live-server.ts: a session per connect, a fresh token per
 * reconnect, a release), and counts, per store, the listener calls made after its last unsubscribe.
 */
export interface LivePage {
  /** A store whose credentials and release go to this page's backend, its worklet served beside the page. */
  make(options?: Partial<LiveCaptionsOptions>): LiveCaptions;
  /** Credentials calls made, by reason. */
  readonly asked: { connect: number; reconnect: number };
  /** Subscribes a counter to `store`; the returned function unsubscribes it, after which every call counts as late. */
  watch(store: LiveCaptions): { readonly calls: number; readonly late: number; unsubscribe(): void };
}

const asked = { connect: 0, reconnect: 0 };

const post = async (path: string): Promise<unknown> => {
  const r = await fetch(path, { method: 'POST' });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
};

/** The options every test store uses: this page's backend, and the worklet served beside the page. */
export const pageOptions: LiveCaptionsOptions = {
  credentials: async ({ reason, sessionId }) => {
    asked[reason]++;
    return (reason === 'connect' ? post('/api/session') : post(`/api/session/${encodeURIComponent(sessionId!)}/token`)) as Promise<{ token: string }>;
  },
  release: async (sessionId) => void (await post(`/api/session/${encodeURIComponent(sessionId)}/release`)),
  capture: { workletUrl: '/capture-worklet.js' },
};

const live: LivePage = {
  asked,
  make: (options = {}) => createLiveCaptions({ ...pageOptions, ...options }),
  watch: (store) => {
    const counter = { calls: 0, late: 0, unsubscribed: false, unsubscribe: () => undefined as void };
    const off = store.subscribe(() => {
      if (counter.unsubscribed) counter.late++;
      else counter.calls++;
    });
    counter.unsubscribe = () => {
      counter.unsubscribed = true;
      off();
    };
    return counter;
  },
};

(window as unknown as { live: LivePage }).live = live;
