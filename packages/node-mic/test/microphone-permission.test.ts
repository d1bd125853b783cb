import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { listMicrophones, openMicrophone, type MicrophoneError } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cookieDoor, requireTools, startFakeMic, usePulse, type FakeMic } from './support/fake-mic.js';

async function openError(options: Parameters<typeof openMicrophone>[0]): Promise<MicrophoneError> {
  const caught = await openMicrophone(options).then(
    async (source) => {
      await source.stop();
      return new Error(`opened ${source.label} with ${String(options?.backend)}`);
    },
    (e: unknown) => e,
  );
  return caught as MicrophoneError;
}

/**
 * A real refusal: the fake mic's daemon gets a TCP listener that demands its cookie, and this process
 * presents another one (PULSE_COOKIE), so PulseAudio answers "Access denied" to every backend.
 */
describe('a PulseAudio server that refuses us: MIC_PERMISSION_DENIED', () => {
  let mic: FakeMic;
  let door: Awaited<ReturnType<typeof cookieDoor>>;
  let undo: () => void;
  let dir: string;

  beforeAll(async () => {
    requireTools('arecord', 'sox');
    mic = await startFakeMic({ rate: 16_000 });
    door = await cookieDoor(mic);
    undo = usePulse(door.wrong);
    dir = mkdtempSync(join(tmpdir(), 'node-mic-denied-'));
  });
  afterAll(async () => {
    undo?.();
    await mic?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('control: the same listener with the right cookie lets both backends see the fake mic', async () => {
    const restore = usePulse(door.right);
    try {
      expect((await listMicrophones({ backend: 'parec' })).map((d) => d.name)).toContain('fakemic');
      expect((await listMicrophones({ backend: 'pvrecorder' })).map((d) => d.name)).toContain('FakeMic');
    } finally {
      restore();
    }
  });

  it('parec backend: pactl is refused while listing, MIC_PERMISSION_DENIED quoting PulseAudio', async () => {
    const caught = await openError({ backend: 'parec' });
    expect(caught).toMatchObject({ name: 'MicrophoneError', code: 'MIC_PERMISSION_DENIED', backend: 'parec' });
    expect(caught.message).toBe('parec: the audio system refused access to the microphone: Connection failure: Access denied');
  });

  it('pvrecorder backend: its own error says only "failed to initialize"; the pactl probe turns it into MIC_PERMISSION_DENIED', async () => {
    const caught = await openError({ backend: 'pvrecorder' });
    expect(caught).toMatchObject({ name: 'MicrophoneError', code: 'MIC_PERMISSION_DENIED', backend: 'pvrecorder' });
    expect(caught.message).toMatch(/^microphone access denied: the PulseAudio server refused the connection \(pactl: Connection failure: Access denied\)/);
    // What pvrecorder itself reported (in the probe process, carried back by class name and message), kept as the cause: the same words as with no server at all (next test).
    const inner = caught.cause as MicrophoneError;
    expect(inner.code).toBe('MIC_NO_DEVICE');
    expect((inner.cause as Error).name).toBe('PvRecorderStatusRuntimeError');
    expect((inner.cause as Error).message).toBe('PvRecorder failed to initialize.');
    // Refused, pvrecorder lists ALSA's devices instead of the server's, so a name from the server
    // matches nothing: that is a refusal too, not MIC_DEVICE_NOT_FOUND.
    const names = (await listMicrophones({ backend: 'pvrecorder' })).map((d) => d.name);
    expect(names).not.toContain('FakeMic');
    expect(names.length).toBeGreaterThan(0);
    const byName = await openError({ backend: 'pvrecorder', device: 'FakeMic' });
    expect(byName).toMatchObject({ code: 'MIC_PERMISSION_DENIED', backend: 'pvrecorder' });
    expect((byName.cause as MicrophoneError).code).toBe('MIC_DEVICE_NOT_FOUND');
  });

  it('arecord and sox: ALSA\'s pulse plugin reports the refusal, MIC_PERMISSION_DENIED quoting it', async () => {
    for (const backend of ['arecord', 'sox'] as const) {
      const caught = await openError({ backend, sampleRate: 16_000 });
      expect(caught).toMatchObject({ name: 'MicrophoneError', code: 'MIC_PERMISSION_DENIED', backend });
      expect(caught.message).toMatch(new RegExp(`^${backend}: the audio system refused access to the microphone: .*PulseAudio: Unable to connect: Access denied$`));
    }
  });

  it('the same pvrecorder failure without any server stays MIC_NO_DEVICE: only the probe tells them apart', async () => {
    const restore = usePulse({ PULSE_SERVER: `unix:${join(dir, 'nothing-here')}`, XDG_RUNTIME_DIR: dir });
    try {
      const caught = await openError({ backend: 'pvrecorder' });
      expect(caught).toMatchObject({ name: 'MicrophoneError', code: 'MIC_NO_DEVICE', backend: 'pvrecorder' });
      expect((caught.cause as Error).name).toBe('PvRecorderStatusRuntimeError');
      expect((caught.cause as Error).message).toBe('PvRecorder failed to initialize.');
    } finally {
      restore();
    }
  });
});
