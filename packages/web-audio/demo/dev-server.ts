import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { SoundClone } from '@soundclone/core';
import { startServer, type RunningServer, type ServerOptions } from '@soundclone/server';
import { bundleWorklet } from '../scripts/build-worklet.mjs';

/**
 * The live-captions demo's development server. It plays the app's backend: it holds the API
 * key, creates realtime sessions with it, and hands the page only { sessionId, token, socketUrl }.
 * The reference server runs in-process beside it (another port: the page's WebSocket to it is not
 * subject to COEP).
 *
 * Every response carries a strict Content-Security-Policy (scripts only from this origin, no inline
 * script or eval; 'wasm-unsafe-eval' so core's WebAssembly resampler kernel may compile). The page is
 * cross-origin isolated (COOP same-origin + COEP require-corp) unless the document is asked for with
 * `?coi=0`; `?worklet=blob` also allows blob: scripts, for the Blob URL way of loading the worklet.
 *
 *   GET  /                          the page          GET /app.js, /style.css   its bundle and style
 *   GET  /capture-worklet.js        the worklet       GET /capture-worklet-source.js   its text, as a module
 *   POST /api/session               { sessionId, token, socketUrl, expiresAt }
 */
export interface DemoOptions {
  readonly port?: number;
  /** Use this reference server instead of starting one (its first access key is used). */
  readonly server?: RunningServer;
  readonly accessKey?: string;
  /** Options for the in-process reference server (tests: retainRealtimeAudioSamples). */
  readonly serverOptions?: Partial<ServerOptions>;
}

export interface DemoServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  readonly server: RunningServer;
  readonly accessKey: string;
  /** Session ids the page created, oldest first. */
  readonly sessions: readonly string[];
  close(): Promise<void>;
}

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');

/** Bundles the page's script: web-audio and core from their TypeScript sources, rxjs and eventemitter3 included. */
export async function bundlePage(): Promise<string> {
  const result = await build({
    entryPoints: [join(here, 'page', 'main.ts')],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    alias: {
      '@soundclone/core': join(pkg, '..', 'core', 'src', 'index.ts'),
      '@soundclone/web-audio': join(pkg, 'src', 'index.ts'),
    },
    // Loaded at run time from this server, as an app would load the package's artifact.
    external: ['/capture-worklet-source.js'],
  });
  return result.outputFiles[0]!.text;
}

export async function startDemo(options: DemoOptions = {}): Promise<DemoServer> {
  const accessKey = options.accessKey ?? 'demo-key';
  const server = options.server ?? (await startServer({ port: 0, host: '127.0.0.1', accessKeys: [accessKey], ...options.serverOptions }));
  const ownsServer = options.server === undefined;
  const client = new SoundClone({ accessKey, baseUrl: server.url });
  const [app, worklet, html, css] = await Promise.all([
    bundlePage(), bundleWorklet(), readFile(join(here, 'page', 'index.html'), 'utf8'), readFile(join(here, 'page', 'style.css'), 'utf8'),
  ]);
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: html },
    '/app.js': { type: 'text/javascript; charset=utf-8', body: app },
    '/style.css': { type: 'text/css; charset=utf-8', body: css },
    '/capture-worklet.js': { type: 'text/javascript; charset=utf-8', body: worklet },
    '/capture-worklet-source.js': { type: 'text/javascript; charset=utf-8', body: `export default ${JSON.stringify(worklet)};\n` },
  };
  const sessions: string[] = [];
  const socketOrigin = server.url.replace(/^http/, 'ws');

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const headers: Record<string, string> = {
      'Content-Security-Policy': [
        "default-src 'none'",
        `script-src 'self' 'wasm-unsafe-eval'${url.searchParams.get('worklet') === 'blob' ? ' blob:' : ''}`,
        "style-src 'self'", "img-src 'self' data:", `connect-src 'self' ${socketOrigin}`, "base-uri 'none'", "form-action 'none'",
      ].join('; '),
      'Cross-Origin-Resource-Policy': 'same-origin',
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-store',
    };
    if (url.searchParams.get('coi') !== '0') {
      headers['Cross-Origin-Opener-Policy'] = 'same-origin';
      headers['Cross-Origin-Embedder-Policy'] = 'require-corp';
    }
    if (req.method === 'POST' && url.pathname === '/api/session') {
      // The backend's job: create the session with the key; the page gets the token only.
      const created = await client.stt.realtime.create({ title: 'Live captions demo', options: { entityCategories: ['name'] } });
      sessions.push(created.sessionId);
      const body = JSON.stringify({ sessionId: created.sessionId, token: created.socket.token, socketUrl: created.socket.url, expiresAt: created.socket.expiresAt });
      res.writeHead(200, { ...headers, 'Content-Type': 'application/json' }).end(body);
      return;
    }
    const file = req.method === 'GET' ? files[url.pathname] : undefined;
    if (file === undefined) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': file.type }).end(file.body);
  };

  const http: Server = createServer((req, res) => {
    handle(req, res).catch((caught: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(caught instanceof Error ? caught.message : 'error');
    });
  });
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const address = http.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    accessKey,
    sessions,
    async close() {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      if (ownsServer) await server.close();
    },
  };
}
