import { request } from 'node:http';
import { describe, expect, it } from 'vitest';
import { KEY_A, PREFIX, serverForSuite, start } from './support/server.js';

/** The body as it arrives: each data event's size, and the whole. */
function get(url: string): Promise<{ status: number; pieces: number[]; body: string; aborted: boolean }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers: { accessKey: KEY_A } }, (res) => {
      const pieces: number[] = [];
      const chunks: Buffer[] = [];
      let aborted = false;
      res.on('data', (chunk: Buffer) => {
        pieces.push(chunk.length);
        chunks.push(chunk);
      });
      res.on('aborted', () => void (aborted = true));
      res.on('error', () => void (aborted = true));
      res.on('close', () => resolve({ status: res.statusCode ?? 0, pieces, body: Buffer.concat(chunks).toString('utf8'), aborted }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('HTTP fault: trickle', () => {
  const server = serverForSuite();

  it('sends the same answer, a few bytes at a time; only the requests the rule names', async () => {
    const url = `${server.url}${PREFIX}/user/info`;
    const plain = await get(url);
    const handle = server.faults.inject({ method: 'GET', path: '/user/info', action: { kind: 'trickle', everyMs: 10, bytes: 24 } });
    const slow = await get(url);
    expect(handle.hits).toBe(1);
    expect(slow.status).toBe(200);
    expect(slow.aborted).toBe(false);
    expect(JSON.parse(slow.body)).toEqual(JSON.parse(plain.body));
    // The body came in pieces (how many the client's reads saw depends on its pace), the plain one whole.
    expect(slow.pieces.length).toBeGreaterThan(1);
    expect(plain.pieces.length).toBe(1);
    const logged = server.requests.filter((r) => r.path === `${PREFIX}/user/info`).map((r) => r.status);
    expect(logged.slice(-2)).toEqual([200, 200]);
  });

  it('trickles a failure envelope too, and refuses a rule without a pace', async () => {
    server.faults.inject({ path: '/stt/transcriptions/tr_missing', action: { kind: 'trickle', everyMs: 5, bytes: 7 } });
    const missing = await get(`${server.url}${PREFIX}/stt/transcriptions/tr_missing`);
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toMatchObject({ code: -1, errorCode: 'NOT_FOUND' });
    expect(missing.pieces.length).toBeGreaterThan(1);
    expect(server.requests.at(-1)).toMatchObject({ status: 404, errorCode: 'NOT_FOUND' });
    expect(() => server.faults.inject({ path: '/user/info', action: { kind: 'trickle', everyMs: -1 } })).toThrow(TypeError);
    expect(() => server.faults.inject({ path: '/user/info', action: { kind: 'trickle', everyMs: 5, bytes: 0 } })).toThrow(TypeError);
  });

  it('a server closing mid-body cuts the connection and leaves nothing running', async () => {
    const own = await start();
    own.faults.inject({ path: '/user/info', action: { kind: 'trickle', everyMs: 60_000, bytes: 4 } });
    const pending = get(`${own.url}${PREFIX}/user/info`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await own.close();
    const cut = await pending;
    expect(cut.status).toBe(200);
    expect(cut.aborted).toBe(true);
    expect(cut.body.length).toBe(4);
  });
});
