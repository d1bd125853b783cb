import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { extname } from 'node:path';
import type { SoundClone } from '@soundclone/core';

/** A file a page server serves: text or bytes, with its type (default: by the path's extension). */
export type PageFile = string | Uint8Array | { readonly type: string; readonly body: string | Uint8Array };

export interface PageOptions {
  /**
   * Path → file, e.g. `{ '/app.js': bundle, '/capture-worklet.js': worklet }`. Without a '/', the page
   * is an empty document that loads '/app.js' as a module.
   */
  readonly files?: Readonly<Record<string, PageFile>>;
}

/** A page served for a browser test, and the backend calls its page made. */
export interface TestPage {
  readonly url: string;
  /** Realtime sessions the page's backend created for it, oldest first. */
  readonly sessions: readonly string[];
  close(): Promise<void>;
}

/** Headers that make a page cross-origin isolated (crossOriginIsolated, SharedArrayBuffer). */
export const ISOLATION_HEADERS: Readonly<Record<string, string>> = {
  'Cross-Origin-Opener-Policy': 'same-origin',
  'Cross-Origin-Embedder-Policy': 'require-corp',
  'Cross-Origin-Resource-Policy': 'same-origin',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.json': 'application/json', '.wav': 'audio/wav', '.css': 'text/css; charset=utf-8',
};

const DEFAULT_PAGE = '<!doctype html><meta charset="utf-8"><title>test page</title><script type="module" src="/app.js"></script>';

/**
 * Serves a test page on 127.0.0.1, cross-origin isolated (every answer carries ISOLATION_HEADERS), with
 * the backend a browser app needs, which holds the account's key so the page never sees it:
 *
 *   POST /soundclone/session                a new realtime session: { sessionId, token, socketUrl }
 *   POST /soundclone/session/{id}/token     a fresh socket token for one of its sessions: { token }
 *   POST /soundclone/session/{id}/release   finishes one of its sessions now (the store's `release`)
 *
 * The page's socket goes to the service itself (a WebSocket is not subject to the isolation headers).
 */
export async function startPageServer(client: SoundClone, options: PageOptions = {}): Promise<TestPage> {
  const files = new Map<string, { type: string; body: string | Uint8Array }>();
  for (const [path, file] of Object.entries(options.files ?? {})) {
    if (!path.startsWith('/')) throw new TypeError(`page files: a path starts with / (got ${JSON.stringify(path)})`);
    files.set(path, typeof file === 'object' && !(file instanceof Uint8Array) ? file : { type: TYPES[extname(path)] ?? 'application/octet-stream', body: file });
  }
  if (!files.has('/')) files.set('/', { type: TYPES['.html'] as string, body: DEFAULT_PAGE });
  const sessions: string[] = [];
  const connections = new Set<Socket>();
  const server: Server = createServer((req, res) => {
    const headers = { ...ISOLATION_HEADERS, 'Cache-Control': 'no-store' };
    const json = (status: number, body: unknown): void => void res.writeHead(status, { ...headers, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    const mine = /^\/soundclone\/session\/([^/]+)\/(token|release)$/.exec(path);
    req.resume();
    void (async () => {
      if (req.method === 'POST' && path === '/soundclone/session') {
        const made = await client.stt.realtime.create({ title: 'test page' });
        sessions.push(made.sessionId);
        return json(200, { sessionId: made.sessionId, token: made.socket.token, socketUrl: made.socket.url });
      }
      if (req.method === 'POST' && mine !== null) {
        const sessionId = decodeURIComponent(mine[1] as string);
        if (!sessions.includes(sessionId)) return json(404, { message: 'not a session of this page' });
        if (mine[2] === 'token') return json(200, { token: (await client.stt.realtime.socketToken(sessionId)).token });
        await client.stt.realtime.finish(sessionId, 0).catch(() => undefined);
        return json(200, { sessionId });
      }
      const file = req.method === 'GET' ? files.get(path) : undefined;
      if (file === undefined) res.writeHead(404, headers).end();
      else res.writeHead(200, { ...headers, 'Content-Type': file.type }).end(file.body);
    })().catch((caught: unknown) => json(500, { message: caught instanceof Error ? caught.message : String(caught) }));
  });
  server.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  let closed: Promise<void> | undefined;
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    sessions,
    close() {
      closed ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      });
      return closed;
    },
  };
}
