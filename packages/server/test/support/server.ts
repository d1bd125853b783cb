import { afterAll, beforeAll } from 'vitest';
import { startServer, type RunningServer, type ServerOptions } from '../../src/index.js';

export const PREFIX = '/sound_clone/api/v1';
export const KEY_A = 'key-a';
export const KEY_B = 'key-b';

export interface Envelope<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: { code: number; message: string; data?: T; errorCode?: string; requestId?: string; details?: any };
}

/** A started server plus a tiny fetch helper that returns status, headers and the parsed envelope. */
export interface TestServer extends RunningServer {
  call<T = any>(method: string, path: string, init?: { key?: string | null; json?: unknown; body?: BodyInit; headers?: Record<string, string> }): Promise<Envelope<T>>;
}

export async function start(options: Partial<ServerOptions> = {}): Promise<TestServer> {
  const server = await startServer({ accessKeys: [KEY_A, KEY_B], taskTiming: { queueMs: 1, processingMs: 5, reconcilingMs: 1 }, ...options });
  const call: TestServer['call'] = async (method, path, init = {}) => {
    const headers: Record<string, string> = { ...init.headers };
    const key = init.key === undefined ? KEY_A : init.key;
    if (key !== null) headers['accessKey'] = key;
    let body = init.body;
    if (init.json !== undefined) {
      body = JSON.stringify(init.json);
      headers['Content-Type'] = 'application/json';
    }
    const response = await fetch(server.url + PREFIX + path, { method, headers, ...(body !== undefined ? { body } : {}) });
    const text = await response.text();
    return { status: response.status, headers: response.headers, body: JSON.parse(text) };
  };
  return Object.assign(server, { call });
}

/**
 * One server for the enclosing `describe`: started before its tests (before the hooks registered after
 * this call), closed after them. The returned object stands for that server, so the suite reads as if
 * it held it; use it inside tests and hooks, where it is running.
 */
export function serverForSuite(options: Partial<ServerOptions> = {}): TestServer {
  let current: TestServer | undefined;
  beforeAll(async () => {
    current = await start(options);
  });
  afterAll(async () => {
    await current?.close();
    current = undefined;
  });
  const running = (): TestServer => {
    if (current === undefined) throw new Error('the suite server runs only during its tests and hooks');
    return current;
  };
  return new Proxy({} as TestServer, {
    get: (_target, name) => Reflect.get(running(), name),
    has: (_target, name) => Reflect.has(running(), name),
  });
}

let counter = 0;
export function idem(): string {
  counter += 1;
  return `test-${process.pid}-${Date.now()}-${counter}`;
}

/** Uploads a WAV and returns its upload id. */
export async function upload(server: TestServer, bytes: Buffer, key?: string, contentType = 'audio/wav'): Promise<string> {
  const r = await server.call('POST', '/uploads', { key: key ?? KEY_A, body: new Uint8Array(bytes), headers: { 'Content-Type': contentType } });
  if (r.body.code !== 1) throw new Error(`upload failed: ${JSON.stringify(r.body)}`);
  return r.body.data.uploadId as string;
}

/** Creates a transcription and waits for a terminal status. */
export async function transcribe(server: TestServer, body: Record<string, unknown>, key = KEY_A): Promise<any> {
  const r = await server.call('POST', '/stt/transcriptions', { key, json: { waitForCompletion: true, waitTimeoutMs: 10_000, ...body }, headers: { 'Idempotency-Key': idem() } });
  if (r.body.code !== 1) throw new Error(`create failed: ${JSON.stringify(r.body)}`);
  return r.body.data;
}

/** node:http request for what fetch cannot send (a GET with a body, spec "GET /tts/list" body parameters). */
export async function rawJson(url: string, method: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any }> {
  const http = await import('node:http');
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString('utf8')) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
