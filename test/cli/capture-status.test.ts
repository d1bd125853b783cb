import type { CaptureHealth } from '@soundclone/core';
import { describe, expect, it } from 'vitest';
import { deviceLine, eventLine, silenceLine } from '../../packages/cli/src/capture-status.js';

const device = { id: 'fakemic', label: 'FakeMic', sampleRate: 48_000, channels: 2 };
const health: CaptureHealth = {
  state: 'running', reason: 'capturing', device, atMs: 5000, timeToFirstAudioMs: 40, level: { rmsDb: -23.4, peakDb: -6 },
  capturedFrames: 240_000, underruns: 0, overruns: 0, droppedFrames: 0, driftPpm: null, silentForMs: 0, gaps: 0, gapSamples: 0, lastGap: null, recoveries: 0,
};

describe('the captions screen\'s words for capture health', () => {
  it('names the device, its rate, channels and level', () => {
    expect(deviceLine(health)).toBe('microphone: FakeMic, 48000 Hz 2 ch, level -23 dBFS');
    expect(deviceLine({ ...health, level: { rmsDb: Number.NEGATIVE_INFINITY, peakDb: Number.NEGATIVE_INFINITY } })).toBe('microphone: FakeMic, 48000 Hz 2 ch, level silent');
  });

  it('says "device lost — reconnecting to default", and what came back', () => {
    expect(eventLine({ type: 'device-lost', cause: 'device-lost', device, detail: 'gone', atMs: 1 })).toBe('device lost (FakeMic: device-lost) — reconnecting to default');
    expect(eventLine({ type: 'recovered', device, cause: 'rate-changed', afterMs: 1234, atMs: 2 })).toBe('microphone back: FakeMic at 48000 Hz after 1.2 s (rate-changed)');
  });

  it('"no audio for N s" once per whole second from 2 s, not while stopped', () => {
    expect(silenceLine({ ...health, silentForMs: 1900 }, -1)).toBeNull();
    expect(silenceLine({ ...health, silentForMs: 2100 }, -1)).toEqual({ text: 'no audio for 2 s', second: 2 });
    expect(silenceLine({ ...health, silentForMs: 2600 }, 2)).toBeNull();
    expect(silenceLine({ ...health, silentForMs: 3000 }, 2)).toEqual({ text: 'no audio for 3 s', second: 3 });
    expect(silenceLine({ ...health, silentForMs: 9000, state: 'stopped' }, 2)).toBeNull();
  });
});
