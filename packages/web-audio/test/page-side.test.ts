import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RealtimeSocketSession } from '@soundclone/core';
import { attachSession, isWebAudioError, openMicrophone, startCapture, WebAudioError } from '@soundclone/web-audio';
import { LevelMeter, type AudioLevel } from '../src/capture/level-meter.ts';
import { SessionWriter } from '../src/capture/session-writer.ts';
import { encodeStream } from '../../../test/realtime/offline-encode.ts';
import { startSessionServer, type SessionServer } from './support/session-server.ts';

/**
 * The page-side parts that run in Node as they are: token attach, the capture's writer into a real
 * session on the reference server (the session resamples at the context's rate, segments flushed exactly), the level meter, and startCapture's typed errors.
 * The browser-only parts are tested in real Chromium (test/browser).
 */
let reference: SessionServer;
beforeAll(async () => void (reference = await startSessionServer('key-web-audio', 60, 'web-audio test')));
afterAll(async () => reference?.close());
const grant = () => reference.grant();

function tone(rate: number, seconds: number, hz: number, amplitude: number): Float32Array {
  return Float32Array.from({ length: Math.round(rate * seconds) }, (_, i) => amplitude * Math.sin((2 * Math.PI * hz * i) / rate));
}

describe('attachSession (token only, as a page)', () => {
  it('attaches with the grant alone (no key anywhere in the call) and reaches streaming', async () => {
    const g = await grant();
    const session = await attachSession(g);
    try {
      expect(session.state).toBe('streaming');
      expect(session.sessionId).toBe(g.sessionId);
      expect(reference.server.sockets.log.some((e) => e.sessionId === g.sessionId && e.kind === 'connected')).toBe(true);
    } finally {
      session.close();
    }
  });

  it('refuses a grant without a token, or with an http URL, with one typed error listing both', async () => {
    const bad = { sessionId: 'rs_1', token: '', socketUrl: 'http://127.0.0.1:1/x' };
    const caught = await attachSession(bad).catch((e: unknown) => e);
    expect(isWebAudioError(caught)).toBe(true);
    expect(caught).toMatchObject({ code: 'WEB_AUDIO_INVALID_OPTION' });
    expect((caught as Error).message).toContain('token is required');
  });

  it('a forged token is refused by the server (the socket never opens)', async () => {
    const g = await grant();
    const caught = await attachSession({ ...g, token: `${g.token}x` }, { connectTimeoutMs: 2000 }).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(Error);
    expect((caught as { code?: string }).code).toMatch(/^REALTIME_/);
  });
});

describe('SessionWriter (Float32 at the context rate into a real session, which resamples it itself)', () => {
  it('sends each segment resampled on its own, tail flushed at the cut; the server stores exactly that', async () => {
    const session: RealtimeSocketSession = await attachSession(await grant()); // its sampleRate option: the default 16 kHz
    const rate = 48_000;
    const writer = new SessionWriter(rate, session);
    const a = tone(rate, 0.73, 440, 0.4);
    const b = tone(rate, 0.51, 300, 0.3);
    for (let at = 0; at < a.length; at += 1024) writer.push(a.subarray(at, at + 1024));
    writer.endSegment(); // mute or pause
    writer.endSegment(); // twice is once
    expect(session.markDiscontinuity()).toBe(0); // and the session's own break with nothing written since is nothing
    for (let at = 0; at < b.length; at += 1000) writer.push(b.subarray(at, at + 1000));
    writer.endSegment();
    const expected = new Int16Array([...encodeStream(a, rate), ...encodeStream(b, rate)]);
    expect(writer.framesIn).toBe(a.length + b.length);
    expect(writer.sentSamples).toBe(expected.length);
    expect(writer.refusedFrames).toBe(0);
    const finished = await session.finish();
    expect(String(finished.session.usage.receivedSamples)).toBe(String(expected.length));
    const stored = await reference.storedAudio(session.sessionId);
    expect(Buffer.from(stored.buffer).equals(Buffer.from(expected.buffer))).toBe(true);
    // After the session ended it takes nothing: refused, counted, not lost silently.
    writer.push(a.subarray(0, 4800));
    writer.endSegment();
    expect(writer.refusedFrames).toBe(4800);
    expect(writer.sentSamples).toBe(expected.length);
  });

  it('declares the context rate to the session before audio; a session that already took audio in another format is refused', async () => {
    const session: RealtimeSocketSession = await attachSession(await grant());
    try {
      new SessionWriter(44_100, session, 'js');
      expect(session.stats.resamplerKernel).toBe('js');
      new SessionWriter(44_100, session, 'js'); // the same format again: a second capture on the session
      session.write(new Float32Array(441));
      const caught = (() => {
        try {
          new SessionWriter(48_000, session);
        } catch (e) {
          return e;
        }
      })();
      expect(caught).toMatchObject({ name: 'WebAudioError', code: 'WEB_AUDIO_INVALID_OPTION', cause: { code: 'REALTIME_INVALID_STATE' } });
    } finally {
      session.close();
    }
  });
});

describe('LevelMeter', () => {
  it('reports rms, peak and dBFS once per window', () => {
    const levels: AudioLevel[] = [];
    const meter = new LevelMeter(48_000, 50, (l) => levels.push(l));
    const x = tone(48_000, 0.2, 1000, 0.5);
    meter.add(x.subarray(0, 1000));
    meter.add(x.subarray(1000));
    meter.add(new Float32Array(2400));
    expect(levels).toHaveLength(5);
    for (const l of levels.slice(0, 4)) {
      expect(l.rms).toBeCloseTo(0.5 / Math.SQRT2, 3);
      expect(l.peak).toBeCloseTo(0.5, 3);
      expect(l.dbfs).toBeCloseTo(-9.03, 1);
    }
    expect(levels[4]).toEqual({ rms: 0, peak: 0, dbfs: Number.NEGATIVE_INFINITY });
  });
});

describe('startCapture outside a browser', () => {
  it('refuses bad options with one typed error listing every problem', async () => {
    const caught = await startCapture({ stream: {} as MediaStream, deviceId: 'x', ringMs: 5 } as never).catch((e: unknown) => e);
    expect(caught).toBeInstanceOf(WebAudioError);
    expect(caught).toMatchObject({ code: 'WEB_AUDIO_INVALID_OPTION' });
    for (const part of ['session is required', 'not both', 'ringMs']) expect((caught as Error).message).toContain(part);
  });

  it('says AudioWorklet is missing where there is none', async () => {
    const session = { write: () => 0, setInputFormat: () => undefined } as never;
    await expect(startCapture({ session })).rejects.toMatchObject({ name: 'WebAudioError', code: 'WEB_AUDIO_UNSUPPORTED' });
  });
});

describe('openMicrophone', () => {
  const devices = (answer: (constraints: MediaStreamConstraints) => Promise<MediaStream>) => {
    const asked: MediaStreamConstraints[] = [];
    return { asked, mediaDevices: { getUserMedia: (c?: MediaStreamConstraints) => (asked.push(c ?? {}), answer(c ?? {})) } };
  };

  it("asks with startCapture's constraints (processing off, an exact device) and returns the stream", async () => {
    const stream = {} as MediaStream;
    const d = devices(async () => stream);
    expect(await openMicrophone({ deviceId: 'mic-2', audio: { echoCancellation: true }, mediaDevices: d.mediaDevices })).toBe(stream);
    expect(d.asked).toEqual([{ audio: { echoCancellation: true, noiseSuppression: false, autoGainControl: false, deviceId: { exact: 'mic-2' } } }]);
  });

  it("turns getUserMedia's refusals into typed errors, the original as cause", async () => {
    const refuse = (name: string) => devices(async () => Promise.reject(Object.assign(new Error(`${name} says no`), { name }))).mediaDevices;
    for (const [name, code] of [['NotAllowedError', 'WEB_AUDIO_PERMISSION_DENIED'], ['SecurityError', 'WEB_AUDIO_PERMISSION_DENIED'], ['NotFoundError', 'WEB_AUDIO_DEVICE_NOT_FOUND'], ['NotReadableError', 'WEB_AUDIO_UNSUPPORTED']] as const) {
      const caught = await openMicrophone({ mediaDevices: refuse(name) }).catch((e: unknown) => e);
      expect(caught).toMatchObject({ name: 'WebAudioError', code });
      expect((caught as Error).cause).toMatchObject({ name });
    }
    await expect(openMicrophone({ deviceId: '' })).rejects.toMatchObject({ code: 'WEB_AUDIO_INVALID_OPTION' });
  });
});
