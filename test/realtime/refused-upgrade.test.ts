import { createRequire } from 'node:module';
import type { RunningServer } from '@soundclone/server';
import { RealtimeSocketSession, SoundClone, RealtimeError, isSoundCloneError, type WebSocketConstructor, type WebSocketLike } from '@soundclone/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ChaosProxy } from './chaos-proxy.js';
import { KEY, clientFor, startRealtimeServer } from './support.js';

// `ws` as the server package has it: the implementation the SDK itself picks in Node.
const NodeWebSocket = createRequire(new URL('../../packages/server/package.json', import.meta.url))('ws') as WebSocketConstructor;

/**
 * The WebSocket API as a browser gives it: no `unexpected-response`, so the status of a refused
 * upgrade never reaches the page. Wraps `ws` and hides everything else it has.
 */
class BrowserLikeWebSocket implements WebSocketLike {
  readonly #ws: WebSocketLike;
  constructor(url: string) {
    this.#ws = new NodeWebSocket(url);
  }
  get readyState(): number {
    return this.#ws.readyState;
  }
  get binaryType(): string {
    return this.#ws.binaryType;
  }
  set binaryType(type: string) {
    this.#ws.binaryType = type;
  }
  get bufferedAmount(): number {
    return this.#ws.bufferedAmount;
  }
  send(data: string | ArrayBufferView | ArrayBuffer): void {
    this.#ws.send(data);
  }
  close(code?: number, reason?: string): void {
    this.#ws.close(code, reason);
  }
  addEventListener(type: string, listener: (event: never) => void): void {
    this.#ws.addEventListener(type, listener);
  }
  removeEventListener(type: string, listener: (event: never) => void): void {
    this.#ws.removeEventListener(type, listener);
  }
}

/** Bounded, so that a refusal wrongly taken for a loss shows as a few extra connections, not a loop. */
const ONCE_MORE = { nextRetryDelayMs: (c: { attempt: number }): number | null => (c.attempt < 1 ? 0 : null) };

const failure = (p: Promise<unknown>): Promise<unknown> => p.then(() => undefined, (e: unknown) => e);

/**
 * A refused upgrade is told by its HTTP status (docs/protocol.md "URL and authentication"): 400, 401,
 * 403 and 404 end the session with REALTIME_SOCKET_REFUSED after one attempt, anything else is retried.
 * Every socket goes through a TCP proxy that counts the connections, so a retry loop cannot hide.
 */
describe('realtime session: refused upgrades', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  let socketUrl: string;
  beforeAll(async () => {
    server = await startRealtimeServer();
    proxy = await new ChaosProxy(server.port).listen();
    socketUrl = `ws://127.0.0.1:${proxy.port}/sound_clone/api/v1/stt/realtime/socket`;
  });
  afterEach(() => {
    server.faults.clear();
    proxy.connections = 0;
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('a bad token (HTTP 401) fails at once with REALTIME_SOCKET_REFUSED: one connection, no retry', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const page = new SoundClone({ accessKey: 'x', baseUrl: server.url });
    const error = await failure(page.stt.realtime.attach({ sessionId: created.sessionId, token: 'rtt_bogus', socketUrl, reconnect: ONCE_MORE }));
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
    expect((error as Error).message).toContain('HTTP 401');
    expect(proxy.connections).toBe(1);
  });

  it('a token for another session (HTTP 400) is refused the same way', async () => {
    const client = clientFor(server);
    const mine = await client.stt.realtime.create({});
    const other = await client.stt.realtime.create({});
    const session = new RealtimeSocketSession({ sessionId: mine.sessionId, token: other.socket.token, socketUrl, reconnect: ONCE_MORE });
    // With a token and no key the session id goes in the query too, and must match the token's.
    const error = await failure(session.start());
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
    expect((error as Error).message).toContain('HTTP 400');
    expect(session.state).toBe('failed');
    expect(proxy.connections).toBe(1);
  });

  it('an unknown session with a valid key is accepted, then closed 4404: REALTIME_SESSION_NOT_FOUND, no retry', async () => {
    const session = new RealtimeSocketSession({ sessionId: 'rs_unknown', accessKey: KEY, socketUrl, reconnect: ONCE_MORE });
    const error = await failure(session.start());
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SESSION_NOT_FOUND');
    expect(proxy.connections).toBe(1);
  });

  it('a refusal another attempt may pass (HTTP 503) is retried, and the session then streams', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    server.faults.inject({ method: 'GET', path: '/stt/realtime/socket', times: 2, action: { kind: 'status', status: 503 } });
    const delays: number[] = [];
    const session = new RealtimeSocketSession({ sessionId: created.sessionId, accessKey: KEY, socketUrl, reconnect: { nextRetryDelayMs: (c) => (delays.push(c.attempt), c.attempt < 5 ? 10 : null) } });
    await session.start();
    expect(session.state).toBe('streaming');
    expect(delays).toEqual([0, 1]);
    expect(proxy.connections).toBe(3);
    session.close();
  });

  it('where the platform hides the status (a browser), a refused upgrade is a failed connection: retried until the policy gives up', async () => {
    const created = await clientFor(server).stt.realtime.create({});
    const session = new RealtimeSocketSession({
      sessionId: created.sessionId, token: 'rtt_bogus', socketUrl, WebSocket: BrowserLikeWebSocket,
      reconnect: { nextRetryDelayMs: (c) => (c.attempt < 2 ? 10 : null) },
    });
    const error = await failure(session.start());
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_RECONNECT_EXHAUSTED');
    expect(proxy.connections).toBe(3);
  });
});
