import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { KEY_A, PREFIX, idem, rawJson, type TestServer, serverForSuite } from './support/server.js';
import { speechWav } from './support/wav.js';
import { jsonTooDeep } from '../src/util/json-depth.js';
import { parseClientMessage } from '../src/realtime/socket/messages.js';

const WAV = speechWav();

/** Sends raw bytes over one TCP connection; resolves with what came back before the server closed or `waitMs` passed. */
function rawExchange(url: string, payload: Buffer | string, waitMs = 3000, endAfterWrite = false): Promise<{ text: string; closed: boolean; elapsedMs: number }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const started = Date.now();
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    let done = false;
    const finish = (closed: boolean): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ text: Buffer.concat(chunks).toString('latin1'), closed, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    socket.write(payload, () => {
      if (endAfterWrite) socket.end();
    });
  });
}

function multipartHead(boundary: string, length: number): string {
  return `POST ${PREFIX}/voices/tts HTTP/1.1\r\nHost: 127.0.0.1\r\naccessKey: ${KEY_A}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${length}\r\nConnection: close\r\n\r\n`;
}

async function stillAnswers(server: TestServer): Promise<void> {
  const r = await server.call('GET', '/voices');
  expect(r.status).toBe(200);
  expect(r.body.code).toBe(1);
}

describe('hostile input', () => {
  const server = serverForSuite();

  describe('multipart bodies that end early', () => {
    const boundary = 'XbOuNdArYx';
    const partHead = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="name"\r\n\r\nhostile\r\n--${boundary}\r\nContent-Disposition: form-data; name="files"; filename="a.wav"\r\nContent-Type: audio/wav\r\n\r\n`, 'latin1');

    it('refuses a file part with no closing boundary with a typed 400', async () => {
      const body = Buffer.concat([partHead, WAV.subarray(0, 2048)]);
      const r = await rawExchange(server.url, Buffer.concat([Buffer.from(multipartHead(boundary, body.length), 'latin1'), body]));
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      const json = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4));
      expect(json).toMatchObject({ code: -1, errorCode: 'INPUT_INVALID' });
      expect(json.details.violations[0].field).toBe('body');
      await stillAnswers(server);
    });

    it('refuses a body that ends in the middle of the part headers with a typed 400', async () => {
      const body = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="fi`, 'latin1');
      const r = await rawExchange(server.url, Buffer.concat([Buffer.from(multipartHead(boundary, body.length), 'latin1'), body]));
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      await stillAnswers(server);
    });

    it('logs a typed 400, not an internal error, when an upload body stops before its declared length', async () => {
      const before = server.requests.length;
      const head = `POST ${PREFIX}/uploads HTTP/1.1\r\nHost: 127.0.0.1\r\naccessKey: ${KEY_A}\r\nContent-Type: audio/wav\r\nContent-Length: 100000\r\n\r\n`;
      const r = await rawExchange(server.url, Buffer.concat([Buffer.from(head, 'latin1'), WAV.subarray(0, 1000)]), 3000, true);
      expect(r.closed).toBe(true);
      const deadline = Date.now() + 2000;
      while (server.requests.length === before && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
      expect(server.requests.slice(before).map((e) => e.status)).toEqual([400]);
      await stillAnswers(server);
    });

    it('does not hang or crash when the client resets in the middle of a file part', async () => {
      const body = Buffer.concat([partHead, WAV.subarray(0, 2048)]);
      const answered = (): number => server.requests.filter((e) => e.method === 'POST' && e.path.endsWith('/voices/tts')).length;
      const before = answered();
      // Declares far more bytes than it sends, then resets the connection.
      const { hostname, port } = new URL(server.url);
      await new Promise<void>((resolve) => {
        const socket = connect(Number(port), hostname, () => {
          socket.write(Buffer.concat([Buffer.from(multipartHead(boundary, body.length + 100_000), 'latin1'), body]), () => {
            setTimeout(() => {
              socket.resetAndDestroy();
              resolve();
            }, 100);
          });
        });
        socket.on('error', () => undefined);
      });
      // The handler finishes (and logs) instead of waiting forever on the dead connection.
      const deadline = Date.now() + 2000;
      while (answered() === before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(answered()).toBe(before + 1);
      await stillAnswers(server);
    });
  });

  describe('deeply nested JSON', () => {
    const deep = (n: number): string => '['.repeat(n) + ']'.repeat(n);

    it('refuses clientMetadata nested 400,000 deep with a typed 400 naming the body', async () => {
      const body = `{"mediaUrl":"https://example.com/a.wav","clientMetadata":{"a":${deep(400_000)}}}`;
      const r = await server.call('POST', '/stt/transcriptions', { body, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idem() } });
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code: -1, errorCode: 'INPUT_INVALID' });
      expect(r.body.details.violations).toEqual([{ field: 'body', rule: 'must not nest objects or arrays more than 64 levels deep' }]);
      await stillAnswers(server);
    });

    it('refuses a /tts/list body nested 400,000 deep with a typed 400', async () => {
      const r = await rawJson(`${server.url}${PREFIX}/tts/list`, 'GET', { accessKey: KEY_A }, `{"limit":${deep(400_000)}}`);
      expect(r.status).toBe(400);
      expect(r.body.errorCode).toBe('INPUT_INVALID');
      expect(r.body.details.violations).toEqual([{ field: 'body', rule: 'must not nest objects or arrays more than 64 levels deep' }]);
      await stillAnswers(server);
    });

    it('refuses a realtime text message nested 400,000 deep as invalid, without parsing it', () => {
      expect(parseClientMessage(`{"type":"finish","x":${deep(400_000)}}`)).toEqual({ kind: 'invalid', reason: 'nested too deep' });
      expect(parseClientMessage(`{"type":"finish","x":${deep(10)}}`).kind).not.toBe('invalid');
    });

    it('counts nesting outside strings only, up to the limit inclusive', () => {
      expect(jsonTooDeep(deep(64))).toBe(false);
      expect(jsonTooDeep(deep(65))).toBe(true);
      expect(jsonTooDeep(`{"a":"${'['.repeat(1000)}"}`)).toBe(false);
      expect(jsonTooDeep(JSON.stringify({ a: '\\', b: '"[[[[', c: '['.repeat(100) }))).toBe(false);
      expect(jsonTooDeep(JSON.stringify({ a: '\\' }) + deep(65))).toBe(true);
    });
  });

  describe('error bodies stay small', () => {
    const numbers = '[' + new Array(500_000).fill('1').join(',') + ']';

    const bounded = (r: { status: number; body: any }, field: string): void => {
      expect(r.status).toBe(400);
      expect(r.body.errorCode).toBe('INPUT_INVALID');
      expect(r.body.details.violations.length).toBe(20);
      expect(r.body.details.violations[1].field).toBe(`${field}[0]`);
      expect(r.body.details.checkingStopped).toBe(true);
      expect(r.body.message).toMatch(/and possibly more/);
      expect(JSON.stringify(r.body).length).toBeLessThan(16 * 1024);
    };

    for (const field of ['vocabularyHints', 'entityCategories']) {
      it(`lists 20 violations and counts the rest for 500,000 numbers in ${field}`, async () => {
        const body = `{"mediaUrl":"https://example.com/a.wav","options":{"${field}":${numbers}}}`;
        expect(body.length).toBeLessThan(1024 * 1024);
        const r = await server.call('POST', '/stt/transcriptions', { body, headers: { 'Content-Type': 'application/json', 'Idempotency-Key': idem() } });
        bounded(r, `options.${field}`);
        await stillAnswers(server);
      });
    }

    it('lists 20 violations and counts the rest for 500,000 numbers in cover ids', async () => {
      const r = await server.call('DELETE', '/cover', { body: `{"ids":${numbers}}`, headers: { 'Content-Type': 'application/json' } });
      bounded(r, 'ids');
      expect(r.body.details.violations[0]).toEqual({ field: 'ids', rule: 'must hold at most 500 ids per call' });
      await stillAnswers(server);
    });

    it('counts the violations past the first 20 when every one was checked', async () => {
      const options = Object.fromEntries(Array.from({ length: 30 }, (_, i) => [`unknown${i}`, 1]));
      const r = await server.call('POST', '/stt/transcriptions', { json: { mediaUrl: 'https://example.com/a.wav', options }, headers: { 'Idempotency-Key': idem() } });
      expect(r.status).toBe(400);
      expect(r.body.details.violations.length).toBe(20);
      expect(r.body.details.omittedViolations).toBe(10);
      expect(r.body.message).toMatch(/; and 10 more$/);
    });

    it('still lists every violation when there are at most 20', async () => {
      const r = await server.call('DELETE', '/cover', { json: { ids: [1, 2, 3] } });
      expect(r.status).toBe(400);
      expect(r.body.details.violations.map((v: { field: string }) => v.field)).toEqual(['ids[0]', 'ids[1]', 'ids[2]']);
      expect(r.body.details.omittedViolations).toBeUndefined();
      expect(r.body.details.checkingStopped).toBeUndefined();
    });
  });

  describe('blank lines instead of a request', () => {
    it('answers a connection that sends only blank lines with a 400 at once and closes it', async () => {
      const r = await rawExchange(server.url, '\r\n\r\n\r\n', 3000);
      expect(r.closed).toBe(true);
      expect(r.elapsedMs).toBeLessThan(1000);
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      const json = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4));
      expect(json).toMatchObject({ code: -1, errorCode: 'INPUT_INVALID', details: { violations: [{ field: 'request' }] } });
      await stillAnswers(server);
    });

    it('answers a request the HTTP parser cannot read with a 400 in the failure envelope', async () => {
      const r = await rawExchange(server.url, 'NOT AN HTTP REQUEST\r\n\r\n', 3000);
      expect(r.closed).toBe(true);
      expect(r.text).toMatch(/^HTTP\/1\.1 400 /);
      const json = JSON.parse(r.text.slice(r.text.indexOf('\r\n\r\n') + 4));
      expect(json).toMatchObject({ code: -1, errorCode: 'INPUT_INVALID', details: { violations: [{ field: 'request', rule: 'must be a well-formed HTTP/1.1 request' }] } });
      await stillAnswers(server);
    });

    it('still serves a request after one tolerated empty line, and keep-alive requests after it', async () => {
      const get = `GET ${PREFIX}/voices HTTP/1.1\r\nHost: 127.0.0.1\r\naccessKey: ${KEY_A}\r\n\r\n`;
      const r = await rawExchange(server.url, `\r\n${get}${get.replace('HTTP/1.1\r\n', 'HTTP/1.1\r\nConnection: close\r\n')}`, 3000);
      expect(r.text.match(/HTTP\/1\.1 200 /g)?.length).toBe(2);
    });
  });

  describe('Matroska declared sample rates', () => {
    // A one-track PCM file whose SamplingFrequency (0xb5) is written as a float64.
    const vint = (n: number): number[] => (n < 0x7f ? [0x80 | n] : [0x40 | (n >> 8), n & 0xff]);
    const el = (id: number[], body: number[]): number[] => [...id, ...vint(body.length), ...body];
    function mka(rate: number): Buffer {
      const f64 = Buffer.alloc(8);
      f64.writeDoubleBE(rate);
      const track = el([0xae], [...el([0xd7], [1]), ...el([0x83], [2]), ...el([0x86], [...Buffer.from('A_PCM/INT/LIT')]),
        ...el([0xe1], [...el([0xb5], [...f64]), ...el([0x9f], [1]), ...el([0x62, 0x64], [16])])]);
      const block = [0x81, 0, 0, 0x80, ...new Array<number>(100).fill(0)];
      const segment = [...el([0x16, 0x54, 0xae, 0x6b], track), ...el([0x1f, 0x43, 0xb6, 0x75], el([0xa3], block))];
      return Buffer.from([...el([0x1a, 0x45, 0xdf, 0xa3], el([0x42, 0x82], [...Buffer.from('matroska')])), ...el([0x18, 0x53, 0x80, 0x67], segment)]);
    }
    const send = (rate: number) => server.call('POST', '/uploads', { body: new Uint8Array(mka(rate)), headers: { 'Content-Type': 'audio/x-matroska' } });

    it('accepts a file that declares 16000 Hz', async () => {
      const r = await send(16000);
      expect(r.status).toBe(200);
      expect(r.body.code).toBe(1);
    });

    for (const rate of [0, Number.NaN, 1e-30, -16000, Number.POSITIVE_INFINITY, 0.5, 999, 1e9]) {
      it(`refuses a declared rate of ${rate} Hz with a typed UNSUPPORTED_TYPE`, async () => {
        const r = await send(rate);
        expect(r.status).toBe(415);
        expect(r.body).toMatchObject({ code: -1, errorCode: 'UNSUPPORTED_TYPE' });
        expect(r.body.message).toMatch(/sampling frequency/);
        await stillAnswers(server);
      });
    }
  });
});
