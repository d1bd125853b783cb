import { connect, type Socket } from 'node:net';
import { WebSocket } from 'ws';
import { CRAFTED_MEDIA } from './crafted-media.js';
import { API_PREFIX, BENCH_KEY } from '../server/host.js';

/**
 * The hostile clients, one entry per attack. Each `start` opens `clients` connections that misbehave
 * in one way, keeps them misbehaving (reconnecting when the server drops them) until `stop` is called,
 * and releases everything. To add an attack, add an entry to ATTACKS.
 */
export interface AttackContext {
  readonly url: string;
  readonly clients: number;
}

export interface Attack {
  readonly id: string;
  readonly title: string;
  start(context: AttackContext): Promise<() => Promise<void>>;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Runs `body` in `clients` loops until stopped; a loop that throws waits a little and goes again. */
async function loops(context: AttackContext, body: (index: number, running: () => boolean) => Promise<void>): Promise<() => Promise<void>> {
  let running = true;
  const all = Array.from({ length: context.clients }, async (_, index) => {
    while (running) {
      try {
        await body(index, () => running);
      } catch {
        await sleep(50);
      }
    }
  });
  return async () => {
    running = false;
    await Promise.all(all);
  };
}

let sessionCounter = 0;
async function createSession(url: string): Promise<string> {
  const response = await fetch(`${url}${API_PREFIX}/stt/realtime/sessions`, {
    method: 'POST',
    headers: { accessKey: BENCH_KEY, 'Content-Type': 'application/json', 'Idempotency-Key': `bench-hostile-${process.pid}-${++sessionCounter}` },
    body: '{}',
  });
  const body = (await response.json()) as { data?: { sessionId?: string } };
  if (body.data?.sessionId === undefined) throw new Error(`session create failed: ${JSON.stringify(body)}`);
  return body.data.sessionId;
}

function openSocket(url: string, sessionId: string): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace(/^http/, 'ws')}${API_PREFIX}/stt/realtime/socket?sessionId=${sessionId}`, { headers: { accessKey: BENCH_KEY } });
    ws.on('error', () => {});
    ws.once('open', () => resolve(ws));
    ws.once('close', () => reject(new Error('closed before open')));
  });
}

const closed = (ws: WebSocket): Promise<void> => new Promise((resolve) => (ws.readyState === ws.CLOSED ? resolve() : ws.once('close', () => resolve())));

function tcp(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on('error', () => {});
    socket.once('close', () => reject(new Error('closed before connect')));
  });
}

const socketClosed = (socket: Socket): Promise<void> => new Promise((resolve) => (socket.destroyed ? resolve() : socket.once('close', () => resolve())));

/** A 20 ms audio frame header (packages/core/src/protocol.ts, FRAME): magic "SC", version 1, epoch, startSample. */
function frame(epoch: number, startSample: number, samples: number): Buffer {
  const buffer = Buffer.alloc(16 + samples * 2);
  buffer.write('SC', 0, 'latin1');
  buffer[2] = 1;
  buffer.writeUInt32LE(epoch, 4);
  buffer.writeUInt32LE(startSample >>> 0, 8);
  buffer.writeUInt32LE(Math.floor(startSample / 2 ** 32), 12);
  return buffer;
}

export const ATTACKS: readonly Attack[] = [
  {
    id: 'ping-flood',
    title: 'ping flood from a client that never reads',
    start: (context) =>
      loops(context, async (_i, running) => {
        const ws = await openSocket(context.url, await createSession(context.url));
        ws.pause();
        let id = 0;
        while (running() && ws.readyState === ws.OPEN) {
          if (ws.bufferedAmount < 256 << 10) for (let k = 0; k < 100; k++) ws.send(`{"type":"ping","id":${id++}}`);
          await turn();
        }
        ws.terminate();
      }),
  },
  {
    id: 'malformed-frames',
    title: 'malformed binary frames, then a TCP reset, again and again',
    start: (context) => {
      const bad = Buffer.alloc(16 + 640, 0x41);
      return loops(context, async (i, running) => {
        const sessionId = await createSession(context.url);
        while (running()) {
          const ws = await openSocket(context.url, sessionId);
          for (let k = 0; k < 300 && ws.readyState === ws.OPEN; k++) ws.send(bad);
          await sleep(10 + (i % 5));
          (ws as unknown as { _socket: Socket })._socket.resetAndDestroy();
          await closed(ws);
        }
      });
    },
  },
  {
    id: 'non-reading-sockets',
    title: 'realtime sockets streaming 20× real time that never read',
    start: (context) =>
      loops(context, async (_i, running) => {
        const ws = await openSocket(context.url, await createSession(context.url));
        ws.pause();
        let at = 0;
        const started = performance.now();
        while (running() && ws.readyState === ws.OPEN) {
          const due = ((performance.now() - started) / 1000) * 16_000 * 20;
          while (at < due && ws.bufferedAmount < 256 << 10) {
            ws.send(frame(1, at, 320));
            at += 320;
          }
          await sleep(5);
        }
        ws.terminate();
      }),
  },
  {
    id: 'non-reading-rest',
    title: '200 pipelined GET /tts/list?limit=1000 (250 kB each), never read',
    start: (context) => {
      const request = `GET ${API_PREFIX}/tts/list?limit=1000 HTTP/1.1\r\nHost: bench\r\naccessKey: ${BENCH_KEY}\r\n\r\n`.repeat(200);
      return loops(context, async (_i, running) => {
        const socket = await tcp(context.url);
        socket.pause();
        socket.write(request);
        while (running() && !socket.destroyed) await sleep(100);
        socket.destroy();
      });
    },
  },
  {
    id: 'slowloris',
    title: 'slowloris: a header line every 500 ms, never ending the headers',
    start: (context) =>
      loops(context, async (_i, running) => {
        const socket = await tcp(context.url);
        socket.resume();
        socket.write(`GET ${API_PREFIX}/voices HTTP/1.1\r\nHost: bench\r\n`);
        let n = 0;
        while (running() && !socket.destroyed && socket.writable) {
          socket.write(`X-Slow-${n++}: ${'x'.repeat(20)}\r\n`);
          await sleep(500);
        }
        socket.destroy();
        await socketClosed(socket);
      }),
  },
  {
    id: 'huge-arrays',
    title: 'DELETE /cover with 500,000 numbers as ids (1 MB body), back to back',
    start: (context) => {
      const body = `{"ids":[${new Array(500_000).fill('1').join(',')}]}`;
      return loops(context, async (_i, running) => {
        while (running()) {
          const response = await fetch(`${context.url}${API_PREFIX}/cover`, { method: 'DELETE', headers: { accessKey: BENCH_KEY, 'Content-Type': 'application/json' }, body });
          await response.arrayBuffer();
        }
      });
    },
  },
  {
    id: 'deep-json',
    title: 'POST /stt/transcriptions with 500,000 nested arrays (1 MB body), back to back',
    start: (context) => {
      const body = `{"mediaUrl":"https://example.com/a.wav","options":${'['.repeat(500_000)}${']'.repeat(500_000)}}`;
      return loops(context, async (i, running) => {
        let n = 0;
        while (running()) {
          const response = await fetch(`${context.url}${API_PREFIX}/stt/transcriptions`, {
            method: 'POST',
            headers: { accessKey: BENCH_KEY, 'Content-Type': 'application/json', 'Idempotency-Key': `deep-${process.pid}-${i}-${n++}` },
            body,
          });
          await response.arrayBuffer();
        }
      });
    },
  },
  {
    id: 'aborted-multipart',
    title: 'POST /voices/tts declaring 10 MB, reset after 64 kB of the file part',
    start: (context) => {
      const boundary = 'benchBoundary';
      const part = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nbench\r\n--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\nRIFF\x00\x00\x00\x00WAVE`, 'latin1');
      const head = `POST ${API_PREFIX}/voices/tts HTTP/1.1\r\nHost: bench\r\naccessKey: ${BENCH_KEY}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`;
      const filler = Buffer.alloc(64 << 10, 0x10);
      return loops(context, async (_i, running) => {
        if (!running()) return;
        const socket = await tcp(context.url);
        socket.resume();
        socket.write(head);
        socket.write(part);
        await new Promise<void>((resolve) => socket.write(filler, () => resolve()));
        await sleep(5);
        socket.resetAndDestroy();
        await socketClosed(socket);
      });
    },
  },
  {
    id: 'crafted-media',
    title: 'uploads of tiny Matroska files declaring 32,000,000 ms, ±1 MiB laces, 20,000 nested elements',
    start: (context) =>
      loops(context, async (i, running) => {
        for (let n = i; running(); n++) {
          const response = await fetch(`${context.url}${API_PREFIX}/uploads`, {
            method: 'POST',
            headers: { accessKey: BENCH_KEY, 'Content-Type': 'audio/x-matroska' },
            body: new Uint8Array(CRAFTED_MEDIA[n % CRAFTED_MEDIA.length] as Buffer),
          });
          await response.arrayBuffer();
        }
      }),
  },
];
