import { afterEach, describe, expect, it } from 'vitest';
import { SoundClone } from '@soundclone/core';
import { isReplayMismatchError, scriptAudio, startReplayServer, startTestServer, type Cassette, type ReplayServer, type SpeechScript, type TestServer } from '@soundclone/testing';

const SCRIPT: SpeechScript = [
  { at: '0.3s', say: 'recorded once' },
  { at: '1.5s', say: 'played back later' },
];

/** The app under test: a realtime session with a title, the script's audio, the lines it got. */
async function app(client: SoundClone, options: { title?: string; seed?: number } = {}): Promise<string[]> {
  const session = await client.stt.realtime.connect({ title: options.title ?? 'meeting' });
  const pcm = scriptAudio(SCRIPT, { seed: options.seed ?? 1 });
  for (let at = 0; at < pcm.length; at += 1_600) session.writePcm16(pcm.subarray(at, at + 1_600));
  const result = await session.finish();
  return result.lines.map((l) => l.text);
}

/** A client as the app would make one: its own key, short retry delays. */
const clientFor = (baseUrl: string, accessKey = 'sk_app_key'): SoundClone => new SoundClone({ accessKey, baseUrl, retryDelay: { baseMs: 20, maxMs: 200 } });

describe('record and replay', () => {
  let server: TestServer | undefined;
  let replay: ReplayServer | undefined;
  afterEach(async () => {
    await replay?.close();
    await server?.close();
    replay = undefined;
    server = undefined;
  });

  async function record(): Promise<Cassette> {
    server = await startTestServer({ script: SCRIPT });
    const recording = await server.record();
    expect(await app(clientFor(recording.url, server.accessKey))).toEqual(SCRIPT.map((l) => l.say));
    const cassette = recording.cassette();
    await recording.close();
    return cassette;
  }

  it('records a session (REST and socket frames, secrets redacted) and replays it to the same app', async () => {
    const cassette = await record();
    const text = JSON.stringify(cassette);
    expect(text).not.toContain(server?.accessKey);
    expect(text).not.toMatch(/rtt_[A-Za-z0-9]/);
    expect(text).not.toMatch(/127\.0\.0\.1:\d+/);
    expect(cassette.entries.map((e) => (e.kind === 'http' ? `${e.method} ${e.path}` : `socket ${e.path.split('?')[0]}`))).toEqual([
      'POST /sound_clone/api/v1/stt/realtime/sessions',
      'socket /sound_clone/api/v1/stt/realtime/socket',
    ]);
    const socket = cassette.entries[1];
    expect(socket?.kind === 'socket' && socket.frames.filter((f) => 'audio' in f).length).toBeGreaterThan(0);
    await server?.close();
    server = undefined;

    // The service is gone: the replay server alone answers, from the cassette (saved and loaded as JSON).
    replay = await startReplayServer(JSON.parse(text) as Cassette);
    expect(await app(clientFor(replay.url))).toEqual(SCRIPT.map((l) => l.say));
    expect(() => replay?.verify()).not.toThrow();
  });

  it('a changed request fails with ReplayMismatchError naming the expected and the received request', async () => {
    const cassette = await record();
    replay = await startReplayServer(cassette);
    await expect(app(clientFor(replay.url), { title: 'another title' })).rejects.toThrow();
    const mismatch = replay.mismatch;
    expect(isReplayMismatchError(mismatch)).toBe(true);
    expect(mismatch?.code).toBe('TESTING_REPLAY_MISMATCH');
    expect(mismatch?.at).toBe('entry 0');
    expect(mismatch?.expected).toContain('"title":"meeting"');
    expect(mismatch?.received).toContain('"title":"another title"');
    expect(() => replay?.verify()).toThrow(mismatch);
  });

  it('changed audio fails with ReplayMismatchError at the first frame that differs', async () => {
    const cassette = await record();
    replay = await startReplayServer(cassette);
    // Other noise under the same tones: every frame differs from the first.
    await expect(app(clientFor(replay.url), { seed: 2 })).rejects.toThrow();
    const mismatch = replay.mismatch;
    expect(isReplayMismatchError(mismatch)).toBe(true);
    expect(mismatch?.at).toMatch(/^entry 1 \(socket .*\), frame \d+$/);
    expect(mismatch?.expected).toMatch(/^client audio frame epoch 1 from sample 0, \d+ samples/);
    expect(mismatch?.received).toMatch(/^client audio frame epoch 1 from sample 0, \d+ samples/);
    expect(mismatch?.expected).not.toBe(mismatch?.received);
  });

  it('an app that stops early fails verify(): the cassette still holds what it never sent', async () => {
    const cassette = await record();
    replay = await startReplayServer(cassette);
    await clientFor(replay.url).stt.realtime.create({ title: 'meeting' });
    expect(() => replay?.verify()).toThrow(expect.objectContaining({ code: 'TESTING_REPLAY_MISMATCH', at: 'entry 1', received: 'nothing (the app stopped)' }));
  });
});
