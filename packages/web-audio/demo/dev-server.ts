import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { ApiError, SoundClone, isSoundCloneError } from '@soundclone/core';
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
 *   POST /api/session               { sessionId, token, socketUrl, expiresAt }; a refusal passes the
 *                                   service's status and failure envelope through (503 SERVICE_UNAVAILABLE,
 *                                   details.reason RECOGNIZER_BUSY when every recognizer slot is taken)
 *   POST /api/session/{id}/release  finishes a session this server handed out, at once (a Start that
 *                                   failed after it reserved one, a tab closed mid-capture): its
 *                                   recognizer slot frees now instead of after the recovery window
 */
export interface DemoOptions {
  /** Port for the page (default 0: any free one). Taken: startDemo rejects with DemoServerError DEMO_PORT_IN_USE. */
  readonly port?: number;
  /** Interface to listen on (default 127.0.0.1: a secure context for the microphone). */
  readonly host?: string;
  /** Use this reference server instead of starting one (its first access key is used). */
  readonly server?: RunningServer;
  /**
   * Use a service already running elsewhere (a cluster's balancer, a remote service) with this key,
   * instead of starting a reference server: the page's sessions are made there and its socket goes there.
   */
  readonly service?: { readonly baseUrl: string; readonly accessKey: string };
  readonly accessKey?: string;
  /** Options for the in-process reference server (tests: retainRealtimeAudioSamples). */
  readonly serverOptions?: Partial<ServerOptions>;
}

export interface DemoServer {
  /** http://127.0.0.1:PORT */
  readonly url: string;
  /** The reference server the demo started or was given; undefined with `service`. */
  readonly server: RunningServer | undefined;
  /** Where the page's sessions are made: the reference server's URL, or the service's. */
  readonly baseUrl: string;
  readonly accessKey: string;
  /** Session ids the page created, oldest first. */
  readonly sessions: readonly string[];
  /** Session ids the page released (finished through /api/session/{id}/release), in that order. */
  readonly released: readonly string[];
  close(): Promise<void>;
}

/** The demo's own port when PORT is not set: the reference server's default is 8787. */
export const DEFAULT_DEMO_PORT = 8788;

export type DemoServerErrorCode = 'DEMO_PORT_IN_USE' | 'DEMO_PORT_FORBIDDEN' | 'DEMO_LISTEN_FAILED';

/** The demo's server could not listen. Match on `code`; `port` is the one asked for. */
export class DemoServerError extends Error {
  override readonly name = 'DemoServerError';

  constructor(readonly code: DemoServerErrorCode, readonly port: number, message: string, options?: { cause?: unknown }) {
    super(message, options);
  }

  static fromListen(caught: unknown, port: number, host: string): DemoServerError {
    const code = (caught as { code?: unknown } | null)?.code;
    if (code === 'EADDRINUSE') return new DemoServerError('DEMO_PORT_IN_USE', port, `port ${port} on ${host} is already in use`, { cause: caught });
    if (code === 'EACCES') return new DemoServerError('DEMO_PORT_FORBIDDEN', port, `port ${port} on ${host} needs privileges this process does not have`, { cause: caught });
    const detail = caught instanceof Error ? caught.message : String(caught);
    return new DemoServerError('DEMO_LISTEN_FAILED', port, `cannot listen on ${host}:${port}: ${detail}`, { cause: caught });
  }
}

const here = dirname(fileURLToPath(import.meta.url));
const pkg = join(here, '..');

/**
 * Bundles the page's script: web-audio and core from their TypeScript sources, rxjs and eventemitter3
 * included. `entry`: another page script bundled the same way (the browser tests' own pages).
 */
export async function bundlePage(entry = join(here, 'page', 'main.ts')): Promise<string> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    legalComments: 'none',
    logLevel: 'silent',
    alias: {
      // The sources' folders, so the main entries (index.ts) and the ./internal and ./rx subpaths (internal.ts, rx.ts) resolve.
      '@soundclone/core': join(pkg, '..', 'core', 'src'),
      '@soundclone/web-audio': join(pkg, 'src'),
    },
    // Loaded at run time from this server, as an app would load the package's artifact.
    external: ['/capture-worklet-source.js'],
  });
  return result.outputFiles[0]!.text;
}

export async function startDemo(options: DemoOptions = {}): Promise<DemoServer> {
  const host = options.host ?? '127.0.0.1';
  const port = options.port ?? 0;
  // The port first: when it is taken, say so before starting anything else.
  let handle: (req: IncomingMessage, res: ServerResponse) => Promise<void> = async (_req, res) => void res.writeHead(503).end('starting');
  const http: Server = createServer((req, res) => {
    handle(req, res).catch((caught: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'Content-Type': 'text/plain' });
      res.end(caught instanceof Error ? caught.message : 'error');
    });
  });
  await new Promise<void>((resolve, reject) => {
    const failed = (caught: unknown): void => reject(DemoServerError.fromListen(caught, port, host));
    http.once('error', failed);
    http.listen(port, host, () => {
      http.off('error', failed);
      resolve();
    });
  });
  const closeHttp = async (): Promise<void> => {
    http.closeAllConnections();
    await new Promise<void>((resolve) => http.close(() => resolve()));
  };

  const accessKey = options.service?.accessKey ?? options.accessKey ?? 'demo-key';
  let server: RunningServer | undefined;
  let files: Record<string, { type: string; body: string }>;
  const ownsServer = options.server === undefined && options.service === undefined;
  try {
    server = options.service !== undefined ? undefined : options.server ?? (await startServer({ port: 0, host: '127.0.0.1', accessKeys: [accessKey], ...options.serverOptions }));
    try {
      const [app, worklet, html, css] = await Promise.all([
        bundlePage(), bundleWorklet(), readFile(join(here, 'page', 'index.html'), 'utf8'), readFile(join(here, 'page', 'style.css'), 'utf8'),
      ]);
      files = {
        '/': { type: 'text/html; charset=utf-8', body: html },
        '/app.js': { type: 'text/javascript; charset=utf-8', body: app },
        '/style.css': { type: 'text/css; charset=utf-8', body: css },
        '/capture-worklet.js': { type: 'text/javascript; charset=utf-8', body: worklet },
        '/capture-worklet-source.js': { type: 'text/javascript; charset=utf-8', body: `export default ${JSON.stringify(worklet)};\n` },
      };
    } catch (caught) {
      if (ownsServer) await server?.close();
      throw caught;
    }
  } catch (caught) {
    await closeHttp();
    throw caught;
  }
  const baseUrl = options.service?.baseUrl.replace(/\/+$/, '') ?? (server as RunningServer).url;
  const client = new SoundClone({ accessKey, baseUrl });
  const sessions: string[] = [];
  const released: string[] = [];
  // The page's socket goes where the service's socket URLs point: its public address.
  const socketOrigin = new URL(options.service !== undefined ? baseUrl : (server as RunningServer).publicUrl).origin.replace(/^http/, 'ws');

  handle = async (req, res) => {
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
    const json = (status: number, body: unknown, extra: Record<string, string> = {}): void =>
      void res.writeHead(status, { ...headers, ...extra, 'Content-Type': 'application/json' }).end(JSON.stringify(body));
    if (req.method === 'POST' && url.pathname === '/api/session') {
      // The backend's job: create the session with the key; the page gets the token only. No retries:
      // a busy service is the visitor's answer now, not after the client's backoff.
      try {
        const created = await client.stt.realtime.create({ title: 'Live captions demo', options: { entityCategories: ['name'] } }, { maxRetries: 0 });
        sessions.push(created.sessionId);
        json(200, { sessionId: created.sessionId, token: created.socket.token, socketUrl: created.socket.url, expiresAt: created.socket.expiresAt });
      } catch (caught) {
        refusal(caught, json);
      }
      return;
    }
    const release = req.method === 'POST' ? /^\/api\/session\/([^/]+)\/release$/.exec(url.pathname) : null;
    if (release !== null) {
      const sessionId = decodeURIComponent(release[1]!);
      // Only sessions this server handed out: the page never finishes anyone else's.
      if (!sessions.includes(sessionId)) return json(404, { code: -1, errorCode: 'NOT_FOUND', message: 'no such demo session' });
      try {
        // capturedSamples 0: whatever the service received counts; nothing is declared lost.
        const finished = await client.stt.realtime.finish(sessionId, 0, { maxRetries: 0 });
        if (!released.includes(sessionId)) released.push(sessionId);
        json(200, { sessionId, status: finished.status });
      } catch (caught) {
        refusal(caught, json);
      }
      return;
    }
    const file = req.method === 'GET' ? files[url.pathname] : undefined;
    if (file === undefined) {
      res.writeHead(404, { ...headers, 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { ...headers, 'Content-Type': file.type }).end(file.body);
  };

  const address = http.address();
  const bound = typeof address === 'object' && address !== null ? address.port : port;
  return {
    url: `http://${host}:${bound}`,
    server,
    baseUrl,
    accessKey,
    sessions,
    released,
    async close() {
      await closeHttp();
      if (ownsServer) await server?.close();
    },
  };
}

/**
 * The service's refusal, passed through to the page: its HTTP status and failure envelope
 * (`{ code: -1, message, errorCode, requestId, details }`), so a 503 stays a 503 with its code. No
 * answer from the service at all (it is down): 502 with the client's error code.
 */
function refusal(caught: unknown, json: (status: number, body: unknown) => void): void {
  if (caught instanceof ApiError) {
    const body = { code: -1, message: caught.message, errorCode: caught.code, ...(caught.requestId !== undefined ? { requestId: caught.requestId } : {}), ...(caught.details !== undefined ? { details: caught.details } : {}) };
    json(caught.status, body);
    return;
  }
  const code = isSoundCloneError(caught) ? caught.code : 'INTERNAL';
  json(502, { code: -1, message: caught instanceof Error ? caught.message : String(caught), errorCode: code });
}
