import WebSocket from 'ws';
import { encodeFrameHeader, encodeSkipFrame, FRAME } from '@soundclone/core/internal';
import { idem, KEY_A, PREFIX, type TestServer } from '../support/server.js';
import { pcm, toPcm16, type Piece } from '../support/wav.js';

/** Raw `ws` peers for the realtime suite: what a client sees, with an event capture to wait on. */
export interface Closed {
  readonly code: number;
  readonly reason: string;
}

export class Peer {
  readonly messages: any[] = [];
  readonly closed: Promise<Closed>;
  private waiters = new Set<() => void>();
  /** Answer server pings (a live client); false simulates a client that stopped answering. */
  answerPings = true;

  constructor(readonly ws: WebSocket) {
    this.closed = new Promise((resolve) => ws.on('close', (code, reason) => {
      resolve({ code, reason: reason.toString('utf8') });
      this.wake();
    }));
    ws.on('error', () => {});
    ws.on('message', (data, isBinary) => {
      if (isBinary) return;
      const message = JSON.parse(String(data));
      this.messages.push(message);
      if (message.type === 'ping' && this.answerPings) this.json({ type: 'pong', id: message.id });
      this.wake();
    });
  }

  private wake(): void {
    for (const waiter of [...this.waiters]) waiter();
  }

  /** The first message (from the start of the connection) matching type and predicate. */
  waitFor(type: string, predicate: (m: any) => boolean = () => true, timeoutMs = 5000): Promise<any> {
    return new Promise((resolve, reject) => {
      const check = (): boolean => {
        const found = this.messages.find((m) => m.type === type && predicate(m));
        if (found === undefined) return false;
        done();
        resolve(found);
        return true;
      };
      const done = (): void => {
        clearTimeout(timer);
        this.waiters.delete(onWake);
      };
      const onWake = (): void => {
        check();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`timed out waiting for ${type}; got ${this.messages.map((m) => m.type).join(', ')}`));
      }, timeoutMs);
      this.waiters.add(onWake);
      check();
    });
  }

  all(type: string): any[] {
    return this.messages.filter((m) => m.type === type);
  }

  /** Waits until the server acknowledged `samples`. */
  acked(samples: number, timeoutMs = 5000): Promise<any> {
    return this.waitFor('audio.ack', (m) => m.receivedSamples === String(samples), timeoutMs);
  }

  json(message: unknown): void {
    this.ws.send(JSON.stringify(message));
  }

  frame(epoch: number, startSample: number, samples: Int16Array): void {
    this.ws.send(encodeFrame(epoch, startSample, samples));
  }

  /** A skip frame: captured [startSample, startSample + count) declared sent without audio. */
  skip(epoch: number, startSample: number, count: number): void {
    const buffer = Buffer.alloc(FRAME.headerBytes + FRAME.skipPayloadBytes);
    encodeSkipFrame(new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), 0, epoch, startSample, count);
    this.ws.send(buffer);
  }

  /** Sends `samples` from `from` in 20 ms frames (320 samples), as a capture loop would. */
  stream(epoch: number, samples: Int16Array, from = 0, to = samples.length, frameSamples = 320): void {
    for (let at = from; at < to; at += frameSamples) this.frame(epoch, at, samples.subarray(at, Math.min(to, at + frameSamples)));
  }

  close(): Promise<Closed> {
    this.ws.close();
    return this.closed;
  }
}

export function encodeFrame(epoch: number, startSample: number, samples: Int16Array): Buffer {
  const buffer = Buffer.alloc(FRAME.headerBytes + samples.length * 2);
  encodeFrameHeader(new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength), 0, epoch, startSample);
  for (let i = 0; i < samples.length; i++) buffer.writeInt16LE(samples[i] as number, FRAME.headerBytes + i * 2);
  return buffer;
}

export function socketUrl(server: TestServer, query: Record<string, string>): string {
  return `${server.url.replace(/^http/, 'ws')}${PREFIX}/stt/realtime/socket?${new URLSearchParams(query).toString()}`;
}

/** Opens a socket and resolves once it is open (or rejects with the refused upgrade's status). */
export function open(url: string, headers: Record<string, string> = {}): Promise<Peer> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const peer = new Peer(ws);
    ws.once('open', () => resolve(peer));
    ws.once('unexpected-response', (_req, res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => reject(Object.assign(new Error(`upgrade refused: ${res.statusCode}`), { status: res.statusCode, body: JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null') })));
    });
    ws.once('error', reject);
  });
}

export interface Created {
  readonly sessionId: string;
  readonly transcriptionId: string;
  readonly socket: { readonly url: string; readonly token: string };
}

export async function createSession(server: TestServer, body: Record<string, unknown> = {}, key = KEY_A): Promise<Created> {
  const r = await server.call('POST', '/stt/realtime/sessions', { key, json: body, headers: { 'Idempotency-Key': idem() } });
  if (r.body.code !== 1) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** Creates a session and connects with the accessKey header; resolves after session.ready. */
export async function connect(server: TestServer, body: Record<string, unknown> = {}): Promise<{ created: Created; peer: Peer; ready: any }> {
  const created = await createSession(server, body);
  const peer = await open(socketUrl(server, { sessionId: created.sessionId }), { accessKey: KEY_A });
  const ready = await peer.waitFor('session.ready');
  return { created, peer, ready };
}

export async function reconnect(server: TestServer, sessionId: string): Promise<{ peer: Peer; ready: any }> {
  const peer = await open(socketUrl(server, { sessionId }), { accessKey: KEY_A });
  return { peer, ready: await peer.waitFor('session.ready') };
}

/** Speech-like test signal: bursts of tones (words) separated by short gaps and long silences (lines). */
export function speech(lines: number, seed = 1): Int16Array {
  const pieces: Piece[] = [{ silence: 100 }];
  for (let i = 0; i < lines; i++) {
    const base = 200 + ((i * 37 + seed * 101) % 700);
    pieces.push({ tone: base, ms: 200 + ((i * 53) % 200) }, { silence: 100 }, { tone: base + 150, ms: 240 }, { silence: 600 });
  }
  return toPcm16(pcm(pieces));
}

export async function storedAudio(server: TestServer, sessionId: string): Promise<Int16Array> {
  const r = await fetch(`${server.url}${PREFIX}/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: KEY_A } });
  if (r.status !== 200) throw new Error(`stored audio: ${r.status}`);
  const bytes = Buffer.from(await r.arrayBuffer());
  const out = new Int16Array(bytes.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = bytes.readInt16LE(i * 2);
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
