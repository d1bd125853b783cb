import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningServer } from '@soundclone/server';
import { ApiError, SoundClone, ValidationError } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, KEY_A, rejectionOf, requestsTo, startTestServer } from '../rest/support/harness.js';
import { wav } from '../rest/support/audio.js';

/**
 * Bad input to the REST client, as a new user writes it: every mistake is a VALIDATION_FAILED naming
 * the field, found before anything is sent (the server's request log proves nothing arrived), never a
 * TypeError, a misleading CONNECTION_FAILED, a silent default or a loop.
 */
describe('REST client: bad input is refused before sending', () => {
  let server: RunningServer;
  let client: SoundClone;

  beforeAll(async () => {
    server = await startTestServer();
    client = clientFor(server);
  });
  afterAll(() => server.close());

  const fieldsOf = (error: unknown): string[] => {
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).code).toBe('VALIDATION_FAILED');
    return (error as ValidationError).violations.map((v) => v.field);
  };
  const construct = (options: unknown): unknown => {
    try {
      return new SoundClone(options as ConstructorParameters<typeof SoundClone>[0]);
    } catch (error) {
      return error;
    }
  };

  it('refuses constructor options that could never work, naming each', () => {
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: server.url, apiKey: 'x', timeout: 5 }))).toEqual(['apiKey', 'timeout']);
    expect(fieldsOf(construct({ accessKey: 'key\nInjected: 1', baseUrl: server.url }))).toEqual(['accessKey']);
    expect(fieldsOf(construct({ accessKey: 'schlüssel', baseUrl: server.url }))).toEqual(['accessKey']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: `${server.url}/?region=eu` }))).toEqual(['baseUrl']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: `${server.url}#x` }))).toEqual(['baseUrl']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: server.url.replace('http://', 'http://user:pw@') }))).toEqual(['baseUrl']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: `${server.url}/sound_clone/api/v1/` }))).toEqual(['baseUrl']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: server.url, retryDelay: { base: 5 } }))).toEqual(['retryDelay.base']);
    expect(fieldsOf(construct({ accessKey: KEY_A, baseUrl: server.url, fetch: 'fetch' }))).toEqual(['fetch']);
    expect(fieldsOf(construct(null))).toEqual(['accessKey', 'baseUrl']);
  });

  it('checks per-call options on every call: NaN retries would never stop, NaN timeouts would never fire', async () => {
    server.faults.inject({ method: 'GET', path: '/user/info', times: 5, action: { kind: 'status', status: 503, retryAfterSec: 0 } });
    const from = server.requests.length;
    const bad = [
      { maxRetries: Number.NaN },
      { maxRetries: 1.5 },
      { timeoutMs: Number.NaN },
      { timeoutMs: -1 },
      { timeoutMs: '5000' },
      { signal: {} },
    ];
    for (const call of bad) {
      const error = await rejectionOf(client.user.info(call as never));
      expect(fieldsOf(error)).toEqual([Object.keys(call)[0]]);
    }
    expect(requestsTo(server, 'GET', '/user/info', from)).toEqual([]);
    server.faults.clear();
  });

  it('a logger that throws never turns a retried call into a failure', async () => {
    server.faults.inject({ method: 'GET', path: '/user/info', times: 1, action: { kind: 'status', status: 503, retryAfterSec: 0 } });
    let called = 0;
    const logged = clientFor(server, { logger: { debug: () => { called += 1; throw new Error('log sink down'); } } });
    expect((await logged.user.info()).plan).toBeTypeOf('string');
    expect(called).toBe(1);
    server.faults.clear();
  });

  it('refuses params that are not objects instead of throwing a TypeError', async () => {
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.create(null as never)))).toEqual(['params']);
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.create(undefined as never)))).toEqual(['params']);
    expect(fieldsOf(await rejectionOf(client.stt.realtime.create('title' as never)))).toEqual(['params']);
    expect(fieldsOf(await rejectionOf(client.voices.create(null as never)))).toEqual(['params']);
    expect(() => client.stt.transcriptions.list(null as never)).toThrow(ValidationError);
    expect(() => client.tts.list([] as never)).toThrow(ValidationError);
  });

  it('never deletes the characters of a single string id as covers', async () => {
    const from = server.requests.length;
    expect(fieldsOf(await rejectionOf(client.covers.delete('cov_1' as never)))).toEqual(['ids']);
    expect(fieldsOf(await rejectionOf(client.covers.delete(5 as never)))).toEqual(['ids']);
    expect(requestsTo(server, 'DELETE', '/cover', from)).toEqual([]);
  });

  it('refuses wait() and watch() options that would poll in a tight loop or never time out', async () => {
    const from = server.requests.length;
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.wait('tr_x', { pollIntervalMs: Number.NaN })))).toEqual(['pollIntervalMs']);
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.wait('tr_x', { pollIntervalMs: 0 })))).toEqual(['pollIntervalMs']);
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.wait('tr_x', { timeoutMs: Number.NaN })))).toEqual(['timeoutMs']);
    expect(fieldsOf(await rejectionOf(client.stt.transcriptions.wait('tr_x', { requestTimeoutMs: -5 })))).toEqual(['requestTimeoutMs']);
    expect(() => client.stt.transcriptions.watch('tr_x', { maxPollIntervalMs: -1 })).toThrow(ValidationError);
    expect(requestsTo(server, 'GET', /\/stt\/transcriptions\//, from)).toEqual([]);
  });

  it('refuses an upload contentType a header cannot carry or that is not a string, before reading anything', async () => {
    const from = server.requests.length;
    expect(fieldsOf(await rejectionOf(client.uploads.create(wav(), { contentType: 'audio/wav\r\nX-Evil: 1' })))).toEqual(['contentType']);
    expect(fieldsOf(await rejectionOf(client.uploads.create(wav(), { contentType: 5 as never })))).toEqual(['contentType']);
    expect(fieldsOf(await rejectionOf(client.uploads.create(wav(), { filename: '' })))).toEqual(['filename']);
    expect(requestsTo(server, 'POST', '/uploads', from)).toEqual([]);
  });

  it('checks socketUrl and signal before creating a realtime session, so none is left holding a slot', async () => {
    const from = server.requests.length;
    for (const params of [{ socketUrl: 'http://127.0.0.1:1/socket' }, { socketUrl: 'not a url' }, { socketUrl: 'ws://h/socket?x=1' }, { signal: {} }]) {
      const error = await rejectionOf(client.stt.realtime.connect(params as never));
      expect(fieldsOf(error)).toEqual([Object.keys(params)[0]]);
    }
    expect(fieldsOf(await rejectionOf(client.stt.realtime.attach({ sessionId: 'rs_x', token: 't', baseUrl: 'ftp://x' })))).toEqual(['baseUrl']);
    expect(requestsTo(server, 'POST', '/stt/realtime/sessions', from)).toEqual([]);
  });

  it('refuses "." and ".." as ids: a URL parser collapses them even percent-encoded, so the call would reach another path', async () => {
    const from = server.requests.length;
    const calls: Array<[string, () => Promise<unknown>]> = [
      ['transcriptions.get', () => client.stt.transcriptions.get('..')],
      ['realtime.get', () => client.stt.realtime.get('.')],
      ['realtime.finish', () => client.stt.realtime.finish('..', 0)],
      ['realtime.pause', () => client.stt.realtime.pause('..', 0)],
      ['realtime.socketToken', () => client.stt.realtime.socketToken('..')],
      ['uploads.delete', () => client.uploads.delete('..')],
      ['downloads.get', () => client.downloads.get('..', 'txt')],
    ];
    for (const [name, call] of calls) {
      const error = await rejectionOf(call());
      expect({ name, code: (error as { code?: unknown }).code }).toEqual({ name, code: 'VALIDATION_FAILED' });
    }
    expect(server.requests.slice(from)).toEqual([]);
  });

  it('uploads PCM16 given as an Int16Array (its bytes), and refuses what is not bytes', async () => {
    const pcm = new Int16Array(16_000).map((_, i) => Math.round(8000 * Math.sin(i / 6)));
    const upload = await client.uploads.create(pcm, { contentType: 'audio/L16' });
    expect(upload.sizeBytes).toBe(32_000n);
    expect(upload.media.durationMs).toBe(1000n);
    expect(fieldsOf(await rejectionOf(client.uploads.create({ length: 3 } as never)))).toEqual(['source']);
  });

  it('tells a single voice file given instead of a list, and a named file without a name, apart from "no file"', async () => {
    const single = await rejectionOf(client.voices.create({ name: 'Solo', files: wav() as never }));
    expect((single as ValidationError).violations).toEqual([{ field: 'files', rule: 'must be an array of files (paths, bytes, Blobs or Files)' }]);
    const unnamed = await rejectionOf(client.voices.create({ name: 'Solo', files: [{ data: wav(), filename: 5 as never }] }));
    expect(fieldsOf(unnamed)).toEqual(['files[0].filename']);
  });

  it("connect() refuses the session's own bad options before the session is created on the server", async () => {
    const from = server.requests.length;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ sampleRate: 44 }, 'DSP_UNSUPPORTED_RATE'],
      [{ channels: 0 }, 'DSP_INVALID_OPTION'],
      [{ bufferMs: Number.NaN }, 'DSP_INVALID_OPTION'],
      [{ stableWindowMs: -1 }, 'VALIDATION_FAILED'],
    ];
    for (const [options, code] of cases) {
      const error = await rejectionOf(client.stt.realtime.connect(options as never));
      expect({ options, code: (error as { code?: unknown }).code }).toEqual({ options, code });
    }
    expect(requestsTo(server, 'POST', '/stt/realtime/sessions', from)).toEqual([]);
  });

  it("connect() with the session's signal already aborted is REALTIME_ABORTED, and creates nothing", async () => {
    const from = server.requests.length;
    const error = await rejectionOf(client.stt.realtime.connect({ signal: AbortSignal.abort(new Error('user left')) }));
    expect(error).toMatchObject({ name: 'RealtimeError', code: 'REALTIME_ABORTED' });
    expect(requestsTo(server, 'POST', '/stt/realtime/sessions', from)).toEqual([]);
  });
});

/**
 * Redirects: fetch follows them by default and forwards every header but Authorization to the new
 * origin, so the accessKey would reach whatever host a Location names, and a 307 would replay a create
 * there. The client answers a redirect as an error instead and sends nothing on.
 */
describe('REST client: redirects are not followed', () => {
  let origin: Server;
  let elsewhere: Server;
  const seenElsewhere: Array<{ method: string | undefined; accessKey: string | string[] | undefined }> = [];
  let status = 302;

  const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server> => {
    const s = createServer(handler);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return s;
  };
  const urlOf = (s: Server): string => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;

  beforeAll(async () => {
    elsewhere = await listen((req, res) => {
      seenElsewhere.push({ method: req.method, accessKey: req.headers['accesskey'] });
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{"code":1,"message":"ok","data":{}}');
    });
    origin = await listen((req, res) => {
      req.resume();
      res.writeHead(status, { Location: `${urlOf(elsewhere)}/collect?from=redirect` }).end();
    });
  });
  afterAll(async () => {
    await new Promise((resolve) => origin.close(resolve));
    await new Promise((resolve) => elsewhere.close(resolve));
  });

  it.each([301, 302, 303, 307, 308])('answers %i as ApiError HTTP_<status> naming the target, and the key goes nowhere else', async (code) => {
    status = code;
    seenElsewhere.length = 0;
    const client = new SoundClone({ accessKey: 'sk-secret', baseUrl: urlOf(origin), retryDelay: { baseMs: 1, maxMs: 2 } });
    const read = await rejectionOf(client.user.info());
    const create = await rejectionOf(client.stt.transcriptions.create({ uploadId: 'up_1' }));
    for (const error of [read, create]) {
      expect(error).toBeInstanceOf(ApiError);
      expect(error).toMatchObject({ code: `HTTP_${code}`, status: code });
      expect((error as ApiError).message).toContain(`${urlOf(elsewhere)}/collect`);
      expect((error as ApiError).message).not.toContain('from=redirect');
    }
    expect(seenElsewhere).toEqual([]);
  });
});
