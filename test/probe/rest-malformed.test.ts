import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ResponseFormatError, SoundClone, ValidationError } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rejectionOf } from '../rest/support/harness.js';

/**
 * A server that answers what it is told to: the client must turn anything unreadable into a
 * ResponseFormatError naming where (never a TypeError, never a hang), and must not read an endless
 * body into memory.
 */
describe('REST client: malformed and oversized answers', () => {
  let server: Server;
  let answer: (req: IncomingMessage, res: ServerResponse) => void = (_req, res) => res.end();
  let baseUrl = '';

  beforeAll(async () => {
    server = createServer((req, res) => answer(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  const client = (extra: Partial<ConstructorParameters<typeof SoundClone>[0]> = {}): SoundClone =>
    new SoundClone({ accessKey: 'k', baseUrl, maxRetries: 0, ...extra });
  const json = (status: number, body: string) => (_req: IncomingMessage, res: ServerResponse): void => {
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(body);
  };

  it.each([
    ['not JSON', '<html>hello</html>', 'body'],
    ['truncated JSON', '{"code":1,"data":{"plan":"Pro"', 'body'],
    ['a failure envelope under 200', '{"code":-1,"message":"no"}', 'body.code'],
    ['data null', '{"code":1,"data":null}', 'data'],
    ['data an array', '{"code":1,"data":[]}', 'data'],
    ['a field of the wrong type', '{"code":1,"data":{"plan":5,"status":"active","resetInDays":1,"benefit":{}}}', 'data.plan'],
  ])('%s is MALFORMED_RESPONSE naming %s', async (_label, body, path) => {
    answer = json(200, body);
    const error = await rejectionOf(client().user.info());
    expect(error).toBeInstanceOf(ResponseFormatError);
    expect(error).toMatchObject({ code: 'MALFORMED_RESPONSE', path });
  });

  it('refuses a body past maxResponseBytes, declared or streamed, without reading it all', async () => {
    const small = client({ maxResponseBytes: 64 * 1024 });
    let sent = 0;
    // Streamed without Content-Length: 8 MiB in 64 KiB chunks, written as the client reads.
    answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write('{"code":1,"data":"');
      const chunk = 'a'.repeat(64 * 1024);
      const pump = (): void => {
        while (sent < 128) {
          sent += 1;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end('"}');
      };
      res.on('close', () => res.removeAllListeners('drain'));
      pump();
    };
    const streamed = await rejectionOf(small.user.info());
    expect(streamed).toMatchObject({ name: 'ResponseFormatError', code: 'MALFORMED_RESPONSE', path: 'body' });
    expect((streamed as Error).message).toContain('maxResponseBytes');
    expect(sent).toBeLessThan(128);

    answer = (_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': String(10 * 1024 * 1024) });
      res.write('{"code":1,');
    };
    const declared = await rejectionOf(small.user.info({ timeoutMs: 5_000 }));
    expect(declared).toMatchObject({ code: 'MALFORMED_RESPONSE', path: 'body' });

    // Within the limit the same client reads the answer.
    answer = json(200, '{"code":1,"data":{"plan":"Pro","status":"active","resetInDays":1,"benefit":{"usedVoices":0,"totalVoices":1,"usedMonthlyChars":0,"totalMonthlyChars":1,"usedOrderChars":0,"totalOrderChars":0}}}');
    expect((await small.user.info()).plan).toBe('Pro');
  });

  it('reads a user fetch whose body is a Node stream (node-fetch 2 style), still bounded by maxResponseBytes', async () => {
    const { Readable } = await import('node:stream');
    const nodeStyle = (chunks: Buffer[]) => async (): Promise<Response> =>
      ({ status: 200, ok: true, statusText: 'OK', redirected: false, url: baseUrl, headers: new Headers({ 'content-type': 'application/json' }), body: Readable.from(chunks) }) as unknown as Response;
    const read = await rejectionOf(client({ fetch: nodeStyle([Buffer.from('{"code":1,"data":{"plan":5,'), Buffer.from('"status":"active","resetInDays":1,"benefit":{}}}')]) }).user.info());
    // The body was read whole through its async iterator: the answer is judged on its content.
    expect(read).toMatchObject({ code: 'MALFORMED_RESPONSE', path: 'data.plan' });
    const big = await rejectionOf(client({ fetch: nodeStyle(Array.from({ length: 64 }, () => Buffer.alloc(4096, 32))), maxResponseBytes: 64 * 1024 }).user.info());
    expect(big).toMatchObject({ code: 'MALFORMED_RESPONSE', path: 'body' });
    expect((big as Error).message).toContain('maxResponseBytes');
  });

  it('refuses a maxResponseBytes that is not a positive integer', () => {
    expect(() => client({ maxResponseBytes: 0 })).toThrow(ValidationError);
    expect(() => client({ maxResponseBytes: Number.NaN })).toThrow(ValidationError);
  });
});
