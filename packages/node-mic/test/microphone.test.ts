import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import { listMicrophones, openMicrophone, transcribeLive, type AudioBlock, type AudioSource, type Microphone, type MicrophoneError } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, encodeOffline, indexOfSamples, sampleSamples, startRetainingServer, storedAudio, writeWav } from './support/audio.js';
import { recordingClients, requireTools, soxDrivers, startFakeMic, usePulse, type FakeMic } from './support/fake-mic.js';

/**
 * The system microphone, for real: a private PulseAudio daemon is the machine's audio server, and
 * paplay "speaks" a known WAV into it while the code under test captures the default source.
 */
describe('microphone capture from a fake PulseAudio microphone', () => {
  let mic: FakeMic;
  let server: RunningServer;
  let undo: () => void;
  let dir: string;
  let clip: Int16Array;
  let clipPath: string;

  beforeAll(async () => {
    mic = await startFakeMic({ rate: 16_000 });
    undo = usePulse(mic.env);
    server = await startRetainingServer();
    dir = mkdtempSync(join(tmpdir(), 'node-mic-'));
    // "he was not an ill disposed young man": the second sentence of the bundled sample, 2.99 s.
    clip = sampleSamples().slice(113_600, 113_600 + 47_840);
    clipPath = writeWav(join(dir, 'clip.wav'), clip, 16_000);
  });
  afterAll(async () => {
    await server?.close();
    undo?.();
    await mic?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  async function captureInto(open: () => Promise<Microphone>): Promise<{ stored: Int16Array; frames: number; received: bigint; captured: bigint; source: Microphone; lines: number; clients: string[] }> {
    const source = await open();
    const clients = recordingClients(mic);
    const live = await transcribeLive(clientFor(server), source);
    let lines = 0;
    live.lines$.subscribe(() => (lines += 1));
    await new Promise((r) => setTimeout(r, 300));
    await mic.play(clipPath);
    await new Promise((r) => setTimeout(r, 300));
    const result = await live.stop();
    return { stored: await storedAudio(server, live.session.sessionId), frames: live.frames, received: result.session.usage.receivedSamples, captured: result.session.usage.capturedSamples, source, lines, clients };
  }

  it('lists the fake microphone with both backends, PulseAudio reporting its native format', async () => {
    const pv = await listMicrophones({ backend: 'pvrecorder' });
    expect(pv.map((d) => d.name)).toContain('FakeMic');
    const pulse = await listMicrophones({ backend: 'parec' });
    const fake = pulse.find((d) => d.name === 'fakemic');
    expect(fake).toMatchObject({ sampleRate: 16_000, channels: 1, isDefault: true });
    requireTools('arecord');
    const alsa = await listMicrophones({ backend: 'arecord' });
    expect(alsa.filter((d) => d.isDefault).map((d) => d.name)).toEqual(['default']);
    expect(alsa.map((d) => d.name)).toContain('pulse');
  });

  it('pvrecorder (the native library): the server stores exactly what was captured, and it holds the played file bit for bit', async () => {
    const run = await captureInto(() => openMicrophone({ backend: 'pvrecorder', device: 'FakeMic' }));
    expect(run.source.label).toBe('FakeMic');
    expect(run.source.format).toEqual({ sampleRate: 16_000, channels: 1, encoding: 'pcm16' });
    expect(run.frames).toBeGreaterThan(clip.length);
    expect(run.frames % 320).toBe(0); // whole pvrecorder frames: stopped at a frame boundary
    expect(run.stored.length).toBe(run.frames);
    expect(run.received).toBe(BigInt(run.frames));
    expect(run.captured).toBe(BigInt(run.frames));
    const at = indexOfSamples(run.stored, clip);
    expect(at).toBeGreaterThan(0); // after the pre-roll silence
    expect(run.lines).toBeGreaterThan(0);
  });

  it('parec fallback at the device rate (16 kHz): bit for bit, exact counts', async () => {
    const run = await captureInto(() => openMicrophone({ backend: 'parec' }));
    expect(run.source.label).toBe('fakemic');
    expect(run.stored.length).toBe(run.frames);
    expect(run.received).toBe(BigInt(run.frames));
    expect(indexOfSamples(run.stored, clip)).toBeGreaterThan(0);
  });

  it('arecord fallback through ALSA\'s default device (the pulse plugin) at 16 kHz: bit for bit, exact counts', async () => {
    requireTools('arecord');
    const run = await captureInto(() => openMicrophone({ backend: 'arecord', sampleRate: 16_000 }));
    expect(run.source.label).toBe('default');
    expect(run.source.format).toEqual({ sampleRate: 16_000, channels: 1, encoding: 'pcm16' });
    expect(run.clients).toContain('ALSA plug-in [aplay]'); // arecord is aplay: it really went ALSA -> pulse
    expect(run.frames).toBeGreaterThan(clip.length);
    expect(run.stored.length).toBe(run.frames);
    expect(run.received).toBe(BigInt(run.frames));
    expect(run.captured).toBe(BigInt(run.frames));
    expect(indexOfSamples(run.stored, clip)).toBeGreaterThan(0);
  });

  it('sox fallback with its PulseAudio driver (libsox-fmt-pulse) at 16 kHz: bit for bit, exact counts', async () => {
    if (!soxDrivers().includes('pulseaudio')) throw new Error('this test needs sox\'s pulseaudio driver (Debian: libsox-fmt-pulse); run npm run setup');
    const run = await captureInto(() => openMicrophone({ backend: 'sox', sampleRate: 16_000 }));
    expect(run.source.format).toEqual({ sampleRate: 16_000, channels: 1, encoding: 'pcm16' });
    expect(run.clients).toContain('SoX');
    expect(run.stored.length).toBe(run.frames);
    expect(run.received).toBe(BigInt(run.frames));
    expect(indexOfSamples(run.stored, clip)).toBeGreaterThan(0);
  });

  it('sox fallback with its ALSA driver (what sox uses without libsox-fmt-pulse): bit for bit, exact counts', async () => {
    const restore = usePulse({ ...mic.env, AUDIODRIVER: 'alsa' });
    try {
      const run = await captureInto(() => openMicrophone({ backend: 'sox', sampleRate: 16_000 }));
      expect(run.clients).toContain('ALSA plug-in [sox]');
      expect(run.stored.length).toBe(run.frames);
      expect(run.received).toBe(BigInt(run.frames));
      expect(indexOfSamples(run.stored, clip)).toBeGreaterThan(0);
    } finally {
      restore();
    }
  });

  it('typed errors: an unknown device, and no audio server at all', async () => {
    await expect(openMicrophone({ backend: 'pvrecorder', device: 'no such mic' })).rejects.toMatchObject({ name: 'MicrophoneError', code: 'MIC_DEVICE_NOT_FOUND' });
    await expect(openMicrophone({ backend: 'parec', device: 42 })).rejects.toMatchObject({ code: 'MIC_DEVICE_NOT_FOUND' });
    const restore = usePulse({ PULSE_SERVER: `unix:${join(dir, 'nothing-here')}`, XDG_RUNTIME_DIR: dir });
    try {
      const caught = (await openMicrophone({ backend: 'parec' }).catch((e: unknown) => e)) as MicrophoneError;
      expect(caught).toMatchObject({ name: 'MicrophoneError', backend: 'parec' });
      expect(caught.code).toBe('MIC_NO_DEVICE');
    } finally {
      restore();
      usePulse(mic.env);
    }
  });
});

describe('a 48 kHz fake microphone through parec', () => {
  it('opens at the device rate: the 48 kHz capture holds the file bit for bit, the server got the core resampler\'s output of it', async () => {
    const mic = await startFakeMic({ rate: 48_000 });
    const undo = usePulse(mic.env);
    const server = await startRetainingServer();
    const dir = mkdtempSync(join(tmpdir(), 'node-mic-48-'));
    try {
      const clip = Int16Array.from({ length: 48_000 }, (_, i) => Math.round(12_000 * Math.sin((2 * Math.PI * 440 * i) / 48_000) + ((i * 7919) % 97) - 48));
      const clipPath = writeWav(join(dir, 'clip48.wav'), clip, 48_000);
      const source = await openMicrophone({ backend: 'parec' });
      expect(source.format).toEqual({ sampleRate: 48_000, channels: 1, encoding: 'pcm16' });
      const seen: AudioBlock[] = [];
      // A plain source around the microphone (no breaks to pass on here: the device stays).
      const tapped: AudioSource = {
        format: source.format,
        label: source.label,
        live: true,
        get deliveredFrames() {
          return source.deliveredFrames;
        },
        async *[Symbol.asyncIterator]() {
          for await (const block of source) {
            seen.push(block.slice());
            yield block;
          }
        },
        stop: () => source.stop(),
      };
      const live = await transcribeLive(clientFor(server), tapped);
      await new Promise((r) => setTimeout(r, 300));
      await mic.play(clipPath);
      await new Promise((r) => setTimeout(r, 300));
      const result = await live.stop();
      const captured = Int16Array.from(seen.flatMap((b) => [...b]));
      expect(captured.length).toBe(source.deliveredFrames);
      expect(indexOfSamples(captured, clip)).toBeGreaterThan(0);
      const expected = await encodeOffline(seen.map((b) => Float32Array.from(b, (v) => v / 32768)), 48_000, 1);
      expect(result.session.usage.receivedSamples).toBe(BigInt(expected.length));
      expect(await storedAudio(server, live.session.sessionId)).toEqual(expected);
    } finally {
      await server.close();
      undo();
      await mic.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
