import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { closeHost, listenLoopback, readAll } from './host.js';
import { redact } from '../redact.js';
import { clientFrame, isHeartbeat, normalizePath, recordBody, type Cassette, type CassetteEntry, type SocketFrame } from './cassette.js';

/** Response headers a cassette keeps (the rest describe the connection, not the answer). */
const KEPT_HEADERS = ['content-type', 'x-request-id', 'idempotent-replayed', 'retry-after'];

/** A recording in progress: point the app at `url`; `cassette()` is what was said so far. */
export interface Recording {
  /** Where the app reaches the service while recording (in front of the test server). */
  readonly url: string;
  cassette(): Cassette;
  /** Stops recording: closes every connection it relayed. */
  close(): Promise<void>;
}

/**
 * Records what an app and a test server say to each other: an HTTP and WebSocket relay on 127.0.0.1
 * in front of `target` (the test server's url) that writes every REST exchange and every socket frame
 * into a cassette (cassette.ts), in the order the relay heard them, with `secrets` (the access key)
 * and socket tokens redacted. Addresses the service hands out (socket URLs) are rewritten to the relay,
 * so the app's sockets come through it too; in the cassette they read `{host}`.
 */
export async function startRecording(target: string, secrets: readonly string[]): Promise<Recording> {
  const upstream = new URL(target);
  const entries: CassetteEntry[] = [];
  const sockets = new Set<Socket>();
  const relayed = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true });
  let host = '';
  // What the service says about itself, as the cassette keeps it and as the app is told it.
  const toCassette = (text: string): string => redact(text.split(upstream.host).join('{host}'), secrets);
  const toApp = (text: string): string => text.split(upstream.host).join(host);

  const server: Server = createServer((req, res) => void relayHttp(req, res));
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('upgrade', (req, socket, head) => relaySocket(req, socket, head));

  async function relayHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readAll(req);
    const entry: { kind: 'http'; method: string; path: string; body: ReturnType<typeof recordBody>; response?: { status: number; headers: Record<string, string>; body: string } } = {
      kind: 'http', method: req.method ?? 'GET', path: normalizePath(req.url ?? '/', secrets), body: recordBody(body, req.headers['content-type']),
    };
    entries.push(entry as CassetteEntry);
    const headers = { ...req.headers, host: upstream.host };
    delete headers['connection'];
    const forwarded = request({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers });
    forwarded.on('error', () => res.destroy());
    forwarded.on('response', async (answer) => {
      let text: string;
      try {
        text = (await readAll(answer)).toString('utf8');
      } catch {
        res.destroy();
        return;
      }
      const kept: Record<string, string> = {};
      for (const name of KEPT_HEADERS) {
        const value = answer.headers[name];
        if (typeof value === 'string') kept[name] = value;
      }
      entry.response = { status: answer.statusCode ?? 0, headers: redact(kept, secrets), body: toCassette(text) };
      const out = Buffer.from(toApp(text), 'utf8');
      res.writeHead(answer.statusCode ?? 502, { ...kept, 'content-length': String(out.length) });
      res.end(out);
    });
    forwarded.end(body);
  }

  function relaySocket(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const frames: SocketFrame[] = [];
    const entry: { kind: 'socket'; path: string; frames: SocketFrame[]; refused?: { status: number; body: string } } = { kind: 'socket', path: normalizePath(req.url ?? '/', secrets), frames };
    entries.push(entry);
    const headers: Record<string, string> = {};
    for (const name of ['accesskey', 'origin']) {
      const value = req.headers[name];
      if (typeof value === 'string') headers[name] = value;
    }
    const service = new WebSocket(`ws://${upstream.host}${req.url ?? '/'}`, { headers });
    service.on('error', () => socket.destroy());
    service.once('unexpected-response', (_req, answer) => {
      void readAll(answer).then((body) => {
        entry.refused = { status: answer.statusCode ?? 0, body: toCassette(body.toString('utf8')) };
        socket.end(`HTTP/1.1 ${answer.statusCode} Refused\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString('utf8')}`);
      }, () => socket.destroy());
    });
    service.once('open', () => {
      wss.handleUpgrade(req, socket, head, (app) => {
        relayed.add(app);
        relayed.add(service);
        app.on('error', () => undefined);
        service.on('message', (data: RawData, isBinary) => {
          const bytes = toBuffer(data);
          if (isBinary) frames.push({ from: 'server', binary: bytes.toString('base64') });
          else {
            const text = bytes.toString('utf8');
            if (!isHeartbeat(text)) frames.push({ from: 'server', text: toCassette(text) });
          }
          if (app.readyState === WebSocket.OPEN) app.send(isBinary ? bytes : toApp(bytes.toString('utf8')), { binary: isBinary });
        });
        app.on('message', (data: RawData, isBinary) => {
          const bytes = toBuffer(data);
          if (isBinary || !isHeartbeat(bytes.toString('utf8'))) frames.push(clientFrame(bytes, isBinary, secrets));
          if (service.readyState === WebSocket.OPEN) service.send(bytes, { binary: isBinary });
        });
        service.on('close', (code, reason) => {
          frames.push({ from: 'server', close: { code, reason: reason.toString('utf8') } });
          relayed.delete(service);
          if (app.readyState === WebSocket.OPEN) app.close(code === 1005 || code === 1006 ? 1000 : code, reason);
        });
        app.on('close', () => {
          relayed.delete(app);
          if (service.readyState === WebSocket.OPEN || service.readyState === WebSocket.CONNECTING) service.close();
        });
      });
    });
  }

  host = await listenLoopback(server);
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host}`,
    cassette: () => JSON.parse(JSON.stringify({ version: 1, entries })) as Cassette,
    close() {
      closed ??= closeHost(server, wss, relayed, sockets);
      return closed;
    },
  };
}

function toBuffer(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  if (Array.isArray(data)) return Buffer.concat(data);
  return Buffer.from(data);
}
