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

  it('a reader that starts late finds the audio queued for it: no starved episode, no break, every frame in order', async () => {
    // A capture queues what the device gives until it is read (PushSource): here 1.5 s of 20 ms blocks
    // wait, then blocks come in real time.
    const rate = 16_000;
    const openedAt = performance.now();
    let delivered = 0;
    let stopped = false;
    const queued: OpenedCapture = {
      format: { sampleRate: rate, channels: 1, encoding: 'pcm16' },
      label: 'queued',
      get deliveredFrames() {
        return delivered;
      },
      droppedFrames: 0,
      stop: async () => {
        stopped = true;
      },
      async *[Symbol.asyncIterator]() {
        for (let i = 0; i < 150 && !stopped; i++) {
          // Block i was captured by (i + 1) · 20 ms after the open; wait for that when reading ahead of it.
          const due = openedAt + (i + 1) * 20 - performance.now();
          if (due > 0) await new Promise((r) => setTimeout(r, due));
          delivered += rate / 50;
          yield new Int16Array(rate / 50).fill(i);
        }
      },
    };
    const mic = await ResilientMicrophone.open('parec', 'queued', { open: async () => queued, recovery: { attempts: 1, retryDelayMs: 5, pollMs: 20 } });
    const events: CaptureEvent[] = [];
    mic.events$.subscribe((e) => events.push(e));
    await new Promise((r) => setTimeout(r, 1_500));
    const items: CaptureItem[] = [];
    for await (const item of mic.items()) {
      items.push(item);
      if (items.length === 150) break;
    }
    await mic.stop();
    expect(events.filter((e) => e.type === 'starved' || e.type === 'gap')).toEqual([]);
    expect(items.every((i) => i.kind === 'audio')).toBe(true);
    expect(items.map((i) => (i.kind === 'audio' ? i.block[0] : -1))).toEqual(Array.from({ length: 150 }, (_, i) => i));
  });

  it('a reader that reads while the device gives nothing still finds it starved', async () => {
    let stopped = false;
    const silent: OpenedCapture = {
      format: { sampleRate: 16_000, channels: 1, encoding: 'pcm16' },
      label: 'silent',
      deliveredFrames: 0,
      droppedFrames: 0,
      stop: async () => {
        stopped = true;
      },
      async *[Symbol.asyncIterator]() {
        while (!stopped) await new Promise((r) => setTimeout(r, 20));
      },
    };
    const mic = await ResilientMicrophone.open('parec', 'silent', { open: async () => silent, recovery: { attempts: 1, retryDelayMs: 5, pollMs: 20, starvationMs: 300, lostAfterMs: 60_000 } });
    const events: CaptureEvent[] = [];
    mic.events$.subscribe((e) => events.push(e));
    const reading = (async () => {
      for await (const _ of mic.items()) break;
    })();
    for (let i = 0; i < 100 && !events.some((e) => e.type === 'starved'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(events.map((e) => e.type)).toContain('starved');
    await mic.stop();
    await reading;
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
