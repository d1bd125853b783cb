// The framework examples' backend (packages/react|vue|svelte/example/server.mjs): serves an example's
// built page (`vite build` → its dist/) and mints what the page asks for with the Node SoundClone client,
// the API key never leaving this process:
//
//   POST /api/session               a new realtime session: { sessionId, token, socketUrl }
//   POST /api/session/{id}/token    a fresh socket token for one of the sessions it made: { token }
//   POST /api/session/{id}/release  finishes one of its sessions now (a Start abandoned before its socket was up)
//
// An app's own backend needs only the three handlers: the rest serves the example's files.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';
import { SoundClone } from '@soundclone/core';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8' };

/** Starts the backend for the page built in `dist` on 127.0.0.1:`port` (0: any free port). Resolves with its URL and close(). */
export async function startExampleServer({ baseUrl, accessKey, dist, port = 0 }) {
  const client = new SoundClone({ accessKey, baseUrl });
  const mine = new Set();
  const http = createServer(async (req, res) => {
    const json = (status, body) => res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    try {
      if (req.method === 'POST' && path === '/api/session') {
        const made = await client.stt.realtime.create({ title: 'Live captions example' });
        mine.add(made.sessionId);
        return json(200, { sessionId: made.sessionId, token: made.socket.token, socketUrl: made.socket.url });
      }
      const call = req.method === 'POST' ? /^\/api\/session\/([^/]+)\/(token|release)$/.exec(path) : null;
      if (call !== null) {
        const sessionId = decodeURIComponent(call[1]);
        if (!mine.has(sessionId)) return json(404, { message: 'not a session of this page' });
        if (call[2] === 'token') return json(200, { token: (await client.stt.realtime.socketToken(sessionId)).token });
        await client.stt.realtime.finish(sessionId, 0);
        return json(200, { sessionId });
      }
      const file = normalize(join(dist, path === '/' ? 'index.html' : path));
      if (req.method !== 'GET' || !file.startsWith(dist)) return json(404, { message: 'not found' });
      const body = await readFile(file).catch(() => undefined);
      if (body === undefined) return json(404, { message: 'not found' });
      res.writeHead(200, { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch (caught) {
      json(502, { message: caught instanceof Error ? caught.message : String(caught) });
    }
  });
  await new Promise((resolve) => http.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${http.address().port}/`,
    close: () => new Promise((resolve) => { http.closeAllConnections(); http.close(() => resolve()); }),
  };
}

/** `node server.mjs` in an example: SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY, PORT (default 5173). */
export async function runExampleServer(dist) {
  const { SOUNDCLONE_BASE_URL: baseUrl, SOUNDCLONE_ACCESS_KEY: accessKey, PORT = '5173' } = process.env;
  if (!baseUrl || !accessKey) throw new Error('set SOUNDCLONE_BASE_URL and SOUNDCLONE_ACCESS_KEY');
  const server = await startExampleServer({ baseUrl, accessKey, dist, port: Number(PORT) });
  process.stdout.write(`live captions example: ${server.url}\n`);
}
