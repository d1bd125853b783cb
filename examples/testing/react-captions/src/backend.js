import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import worklet from '@soundclone/web-audio/worklet-source';

const PAGE = '<!doctype html><meta charset="utf-8"><title>Live captions</title><div id="root"></div><script type="module" src="/main.js"></script>';

/**
 * The app's backend: serves the page (src/main.jsx bundled with esbuild), the capture worklet, and
 * mints realtime sessions with `client` (a SoundClone with the app's key), on 127.0.0.1.
 *
 *   POST /api/session               a new realtime session: { sessionId, token, socketUrl }
 *   POST /api/session/{id}/token    a fresh socket token for one of its sessions: { token }
 *   POST /api/session/{id}/release  finishes one of its sessions now (a Start abandoned before its socket was up)
 *
 * @param {{ client: import('@soundclone/core').SoundClone, port?: number }} options
 * @returns {Promise<{ url: string, sessions: string[], close: () => Promise<void> }>}
 */
export async function startBackend({ client, port = 0 }) {
  const bundle = await build({
    entryPoints: [fileURLToPath(new URL('./main.jsx', import.meta.url))],
    bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent',
    jsx: 'automatic', define: { 'process.env.NODE_ENV': '"production"' },
  });
  const script = bundle.outputFiles[0].text;
  /** @type {string[]} */
  const sessions = [];
  const http = createServer(async (req, res) => {
    const send = (status, type, body) => res.writeHead(status, { 'Content-Type': type }).end(body);
    const json = (status, body) => send(status, 'application/json', JSON.stringify(body));
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    try {
      if (req.method === 'GET' && path === '/') return send(200, 'text/html; charset=utf-8', PAGE);
      if (req.method === 'GET' && path === '/main.js') return send(200, 'text/javascript; charset=utf-8', script);
      if (req.method === 'GET' && path === '/capture-worklet.js') return send(200, 'text/javascript; charset=utf-8', worklet);
      if (req.method === 'POST' && path === '/api/session') {
        const made = await client.stt.realtime.create({ title: 'Live captions' });
        sessions.push(made.sessionId);
        return json(200, { sessionId: made.sessionId, token: made.socket.token, socketUrl: made.socket.url });
      }
      const call = req.method === 'POST' ? /^\/api\/session\/([^/]+)\/(token|release)$/.exec(path) : null;
      if (call !== null && sessions.includes(decodeURIComponent(call[1]))) {
        const sessionId = decodeURIComponent(call[1]);
        if (call[2] === 'token') return json(200, { token: (await client.stt.realtime.socketToken(sessionId)).token });
        await client.stt.realtime.finish(sessionId, 0);
        return json(200, { sessionId });
      }
      return json(404, { message: 'not found' });
    } catch (caught) {
      return json(502, { message: caught instanceof Error ? caught.message : String(caught) });
    }
  });
  await new Promise((resolve) => http.listen(port, '127.0.0.1', () => resolve(undefined)));
  const address = /** @type {import('node:net').AddressInfo} */ (http.address());
  return {
    url: `http://127.0.0.1:${address.port}/`,
    sessions,
    close: () => new Promise((resolve) => {
      http.closeAllConnections();
      http.close(() => resolve());
    }),
  };
}
