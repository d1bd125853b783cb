import type { WebSocketLike } from '../../src/realtime/socket/transport.js';

/**
 * A scripted WebSocket for state-machine tests: records what the session sends and lets the test play
 * the server. Each construction is kept in `FakeSocket.all` so tests can speak through an old socket.
 */
export class FakeSocket implements WebSocketLike {
  static all: FakeSocket[] = [];
  readyState = 0;
  binaryType = 'blob';
  bufferedAmount = 0;
  readonly sent: Array<string | Uint8Array> = [];
  readonly url: string;
  readonly headers: Record<string, string> | undefined;
  private listeners = new Map<string, Set<(event: never) => void>>();

  constructor(url: string, _protocols?: string | string[], options?: { headers?: Record<string, string> }) {
    this.url = url;
    this.headers = options?.headers;
    FakeSocket.all.push(this);
  }

  static get last(): FakeSocket {
    const socket = FakeSocket.all.at(-1);
    if (socket === undefined) throw new Error('no socket yet');
    return socket;
  }

  addEventListener(type: string, listener: (event: never) => void): void {
    const set = this.listeners.get(type) ?? new Set();
    set.add(listener);
    this.listeners.set(type, set);
  }

  removeEventListener(type: string, listener: (event: never) => void): void {
    this.listeners.get(type)?.delete(listener);
  }

  listenerCount(type: string): number {
    return this.listeners.get(type)?.size ?? 0;
  }

  private fire(type: string, event: unknown): void {
    for (const listener of [...(this.listeners.get(type) ?? [])]) (listener as (e: unknown) => void)(event);
  }

  send(data: string | ArrayBufferView | ArrayBuffer): void {
    this.sent.push(typeof data === 'string' ? data : new Uint8Array(data as ArrayBuffer));
  }

  close(code = 1000, reason = ''): void {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.fire('close', { code, reason });
  }

  // --- the test plays the server ---
  open(): void {
    this.readyState = 1;
    this.fire('open', {});
  }

  receive(message: unknown): void {
    this.fire('message', { data: typeof message === 'string' ? message : JSON.stringify(message) });
  }

  drop(code = 1006): void {
    this.readyState = 3;
    this.fire('close', { code, reason: '' });
  }

  json(): Array<Record<string, unknown>> {
    return this.sent.filter((s): s is string => typeof s === 'string').map((s) => JSON.parse(s) as Record<string, unknown>);
  }

  frames(): Array<{ epoch: number; start: number; count: number }> {
    return this.sent
      .filter((s): s is Uint8Array => typeof s !== 'string')
      .map((b) => {
        const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
        return { epoch: v.getUint32(4, true), start: v.getUint32(8, true), count: (b.byteLength - 16) / 2 };
      });
  }
}

export function ready(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'session.ready', connectionId: 'cn_1', sessionId: 'rs_1', transcriptionId: 'tr_1', status: 'ACTIVE', epoch: 1, accepting: true,
    awaitingResume: false, receivedSamples: '0', sentSamples: '0', capturedSamples: '0', heartbeatIntervalMs: 10_000, heartbeatTimeoutMs: 25_000,
    ...overrides,
  };
}

export const tick = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 0));
