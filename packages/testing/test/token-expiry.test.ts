import { afterEach, describe, expect, it } from 'vitest';
import { isSoundCloneError, RealtimeError, type RealtimeSocketSession } from '@soundclone/core';
import { scriptAudio, startTestServer, type SpeechScript, type TestServer } from '@soundclone/testing';

const SCRIPT: SpeechScript = [
  { at: '0.3s', say: 'first line here' },
  { at: '1.8s', say: 'second line follows' },
];
const PCM = scriptAudio(SCRIPT);

async function stream(session: RealtimeSocketSession, pcm: Int16Array): Promise<void> {
  for (let at = 0, n = 0; at < pcm.length; at += 320, n++) {
    session.writePcm16(pcm.subarray(at, at + 320));
    if (n % 10 === 9) await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/**
 * The browser flow: a backend (holding the key) creates the session, the page attaches with its socket
 * token only. The token expires at a sample position and the link is cut there, so the SDK's next
 * socket meets the expiry.
 */
describe('fault step: expireToken', () => {
  let server: TestServer;
  afterEach(() => server.close());

  it("with a credentials provider the SDK asks the page's backend for a fresh token and the session completes", async () => {
    server = await startTestServer({ script: SCRIPT });
    const backend = server.client();
    const created = await backend.stt.realtime.create({});
    const handedOut: string[] = [];
    const credentials = async (): Promise<{ token: string }> => {
      const fresh = await backend.stt.realtime.socketToken(created.sessionId);
      handedOut.push(fresh.token);
      return { token: fresh.token };
    };
    const session = await server.client().stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token, credentials });
    const run = server.playFaults([{ at: '1s', do: 'expireToken' }, { at: '1s', do: 'cut' }], { session });
    await stream(session, PCM);
    const result = await session.finish();
    expect(run.fired.map((f) => f.do)).toEqual(['expireToken', 'cut']);
    expect(handedOut.length).toBeGreaterThanOrEqual(1);
    expect(handedOut).not.toContain(created.socket.token);
    expect(result.session.status).toBe('COMPLETED');
    expect(result.lines.map((l) => l.text)).toEqual(SCRIPT.map((l) => l.say));
    expect(await server.storedAudio(session)).toEqual(PCM);
    // The backend's token requests are in the log, the tokens redacted.
    const refreshes = server.requests.filter((r) => r.path.endsWith('/socket-token'));
    expect(refreshes.length).toBe(handedOut.length);
    expect(JSON.stringify(server.requests)).not.toMatch(/rtt_/);
    // The fresh token connected at once: no upgrade of this session was refused.
    expect(server.sockets.filter((e) => e.kind === 'refused')).toEqual([]);
  });

  it('a page that hands back the token it was given is refused (401) until the SDK gives up', async () => {
    server = await startTestServer({ script: SCRIPT });
    const created = await server.client().stt.realtime.create({});
    let asked = 0;
    const credentials = async (): Promise<{ token: string }> => {
      asked += 1;
      return { token: created.socket.token };
    };
    const session = await server.client().stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token, credentials });
    server.playFaults([{ at: '1s', do: 'expireToken' }, { at: '1s', do: 'cut' }], { session });
    const failed = new Promise<void>((resolve) => session.on('state', (c) => c.to === 'failed' && resolve()));
    await stream(session, PCM.subarray(0, 16_000 * 1.5));
    await failed;
    const error = await session.finish().then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
    // The SDK asked the provider before each attempt; the service refused every one of them (401).
    const refused = server.sockets.filter((e) => e.kind === 'refused' && e.sessionId === session.sessionId);
    expect(refused.length).toBeGreaterThanOrEqual(3);
    expect(refused.every((e) => e.detail?.['status'] === 401 && e.detail['errorCode'] === 'UNAUTHORIZED')).toBe(true);
    expect(asked).toBe(refused.length);
  });

  it('without a provider the expired token ends the session with REALTIME_SOCKET_REFUSED', async () => {
    server = await startTestServer({ script: SCRIPT });
    const created = await server.client().stt.realtime.create({});
    const session = await server.client().stt.realtime.attach({ sessionId: created.sessionId, token: created.socket.token });
    const run = server.playFaults([{ at: '1s', do: 'expireToken' }, { at: '1s', do: 'cut' }], { session });
    const failed = new Promise<void>((resolve) => session.on('state', (c) => c.to === 'failed' && resolve()));
    await stream(session, PCM.subarray(0, 16_000 * 1.5));
    await failed;
    expect(run.fired.map((f) => f.do)).toEqual(['expireToken', 'cut']);
    const error = await session.finish().then(() => undefined, (e: unknown) => e);
    expect(isSoundCloneError(error, RealtimeError) && error.code).toBe('REALTIME_SOCKET_REFUSED');
  });
});
