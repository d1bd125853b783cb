import { createRequire } from 'node:module';
import type { RunningServer } from '@soundclone/server';
import { SoundClone, ValidationError, isSoundCloneError, type WebSocketConstructor } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY, speech, startRealtimeServer, storedAudio } from './support.js';

// `ws` as the server package has it: the implementation the SDK itself picks in Node.
const NodeWebSocket = createRequire(new URL('../../packages/server/package.json', import.meta.url))('ws') as WebSocketConstructor;

/** `ws`, counting the sockets it opens; `zeroMask` sends unmasked frames (a zero masking key, as ws allows). */
function countingWebSocket(zeroMask = false): { ctor: WebSocketConstructor; opened: () => number } {
  let opened = 0;
  const Base = NodeWebSocket as unknown as new (url: string, protocols?: string | string[], options?: object) => object;
  class Counting extends Base {
    constructor(url: string, protocols?: string | string[], options?: { headers?: Record<string, string> }) {
      super(url, protocols, zeroMask ? { ...options, generateMask: (mask: Buffer) => mask.fill(0) } : options);
      opened++;
    }
  }
  return { ctor: Counting as unknown as WebSocketConstructor, opened: () => opened };
}

describe("the client's WebSocket", () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it('is the one its sessions use (connect and attach), unless a session names its own', async () => {
    const clientWide = countingWebSocket(true);
    const client = new SoundClone({ accessKey: KEY, baseUrl: server.url, WebSocket: clientWide.ctor });
    const pcm = speech(1);
    const session = await client.stt.realtime.connect();
    expect(clientWide.opened()).toBe(1);
    session.writePcm16(pcm);
    await session.finish();
    // Unmasked frames reach the service whole: every sample stored as sent.
    expect(Array.from(await storedAudio(server, session.sessionId))).toEqual(Array.from(pcm));

    const created = await client.stt.realtime.create({});
    const attached = await client.stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token });
    expect(clientWide.opened()).toBe(2);
    await attached.finish();

    const own = countingWebSocket();
    const named = await client.stt.realtime.connect({ WebSocket: own.ctor });
    expect([clientWide.opened(), own.opened()]).toEqual([2, 1]);
    await named.finish();
  });

  it('must be a constructor: anything else is a ValidationError naming the field', () => {
    let caught: unknown;
    try {
      new SoundClone({ accessKey: KEY, baseUrl: server.url, WebSocket: 'ws' as unknown as WebSocketConstructor });
    } catch (error) {
      caught = error;
    }
    expect(isSoundCloneError(caught, ValidationError) && caught.violations.map((v) => v.field)).toEqual(['WebSocket']);
  });
});
