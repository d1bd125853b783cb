import { SoundClone, type RealtimeSocketSession } from '@soundclone/core';
import { startServer, type RunningServer } from '@soundclone/server';
import { attachSession, type BrowserSessionGrant } from '@soundclone/web-audio';

/**
 * The reference server for the page-side tests in Node: one access key, each session's realtime
 * audio kept for reading back, and sessions reserved with the key (as an app's backend does) and
 * attached with the token alone (as a page does).
 */
export interface SessionServer {
  readonly server: RunningServer;
  readonly key: string;
  /** A session reserved with the key, as the backend hands it to a page. */
  grant(): Promise<BrowserSessionGrant>;
  /** A reserved session, attached as a page attaches it. */
  session(): Promise<RealtimeSocketSession>;
  /** The PCM16 the server stored for a session (its test-only audio read). */
  storedAudio(sessionId: string): Promise<Int16Array>;
  close(): Promise<void>;
}

/** Starts the server with `key`, keeping `keepSeconds` of each session's audio; sessions get `title`. */
export async function startSessionServer(key: string, keepSeconds: number, title: string): Promise<SessionServer> {
  const server = await startServer({ port: 0, host: '127.0.0.1', accessKeys: [key], retainRealtimeAudioSamples: 16_000 * keepSeconds });
  const client = new SoundClone({ accessKey: key, baseUrl: server.url });
  const grant = async (): Promise<BrowserSessionGrant> => {
    const created = await client.stt.realtime.create({ title });
    return { sessionId: created.sessionId, token: created.socket.token, socketUrl: created.socket.url };
  };
  return {
    server,
    key,
    grant,
    session: async () => attachSession(await grant()),
    storedAudio: async (sessionId) => {
      const r = await fetch(`${server.url}/sound_clone/api/v1/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: key } });
      return new Int16Array(await r.arrayBuffer());
    },
    close: () => server.close(),
  };
}
