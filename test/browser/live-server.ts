import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SoundClone } from '@soundclone/core';
import { bundlePage, type DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { bundleWorklet } from '../../packages/web-audio/scripts/build-worklet.mjs';

/**
 * A page's backend as an app writes it, for the live-captions tests: it holds the key (the demo rig's
 * reference server and key) and mints what the page asks for with the Node SoundClone client:
 *
 *   POST /api/session               a new session: { sessionId, token, socketUrl }
 *   POST /api/session/{id}/token    a fresh socket token for one of its sessions: { token }
 *   POST /api/session/{id}/release  finishes one of its sessions now
 *
 * It serves the page's script at /app.js and the worklet beside it, cross-origin
 * isolated, and remembers every session it created, so a test can ask the service which are still open.
 */
export interface LiveServer {
  readonly url: string;
  readonly created: readonly string[];
  readonly released: readonly string[];
  /** Releases the service refused (`id: error`): a session it kept open. */
  readonly releaseFailures: readonly string[];
  /** The sessions it created that the service still has open (ACTIVE, PAUSED or FINISHING), as `id status`. */
  openSessions(): Promise<string[]>;
  /**
   * Waits (up to `ms`) until none is open and returns what is still open then: a finish under way
   * (FINISHING: the service waits a few seconds for supplements) ends by itself; an ACTIVE or PAUSED
   * session would wait out its recovery window, which is the leak the tests look for.
   */
  settledOpenSessions(ms?: number): Promise<string[]>;
  close(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
const OPEN = new Set(['ACTIVE', 'PAUSED', 'FINISHING']);

/** `script`: the page's bundle (default: live-page.ts, bundled like the demo's page). */
export async function startLiveServer(demo: DemoServer, script?: string): Promise<LiveServer> {
  const [app, worklet] = await Promise.all([script ?? bundlePage(join(here, 'live-page.ts')), bundleWorklet()]);
  const client = new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl });
  const created: string[] = [];
  const released: string[] = [];
  const releaseFailures: string[] = [];
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><meta charset="utf-8"><title>live</title><div id="root"></div><script type="module" src="/app.js"></script>' },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: app },
    '/capture-worklet.js': { type: 'text/javascript; charset=utf-8', body: worklet },
  };
  const http: Server = createServer((req, res) => {
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cache-Control': 'no-store' };
    const json = (status: number, body: unknown): void => void res.writeHead(status, { ...headers, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const mine = /^\/api\/session\/([^/]+)\/(token|release)$/.exec(path);
    void (async () => {
      if (req.method === 'POST' && path === '/api/session') {
        const made = await client.stt.realtime.create({ title: 'live captions test' }, { maxRetries: 0 });
        created.push(made.sessionId);
        return json(200, { sessionId: made.sessionId, token: made.socket.token, socketUrl: made.socket.url });
      }
      if (req.method === 'POST' && mine !== null) {
        const sessionId = decodeURIComponent(mine[1]!);
        if (!created.includes(sessionId)) return json(404, { message: 'not a session of this page' });
        if (mine[2] === 'token') return json(200, { token: (await client.stt.realtime.socketToken(sessionId)).token });
        await client.stt.realtime.finish(sessionId, 0, { maxRetries: 0 }).catch((caught: unknown) => {
          releaseFailures.push(`${sessionId}: ${(caught as { code?: string }).code ?? ''} ${caught instanceof Error ? caught.message : String(caught)}`);
        });
        released.push(sessionId);
        return json(200, { sessionId });
      }
      const file = req.method === 'GET' ? files[path] : undefined;
      if (file === undefined) res.writeHead(404, headers).end();
      else res.writeHead(200, { ...headers, 'Content-Type': file.type }).end(file.body);
    })().catch((caught: unknown) => json(500, { message: caught instanceof Error ? caught.message : String(caught) }));
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  const openSessions = async (): Promise<string[]> => {
    const views = await Promise.all(created.map((id) => client.stt.realtime.get(id)));
    return views.filter((v) => OPEN.has(v.status)).map((v) => `${v.sessionId} ${v.status}`);
  };
  return {
    url: `http://127.0.0.1:${String(port)}/`,
    created,
    released,
    releaseFailures,
    openSessions,
    async settledOpenSessions(ms = 20_000) {
      const end = Date.now() + ms;
      for (;;) {
        const open = await openSessions();
        if (open.length === 0 || Date.now() > end || open.some((o) => !o.endsWith(' FINISHING'))) return open;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    },
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
