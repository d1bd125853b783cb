import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KEY_A, PREFIX, start, type TestServer } from './support/server.js';

/**
 * REST clients that never read their responses or send their requests slowly (slowloris). The server
 * holds a bounded amount for each, ends them by its deadlines, and keeps answering everyone else.
 * Short limits through `http` keep the tests quick; the defaults are in protocol.ts HTTP_LIMITS.
 */
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
}

function open(server: TestServer): Promise<Socket> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.once('error', reject);
  });
}

async function stillAnswers(server: TestServer): Promise<void> {
  const r = await server.call('GET', '/tts/list?limit=10');
  expect(r.status).toBe(200);
  expect(r.body.code).toBe(1);
}

describe('REST: hostile clients', () => {
  let server: TestServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('answers pipelined requests only as earlier answers are read, and drops a connection that never reads', async () => {
    server = await start({ http: { responseMaxHeldBytes: 256 << 10, responseStallMs: 500, responseStallBytes: 64 << 10 } });
    const socket = await open(server);
    socket.on('error', () => {});
    let closed = false;
    socket.on('close', () => void (closed = true));
    socket.pause();
    // 400 requests for ~150 kB pages in one write, never read: 60 MB of answers if all were built.
    const request = `GET ${PREFIX}/tts/list?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\naccessKey: ${KEY_A}\r\n\r\n`;
    const pipelined = 400;
    socket.write(request.repeat(pipelined));
    const answered = (): number => server!.requests.filter((r) => r.path.endsWith('/tts/list') && r.status === 200).length;
    await until(() => answered() > 0, 'first answers');
    await sleep(1500); // three stall periods
    // Only as many were built as the kernel buffers took plus the held bound; the rest never ran.
    expect(answered()).toBeLessThan(pipelined);
    await stillAnswers(server);
    socket.resume();
    await until(() => closed, 'the non-reading connection closed by the server');
    expect(answered()).toBeLessThan(pipelined);
  }, 60_000);

  it('lets a slow but steady reader of a large answer finish', async () => {
    server = await start({ http: { responseStallMs: 1000, responseStallBytes: 1024 } });
    const socket = await open(server);
    const chunks: Buffer[] = [];
    let received = 0;
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      received += c.length;
    });
    // Ten pipelined pages, read in small sips well apart: progress resets the stall clock.
    const request = `GET ${PREFIX}/tts/list?limit=1000 HTTP/1.1\r\nHost: 127.0.0.1\r\naccessKey: ${KEY_A}\r\n\r\n`;
    socket.write(request.repeat(10));
    const ended = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    let pages = 0;
    while (pages < 10) {
      socket.pause();
      await sleep(100);
      socket.resume();
      await sleep(5);
      pages = (Buffer.concat(chunks).toString('latin1').match(/HTTP\/1\.1 200 OK/g) ?? []).length;
    }
    expect(received).toBeGreaterThan(10 * 100_000);
    socket.end();
    await ended;
  }, 60_000);

  it('answers a request whose headers trickle in (slowloris) with 408 and closes it', async () => {
    server = await start({ http: { headersTimeoutMs: 500, timeoutCheckIntervalMs: 100 } });
    const socket = await open(server);
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    const closedAt = new Promise<number>((resolve) => socket.on('close', () => resolve(Date.now())));
    socket.on('error', () => {});
    const started = Date.now();
    socket.write(`GET ${PREFIX}/voices HTTP/1.1\r\nHost: 127.0.0.1\r\n`);
    let n = 0;
    const trickle = setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: 1\r\n`), 100);
    const at = await closedAt;
    clearInterval(trickle);
    expect(Buffer.concat(chunks).toString('latin1')).toMatch(/^HTTP\/1\.1 408 /);
    // Generous: the default Node settings kept such a client for 60 s or more.
    expect(at - started).toBeLessThan(10_000);
    await stillAnswers(server);
  }, 30_000);

  it('refuses an array longer than allowed by its length, checking no more elements than allowed', async () => {
    server = await start();
    // 60,000 valid ids (~900 kB): every one would pass, so only the length bound keeps this cheap.
    const ids = `[${new Array(60_000).fill('"cover-1-0001"').join(',')}]`;
    const r = await server.call('DELETE', '/cover', { body: `{"ids":${ids}}`, headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body.details.violations).toEqual([{ field: 'ids', rule: 'must hold at most 500 ids per call' }]);
    expect(r.body.details.checkingStopped).toBe(true);
    // Nothing was deleted by the refused call.
    const again = await server.call('DELETE', '/cover', { json: { ids: ['cover-1-0001'] } });
    expect(again.body.data.succeedIds).toEqual(['cover-1-0001']);
  });

  it('states the HTTP limits it enforces by default', async () => {
    server = await start();
    const r = await server.call('GET', '/stt/capabilities');
    expect(r.body.data.limits.socket).toEqual({ maxBufferedBytes: 16 << 20, slowConsumerGraceMs: 5000, partialSkipBufferedBytes: 1 << 20, maxConsecutiveErrors: 256 });
    expect(r.body.data.limits.http).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 120_000,
      keepAliveTimeoutMs: 5_000,
      responseStallMs: 10_000,
      responseStallBytes: 65_536,
      jsonBodyMaxBytes: 1_048_576,
    });
  });
});
