import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import WebSocket, { WebSocketServer, type RawData } from 'ws';
import { closeHost, listenLoopback, readAll } from './host.js';
import { CLOSE_CODES } from '@soundclone/core/internal';
import { ReplayMismatchError, TestingError } from '../errors.js';
import {
  clientFrame, describeBody, describeEntry, describeFrame, isHeartbeat, normalizePath, recordBody, sameBody, sameFrame, type Cassette, type CassetteEntry, type SocketEntry,
} from './cassette.js';

export interface ReplayServer {
  /** Where the app reaches the replayed service. */
  readonly url: string;
  /** The first mismatch, once one happened (the replay answers nothing more from then on). */
  readonly mismatch: ReplayMismatchError | undefined;
  /**
   * Throws the first mismatch, or a ReplayMismatchError for what the cassette still holds that the
   * app never sent (a request, a socket, a client frame).
   */
  verify(): void;
  close(): Promise<void>;
}

/**
 * Serves a cassette back to an app, in strict order: every request must be the next one the cassette
 * holds (method, path, body), every socket the next socket, every client frame on it the next client
 * frame; the service's answers and frames are sent as recorded. The first difference is a
 * ReplayMismatchError (TESTING_REPLAY_MISMATCH) naming what was expected and what came: a REST request
 * is then answered 500 with it as the message, a socket closed 4400 and a socket upgrade refused 400
 * (both final for the SDK, so the app fails at once); `mismatch` and `verify()` report it.
 * Heartbeats are not replayed: a client ping gets its pong at once.
 */
export async function startReplayServer(cassette: Cassette): Promise<ReplayServer> {
  if (cassette === null || typeof cassette !== 'object' || cassette.version !== 1 || !Array.isArray(cassette.entries)) {
    throw new TestingError('TESTING_INVALID_CASSETTE', 'a cassette is { version: 1, entries: [...] }, as recording.cassette() makes it');
  }
  const entries = cassette.entries;
  let next = 0;
  let mismatch: ReplayMismatchError | undefined;
  /** Sockets replayed so far: their entry and how far their frames got. */
  const replayed: Array<{ index: number; entry: SocketEntry; cursor: () => number }> = [];
  const connections = new Set<Socket>();
  const open = new Set<WebSocket>();
  const wss = new WebSocketServer({ noServer: true });
  let host = '';
  const fill = (text: string): string => text.split('{host}').join(host);
  const fail = (at: string, expected: string, received: string): ReplayMismatchError => {
    mismatch ??= new ReplayMismatchError(at, expected, received);
    return mismatch;
  };

  const server = createServer((req, res) => void answer(req, res));
  server.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
  });
  server.on('upgrade', (req, socket, head) => upgrade(req, socket, head));

  async function answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = recordBody(await readAll(req), req.headers['content-type']);
    const method = req.method ?? 'GET';
    const path = normalizePath(req.url ?? '/', []);
    const index = next;
    const entry: CassetteEntry | undefined = entries[index];
    const received = `${method} ${path} ${describeBody(body)}`;
    if (mismatch !== undefined || entry?.kind !== 'http' || entry.method !== method || entry.path !== path || !sameBody(entry.body, body)) {
      const error = mismatch ?? fail(`entry ${index}`, describeEntry(entry), received);
      const text = JSON.stringify({ code: -1, message: error.message, errorCode: 'INTERNAL', requestId: 'req_replay' });
      res.writeHead(500, { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
      return;
    }
    next += 1;
    const out = Buffer.from(fill(entry.response.body), 'utf8');
    res.writeHead(entry.response.status, { ...entry.response.headers, 'content-length': String(out.length) });
    res.end(out);
  }

  function upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    socket.on('error', () => socket.destroy());
    const path = normalizePath(req.url ?? '/', []);
    const index = next;
    const entry: CassetteEntry | undefined = entries[index];
    if (mismatch !== undefined || entry?.kind !== 'socket' || entry.path !== path) {
      const error = mismatch ?? fail(`entry ${index}`, describeEntry(entry), `socket ${path}`);
      const text = JSON.stringify({ code: -1, message: error.message, errorCode: 'INPUT_INVALID', requestId: 'req_replay' });
      socket.end(`HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
      return;
    }
    next += 1;
    if (entry.refused !== undefined) {
      const text = fill(entry.refused.body);
      socket.end(`HTTP/1.1 ${entry.refused.status} Refused\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`);
      replayed.push({ index, entry, cursor: () => entry.frames.length });
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      open.add(ws);
      ws.on('close', () => open.delete(ws));
      ws.on('error', () => undefined);
      const frames = entry.frames;
      let at = 0;
      replayed.push({ index, entry, cursor: () => at });
      /** The service's frames up to the next client frame. */
      const play = (): void => {
        for (let frame = frames[at]; frame !== undefined && frame.from === 'server'; frame = frames[at]) {
          at += 1;
          if ('close' in frame) {
            at = frames.length;
            ws.close(frame.close.code, frame.close.reason);
            return;
          }
          if ('binary' in frame) ws.send(Buffer.from(frame.binary, 'base64'), { binary: true });
          else ws.send(fill(frame.text));
        }
      };
      ws.on('message', (data: RawData, isBinary) => {
        const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
        if (!isBinary && isHeartbeat(bytes.toString('utf8'))) {
          const message = JSON.parse(bytes.toString('utf8')) as { type: string; id?: unknown };
          if (message.type === 'ping') ws.send(JSON.stringify({ type: 'pong', ...(message.id !== undefined ? { id: message.id } : {}) }));
          return;
        }
        if (mismatch !== undefined) return;
        const got = clientFrame(bytes, isBinary, []);
        const expected = frames[at];
        if (expected === undefined || !sameFrame(expected, got)) {
          fail(`entry ${index} (socket ${entry.path}), frame ${at}`, describeFrame(expected), describeFrame(got));
          ws.close(CLOSE_CODES.PROTOCOL_VIOLATION, 'replay mismatch');
          return;
        }
        at += 1;
        play();
      });
      play();
    });
  }

  host = await listenLoopback(server);
  let closed: Promise<void> | undefined;
  return {
    url: `http://${host}`,
    get mismatch() {
      return mismatch;
    },
    verify() {
      if (mismatch !== undefined) throw mismatch;
      for (const { index, entry, cursor } of replayed) {
        const left = entry.frames.slice(cursor()).find((f) => f.from === 'client');
        if (left !== undefined) throw fail(`entry ${index} (socket ${entry.path}), frame ${entry.frames.indexOf(left)}`, describeFrame(left), 'nothing (the socket closed)');
      }
      if (next < entries.length) throw fail(`entry ${next}`, describeEntry(entries[next]), 'nothing (the app stopped)');
    },
    close() {
      closed ??= closeHost(server, wss, open, connections);
      return closed;
    },
  };
}

