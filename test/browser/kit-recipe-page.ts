import { createLiveCaptions, type LiveCaptions } from '@soundclone/web-audio';

/**
 * The page of the browser recipe, as an app writes it: a live-captions store whose credentials and
 * release go to the page's backend (the kit's page server), its worklet served beside the page.
 */
const post = async (path: string): Promise<unknown> => {
  const r = await fetch(path, { method: 'POST' });
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
};

const store: LiveCaptions = createLiveCaptions({
  credentials: async ({ reason, sessionId }) =>
    (reason === 'connect' ? post('/soundclone/session') : post(`/soundclone/session/${encodeURIComponent(sessionId ?? '')}/token`)) as Promise<{ token: string }>,
  release: async (sessionId) => void (await post(`/soundclone/session/${encodeURIComponent(sessionId)}/release`)),
  capture: { workletUrl: '/capture-worklet.js' },
});

(window as unknown as { app: { store: LiveCaptions; isolated: boolean; sharedMemory: boolean } }).app = {
  store,
  isolated: globalThis.crossOriginIsolated,
  sharedMemory: typeof SharedArrayBuffer === 'function',
};
