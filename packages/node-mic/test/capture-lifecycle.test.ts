import { MicrophoneError, ResilientMicrophone, type CaptureItem, type OpenedCapture } from '@soundclone/node-mic';
import type { CaptureEvent } from '@soundclone/core';
import { describe, expect, it } from 'vitest';

/**
 * The microphone's own decisions, with devices made in the test (the opener is the platform boundary
 * every backend plugs into): a device that ends after a few blocks, openers that fail, a stop() in
 * the middle of looking for a device. The PulseAudio runs are in capture-recovery.test.ts.
 */
function device(label: string, rate: number, blocks: number): OpenedCapture {
  let delivered = 0;
  let stopped = false;
  return {
    format: { sampleRate: rate, channels: 1, encoding: 'pcm16' },
    label,
    get deliveredFrames() {
      return delivered;
    },
    droppedFrames: 0,
    stop: async () => {
      stopped = true;
    },
    async *[Symbol.asyncIterator]() {
      for (let i = 0; i < blocks && !stopped; i++) {
        await new Promise((r) => setTimeout(r, 2));
        delivered += rate / 50;
        yield new Int16Array(rate / 50).fill(i);
      }
    },
  };
}

describe('ResilientMicrophone decisions', () => {
  it('a device that ends is replaced; the break carries the new format; positions are floor(frames · 16000 / rate) per stretch', async () => {
    const opened: Array<string | number | undefined> = [];
    const devices = [device('usb', 48_000, 5), device('usb', 44_100, 3)];
    const mic = await ResilientMicrophone.open('parec', 'usb', {
      open: async (wanted) => {
        opened.push(wanted);
        const next = devices.shift();
        if (next === undefined) throw new MicrophoneError('MIC_NO_DEVICE', 'none left');
        return next;
      },
      recovery: { attempts: 2, retryDelayMs: 5 },
    });
    const events: CaptureEvent[] = [];
    mic.events$.subscribe((e) => events.push(e));
    const items: CaptureItem[] = [];
    const failure = await (async () => {
      for await (const item of mic.items()) items.push(item);
    })().then(() => null, (e: unknown) => e);
    expect(failure).toMatchObject({ code: 'MIC_DEVICE_LOST' });
    const breaks = items.filter((i) => i.kind === 'break');
    expect(breaks).toHaveLength(1);
    expect(breaks[0]).toMatchObject({ format: { sampleRate: 44_100 }, gap: { cause: 'rate-changed', atSample: 5 * 320 } });
    expect(events.map((e) => e.type)).toEqual(['device-lost', 'rate-changed', 'gap', 'recovered', 'device-lost', 'failed']);
    // The same device first; with it gone, the default (undefined) too, twice each.
    expect(opened).toEqual(['usb', 'usb', 'usb', undefined, 'usb', undefined]);
    expect(mic.deliveredFrames).toBe(5 * 960 + 3 * 882);
    expect(mic.health).toMatchObject({ state: 'failed', gaps: 1, recoveries: 1, capturedFrames: 5 * 960 + 3 * 882 });
  });

  it('recovery: false ends on the first loss with MIC_DEVICE_LOST', async () => {
    const mic = await ResilientMicrophone.open('sox', undefined, { open: async () => device('default', 16_000, 2), recovery: { enabled: false } });
    await expect((async () => {
      for await (const block of mic) expect(block.length).toBe(320);
    })()).rejects.toMatchObject({ name: 'MicrophoneError', code: 'MIC_DEVICE_LOST', backend: 'sox' });
    expect(mic.health.state).toBe('failed');
  });

  it('setDevice() with recovery off settles with the capture\'s terminal error instead of waiting forever', async () => {
    const mic = await ResilientMicrophone.open('parec', 'usb', { open: async () => device('usb', 16_000, 1000), recovery: { enabled: false } });
    const reading = (async () => {
      for await (const block of mic) expect(block.length).toBe(320);
    })().then(() => null, (e: unknown) => e);
    await new Promise((r) => setTimeout(r, 20));
    await expect(mic.setDevice('other')).rejects.toMatchObject({ name: 'MicrophoneError', code: 'MIC_DEVICE_LOST' });
    expect(await reading).toMatchObject({ code: 'MIC_DEVICE_LOST' });
    expect(mic.health.state).toBe('failed');
  });

  it('stop() while looking for a device ends the capture cleanly: stopped, no failure', async () => {
    let calls = 0;
    const mic = await ResilientMicrophone.open('arecord', undefined, {
      open: async () => {
        calls += 1;
        if (calls === 1) return device('default', 16_000, 2);
        throw new MicrophoneError('MIC_NO_DEVICE', 'not yet');
      },
      recovery: { attempts: 1000, retryDelayMs: 20 },
    });
    const events: CaptureEvent[] = [];
    mic.events$.subscribe((e) => events.push(e));
    const reading = (async () => {
      for await (const block of mic) expect(block.length).toBe(320);
    })();
    while (calls < 4) await new Promise((r) => setTimeout(r, 5));
    await mic.stop();
    await reading;
    expect(mic.health.state).toBe('stopped');
    expect(events.map((e) => e.type)).toEqual(['device-lost']);
    expect(calls).toBeLessThan(20);
  });
});
