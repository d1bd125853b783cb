import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import * as wire from '@soundclone/core/internal';
import { CLOSE_CODES, ERROR_STATUS, FRAME, SOCKET_DEFAULTS, SOCKET_ERRORS, decodeFrameHeader, encodeFrameHeader } from '@soundclone/core/internal';
import { KEY_A, serverForSuite } from './support/server.js';
import { connect, createSession, open, reconnect, socketUrl, speech } from './realtime/support.js';

/**
 * The wire protocol is written once, in core (packages/core/src/protocol.ts); the reference service
 * imports it and declares only its own decisions. These checks fail when a wire name is declared on the
 * server side again, and when what the running server puts on the wire is not what core describes.
 */

const coreProtocol = fileURLToPath(new URL('../../core/src/protocol.ts', import.meta.url));
const serverSrc = fileURLToPath(new URL('../src/', import.meta.url));

/** Names a TypeScript file exports by declaration: `export const|let|function|class|type|interface|enum NAME`. */
function declaredExports(path: string): string[] {
  const source = readFileSync(path, 'utf8');
  return [...source.matchAll(/^export\s+(?:declare\s+)?(?:async\s+)?(?:const|let|var|function\*?|class|type|interface|enum)\s+([A-Za-z_$][\w$]*)/gm)].map((m) => m[1] as string);
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.ts') && !e.name.endsWith('.d.ts'))
    .map((e) => `${e.parentPath}/${e.name}`);
}

describe('one wire protocol', () => {
  it('finds the wire names where it looks (the parser is not blind)', () => {
    const names = declaredExports(coreProtocol);
    for (const name of ['FRAME', 'CLOSE_CODES', 'SOCKET_DEFAULTS', 'ERROR_STATUS', 'encodeFrameHeader', 'FrameHeader', 'ServerMessageType']) {
      expect(names).toContain(name);
    }
    expect(declaredExports(`${serverSrc}protocol.ts`)).toContain('ID_PREFIXES');
  });

  it('declares no name of core protocol module anywhere in the server sources', () => {
    const wireNames = new Set(declaredExports(coreProtocol));
    const redeclared: string[] = [];
    for (const file of tsFiles(serverSrc)) {
      for (const name of declaredExports(file)) if (wireNames.has(name)) redeclared.push(`${file.slice(serverSrc.length)}: ${name}`);
    }
    expect(redeclared).toEqual([]);
  });

  it('the server protocol module restates no wire value under another name', () => {
    // A copy under a new name (say a second table of close codes) is the same drift with a new label.
    const server = readFileSync(`${serverSrc}protocol.ts`, 'utf8');
    for (const literal of ['0x53', '4409', "'SoundClone-Signature'", "'/sound_clone/api/v1'", "'session.ready'", "'BAD_FRAME'", '16_000']) {
      expect(server, literal).not.toContain(literal);
    }
  });

  it('core/internal is the protocol module (nothing restated on the way)', () => {
    expect(wire.FRAME).toBe(FRAME);
    expect(wire.LIMITS.titleMaxChars).toBe(256);
    expect(Object.keys(wire)).toEqual(expect.arrayContaining(['API_PREFIX', 'HEADERS', 'PATHS', 'CLOSE_CODES', 'encodeFrameHeader', 'decodeFrameHeader']));
  });
});

describe('the running server speaks core protocol', () => {
  const server = serverForSuite();

  it('announces core socket defaults in session.ready and acks frames encoded by core codec', async () => {
    const { peer, ready } = await connect(server);
    expect(ready).toMatchObject({
      heartbeatIntervalMs: SOCKET_DEFAULTS.heartbeatIntervalMs,
      heartbeatTimeoutMs: SOCKET_DEFAULTS.heartbeatTimeoutMs,
      maxFrameSamples: SOCKET_DEFAULTS.maxFrameSamples,
      epoch: wire.REALTIME.firstEpoch,
    });
    const samples = speech(1).subarray(0, 320);
    const bytes = new Uint8Array(FRAME.headerBytes + samples.length * FRAME.bytesPerSample);
    const view = new DataView(bytes.buffer);
    encodeFrameHeader(view, 0, ready.epoch, 0);
    for (let i = 0; i < samples.length; i++) view.setInt16(FRAME.headerBytes + i * 2, samples[i] as number, true);
    expect(decodeFrameHeader(view, 0, bytes.byteLength)).toEqual({ ok: true, epoch: ready.epoch, startSample: 0, sampleCount: 320 });
    peer.ws.send(bytes);
    await peer.acked(320);
    bytes[2] = FRAME.version + 1;
    peer.ws.send(bytes);
    const refused = await peer.waitFor('error', (m) => m.code === 'BAD_FRAME');
    expect(SOCKET_ERRORS).toContain(refused.code);
    const decoded = decodeFrameHeader(view, 0, bytes.byteLength);
    expect(decoded).toEqual({ ok: false, reason: 'BAD_VERSION' });
    expect(refused.details.reason).toBe(decoded.ok ? undefined : decoded.reason);
    await peer.close();
  });

  it('closes with core close codes', async () => {
    const created = await createSession(server);
    const first = await reconnect(server, created.sessionId);
    await reconnect(server, created.sessionId);
    expect((await first.peer.closed).code).toBe(CLOSE_CODES.REPLACED);
    const missing = await open(socketUrl(server, { sessionId: 'rs_missing' }), { accessKey: KEY_A });
    expect(await missing.waitFor('error')).toMatchObject({ code: 'SESSION_NOT_FOUND', fatal: true });
    expect((await missing.closed).code).toBe(CLOSE_CODES.SESSION_NOT_FOUND);
  });

  it('answers failures with core statuses for their error codes', async () => {
    const r = await server.call('GET', '/stt/transcriptions/tr_missing');
    expect(r.body.errorCode).toBe('NOT_FOUND');
    expect(r.status).toBe(ERROR_STATUS.NOT_FOUND);
    const unauthorized = await server.call('GET', '/user/info', { key: 'no-such-key' });
    expect(unauthorized.status).toBe(ERROR_STATUS[unauthorized.body.errorCode as keyof typeof ERROR_STATUS]);
    expect(unauthorized.body.errorCode).toBe('UNAUTHORIZED');
  });
});
