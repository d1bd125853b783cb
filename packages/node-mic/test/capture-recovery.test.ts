import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import type { CaptureEvent, RealtimeFinishResult } from '@soundclone/core';
import { openMicrophone, transcribeLive, type AudioSource, type CaptureItem, type Microphone, type MicrophoneBackendName, type MicrophoneOptions } from '@soundclone/node-mic';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, encodeOffline, sampleSamples, startRetainingServer, storedAudio, writeWav } from './support/audio.js';
import { recordingClients, requireTools, soxDrivers, startFakeMic, usePulse, type FakeMic } from './support/fake-mic.js';

/**
 * A microphone that loses its device mid-session, for real: the private PulseAudio daemon's source is
 * unloaded, loaded again at another rate, suspended, fed slower than real time, or the whole daemon
 * goes. The session must go on (or end with a typed error), the gaps must say why and where, and the
 * server must hold exactly what was captured, each stretch resampled as a stream of its own.
 */

const log = (text: string): void => {
  if (process.env['CAPTURE_LOG'] !== undefined) process.stderr.write(`capture: ${text}\n`);
};

interface Run {
  readonly mic: Microphone;
  readonly events: CaptureEvent[];
  /** What the capture delivered, split at its breaks, each with the format it came in. */
  readonly stretches: Array<{ rate: number; channels: number; blocks: Int16Array[] }>;
  live: Awaited<ReturnType<typeof transcribeLive>>;
}

/** A microphone streaming into a session, with every block and break it passed on recorded. */
async function capture(server: RunningServer, options: MicrophoneOptions): Promise<Run> {
  const mic = await openMicrophone(options);
  const events: CaptureEvent[] = [];
  mic.events$.subscribe((event) => {
    events.push(event);
    log(`${event.type} ${JSON.stringify(event, (k, v: unknown) => (k === 'error' ? String(v) : v))}`);
  });
  const stretches: Run['stretches'] = [{ rate: mic.format.sampleRate, channels: mic.format.channels, blocks: [] }];
  const tapped: AudioSource & { items(): AsyncGenerator<CaptureItem> } = {
    format: mic.format,
    label: mic.label,
    live: true,
    get deliveredFrames() {
      return mic.deliveredFrames;
    },
    [Symbol.asyncIterator]: () => mic[Symbol.asyncIterator](),
    async *items() {
      for await (const item of mic.items()) {
        if (item.kind === 'break') stretches.push({ rate: item.format.sampleRate, channels: item.format.channels, blocks: [] });
        else stretches.at(-1)!.blocks.push((item.block as Int16Array).slice());
        yield item;
      }
    },
    stop: () => mic.stop(),
  };
  const live = await transcribeLive(clientFor(server), tapped);
  return { mic, events, stretches, live };
}

/** What the server must hold: each stretch as the session encodes a stream of its own, back to back. */
async function expectedAudio(run: Run): Promise<{ audio: Int16Array; boundaries: number[] }> {
  const parts: Int16Array[] = [];
  const boundaries: number[] = [];
  let at = 0;
  for (const stretch of run.stretches) {
    const part = stretch.rate === 16_000 && stretch.channels === 1
      ? Int16Array.from(stretch.blocks.flatMap((b) => [...b]))
      : await encodeOffline(stretch.blocks.map((b) => Float32Array.from(b, (v) => v / 32768)), stretch.rate, stretch.channels);
    parts.push(part);
    at += part.length;
    boundaries.push(at);
  }
  const audio = new Int16Array(at);
  let to = 0;
  for (const p of parts) {
    audio.set(p, to);
    to += p.length;
  }
  return { audio, boundaries: boundaries.slice(0, -1) };
}

function waitFor(run: Run, predicate: (e: CaptureEvent) => boolean, timeoutMs = 10_000): Promise<CaptureEvent> {
  return new Promise((resolve, reject) => {
    const found = run.events.find(predicate);
    if (found !== undefined) return resolve(found);
    const timer = setTimeout(() => {
      sub.unsubscribe();
      reject(new Error(`timed out; saw ${run.events.map((e) => e.type).join(', ')}`));
    }, timeoutMs);
    const sub = run.mic.events$.subscribe((event) => {
      if (!predicate(event)) return;
      clearTimeout(timer);
      sub.unsubscribe();
      resolve(event);
    });
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The finish must agree with the capture to the sample, and the server hold exactly the stretches. */
async function expectExact(server: RunningServer, run: Run, result: RealtimeFinishResult): Promise<number[]> {
  const { audio, boundaries } = await expectedAudio(run);
  const delivered = run.stretches.reduce((n, s) => n + s.blocks.reduce((m, b) => m + b.length / s.channels, 0), 0);
  expect(run.mic.deliveredFrames).toBe(delivered);
  expect(result.session.usage.capturedSamples).toBe(BigInt(audio.length));
  expect(result.session.usage.receivedSamples).toBe(BigInt(audio.length));
  expect(await storedAudio(server, run.live.session.sessionId)).toEqual(audio);
  const gaps = run.events.flatMap((e) => (e.type === 'gap' ? [e.gap] : []));
  expect(gaps.map((g) => g.atSample)).toEqual(boundaries);
  return boundaries;
}

function pactl(mic: FakeMic, ...args: string[]): string {
  return execFileSync('pactl', args, { env: { ...process.env, ...mic.env }, encoding: 'utf8' });
}

function remapModule(mic: FakeMic): string {
  const line = pactl(mic, 'list', 'short', 'modules').split('\n').find((l) => l.includes('module-remap-source'));
  if (line === undefined) throw new Error('no remap source loaded');
  return line.split('\t')[0]!;
}

describe('capture that survives its device (PulseAudio, parec)', () => {
  let mic: FakeMic;
  let server: RunningServer;
  let undo: () => void;
  let dir: string;
  let clipPath: string;

  beforeAll(async () => {
    mic = await startFakeMic({ rate: 16_000 });
    undo = usePulse(mic.env);
    server = await startRetainingServer();
    dir = mkdtempSync(join(tmpdir(), 'node-mic-recovery-'));
    clipPath = writeWav(join(dir, 'clip.wav'), sampleSamples().slice(0, 16_000 * 6), 16_000);
  });
  afterAll(async () => {
    await server?.close();
    undo?.();
    await mic?.stop();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('the source is unloaded, the default is taken, the source comes back at 48 kHz and is taken again: one session, exact audio', async () => {
    const run = await capture(server, { backend: 'parec', device: 'fakemic', recovery: { pollMs: 100, retryDelayMs: 100 } });
    const playing = mic.play(clipPath);
    await sleep(1000);
    const unloaded = performance.now();
    pactl(mic, 'unload-module', remapModule(mic));
    const lost = await waitFor(run, (e) => e.type === 'device-lost');
    const lostAt = performance.now();
    await waitFor(run, (e) => e.type === 'recovered');
    const recoveredAt = performance.now();
    expect(run.mic.label).toBe('fakespk.monitor');
    await sleep(800);
    pactl(mic, 'load-module', 'module-remap-source', 'source_name=fakemic', 'master=fakespk.monitor', 'rate=48000', 'source_properties=device.description=FakeMic');
    const back = await waitFor(run, (e) => e.type === 'recovered' && e.device.id === 'fakemic');
    const backAt = performance.now();
    log(`unload detected in ${(lostAt - unloaded).toFixed(0)} ms, default taken ${(recoveredAt - lostAt).toFixed(0)} ms later, source back taken in ${(backAt - recoveredAt - 800).toFixed(0)} ms`);
    expect(run.mic.format.sampleRate).toBe(48_000);
    await sleep(800);
    const result = await run.live.stop();
    await playing;
    expect(lost).toMatchObject({ type: 'device-lost', cause: 'device-lost', device: { id: 'fakemic', sampleRate: 16_000 } });
    expect(run.events.filter((e) => e.type === 'device-changed').map((e) => e.type === 'device-changed' && [e.from?.id, e.to.id])).toEqual([['fakemic', 'fakespk.monitor'], ['fakespk.monitor', 'fakemic']]);
    expect(run.events.find((e) => e.type === 'rate-changed')).toMatchObject({ device: { id: 'fakemic' }, fromRate: 16_000, toRate: 48_000 });
    const gaps = run.events.flatMap((e) => (e.type === 'gap' ? [e.gap] : []));
    expect(gaps.map((g) => g.cause)).toEqual(['device-changed', 'rate-changed']);
    expect(back).toMatchObject({ cause: 'rate-changed' });
    for (const g of gaps) {
      expect(g.to - g.from).toBe(Math.max(0, Math.round((g.toMs - g.fromMs) * 16)));
      expect(g.toMs).toBeGreaterThan(g.fromMs);
    }
    expect(run.stretches.map((s) => s.rate)).toEqual([16_000, 16_000, 48_000]);
    await expectExact(server, run, result);
    expect(run.mic.health).toMatchObject({ state: 'stopped', gaps: 2, recoveries: 2 });
    expect(run.mic.health.timeToFirstAudioMs).not.toBeNull();
  });

  it('a suspended source: reported as suspended, the time away is a gap, the session goes on', async () => {
    const run = await capture(server, { backend: 'parec', device: 'fakemic', recovery: { pollMs: 100, starvationMs: 400 } });
    await sleep(800);
    const suspendedAt = performance.now();
    pactl(mic, 'suspend-source', 'fakemic', '1');
    const suspended = await waitFor(run, (e) => e.type === 'suspended');
    const detectedAt = performance.now();
    await sleep(1500);
    pactl(mic, 'suspend-source', 'fakemic', '0');
    const resumedAt = performance.now();
    const recovered = await waitFor(run, (e) => e.type === 'recovered');
    log(`suspension detected in ${(detectedAt - suspendedAt).toFixed(0)} ms; audio back ${(performance.now() - resumedAt).toFixed(0)} ms after resume`);
    await sleep(500);
    const result = await run.live.stop();
    expect(suspended).toMatchObject({ type: 'suspended' });
    expect(recovered).toMatchObject({ cause: 'suspended' });
    const gaps = run.events.flatMap((e) => (e.type === 'gap' ? [e.gap] : []));
    expect(gaps.map((g) => g.cause)).toEqual(['suspended']);
    // About the 1.9 s the source was away (suspension + detection), measured on the clock.
    expect((gaps[0]!.to - gaps[0]!.from) / 16).toBeGreaterThan(1200);
    expect((gaps[0]!.to - gaps[0]!.from) / 16).toBeLessThan(3500);
    await expectExact(server, run, result);
  });

  it('setDevice() moves the capture by the same path: a device-changed gap, exact audio on both sides', async () => {
    const run = await capture(server, { backend: 'parec', device: 'fakemic', recovery: { pollMs: 100 } });
    const playing = mic.play(clipPath);
    await sleep(700);
    const asked = performance.now();
    await run.mic.setDevice('fakespk.monitor');
    log(`setDevice switched in ${(performance.now() - asked).toFixed(0)} ms`);
    expect(run.mic.label).toBe('fakespk.monitor');
    // A device that is not there is refused before anything moves; the capture goes on.
    await expect(run.mic.setDevice('no such source')).rejects.toMatchObject({ code: 'MIC_DEVICE_NOT_FOUND' });
    expect(run.mic.health.state).toBe('running');
    await sleep(500);
    const result = await run.live.stop();
    await playing;
    const gaps = run.events.flatMap((e) => (e.type === 'gap' ? [e.gap] : []));
    expect(gaps.map((g) => g.cause)).toEqual(['device-changed']);
    expect(run.events.some((e) => e.type === 'device-lost')).toBe(false);
    expect(run.stretches.map((s) => s.blocks.length > 0)).toEqual([true, true]);
    await expectExact(server, run, result);
  });

  it('stop() while setDevice() is in flight, and setDevice() after stop(): typed rejections, no capture left running, nothing written after stop', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    const baseline = recordingClients(mic).length;
    try {
      // Three windows: stop() while setDevice() lists the devices, right after the switch began (its
      // device is being opened: parec is starting), and once the switch is under way for a while.
      for (const window of ['listing', 'opening', 'late'] as const) {
        const run = await capture(server, { backend: 'parec', device: 'fakemic', recovery: { pollMs: 100 } });
        await sleep(500);
        let stopping: Promise<RealtimeFinishResult> | undefined;
        const sub = run.mic.health$.subscribe((h) => {
          if (window === 'listing' || stopping !== undefined || h.state !== 'recovering') return;
          stopping = new Promise((resolve) => setTimeout(resolve, window === 'opening' ? 5 : 40)).then(() => run.live.stop());
        });
        const switching = run.mic.setDevice('fakespk.monitor').then(() => 'switched', (e: unknown) => e);
        if (window === 'listing') stopping = run.live.stop();
        const outcome = await switching;
        const result = await (stopping ?? run.live.stop());
        sub.unsubscribe();
        log(`stop() ${window}: setDevice ${outcome === 'switched' ? 'switched' : String((outcome as Error).message)}`);
        // The switch either completed before stop() or was refused with the typed error; never left pending.
        if (outcome !== 'switched') {
          expect(outcome).toMatchObject({ name: 'MicrophoneError', code: 'MIC_CAPTURE_FAILED' });
          expect((outcome as Error).message).toMatch(/stop\(\)|stopped capture/);
        }
        expect(run.mic.health.state).toBe('stopped');
        // No recording client of ours is left on the audio server (only the fixture's keeper).
        expect(recordingClients(mic)).toHaveLength(baseline);
        // Nothing more reaches the session: the count stays, and the server holds exactly what was delivered.
        const delivered = run.mic.deliveredFrames;
        await sleep(300);
        expect(run.mic.deliveredFrames).toBe(delivered);
        await expectExact(server, run, result);
        // After stop(): refused at once, typed.
        await expect(run.mic.setDevice('fakemic')).rejects.toMatchObject({ name: 'MicrophoneError', code: 'MIC_CAPTURE_FAILED' });
      }
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('arecord through ALSA\'s pulse plugin: the audio server moves the stream to its fallback when the source goes, so audio goes on with no break (not seen as a loss)', async () => {
    requireTools('arecord');
    pactl(mic, 'set-default-source', 'fakemic');
    const run = await capture(server, { backend: 'arecord', sampleRate: 16_000, recovery: { pollMs: 100, starvationMs: 400 } });
    await sleep(600);
    pactl(mic, 'unload-module', remapModule(mic));
    await sleep(1000);
    const result = await run.live.stop();
    pactl(mic, 'load-module', 'module-remap-source', 'source_name=fakemic', 'master=fakespk.monitor', 'source_properties=device.description=FakeMic');
    pactl(mic, 'set-default-source', 'fakemic');
    expect(run.events.filter((e) => e.type !== 'gap')).toEqual([]);
    expect(run.stretches).toHaveLength(1);
    // Nothing lost: the moved stream kept delivering on time.
    expect(run.mic.deliveredFrames).toBeGreaterThan(16_000 * 1.4);
    await expectExact(server, run, result);
  });
});

describe('capture fed slower than real time (PulseAudio pipe source)', () => {
  it('starvation is reported, the missing time is a gap, audio outside it is exact', async () => {
    const mic = await startFakeMic({ rate: 16_000 });
    const undo = usePulse(mic.env);
    const server = await startRetainingServer();
    const fifo = join(mic.dir, 'feed');
    // The module makes the FIFO itself.
    pactl(mic, 'load-module', 'module-pipe-source', 'source_name=pipemic', `file=${fifo}`, 'format=s16le', 'rate=16000', 'channels=1');
    // The feeder: 20 ms blocks of a known ramp, on time for 1 s, then nothing for 1.5 s, then on time again.
    const feeder = spawn(process.execPath, ['-e', `
      const fs = require('node:fs');
      const fd = fs.openSync(${JSON.stringify(fifo)}, 'w');
      let n = 0; const start = Date.now(); let sent = 0;
      const block = () => { const b = Buffer.alloc(640); for (let i = 0; i < 320; i++) b.writeInt16LE(((n++ * 7) % 20000) - 10000, i * 2); fs.writeSync(fd, b); sent += 20; };
      const tick = () => {
        const t = Date.now() - start;
        if (t > 5000) { fs.closeSync(fd); return; }
        const due = t < 1000 ? t : t < 2500 ? 1000 : t - 1500;
        while (sent < due) block();
        setTimeout(tick, 5);
      };
      tick();
    `], { stdio: 'ignore' });
    try {
      const run = await capture(server, { backend: 'parec', device: 'pipemic', recovery: { pollMs: 100, starvationMs: 400 } });
      const starved = await waitFor(run, (e) => e.type === 'starved');
      const recovered = await waitFor(run, (e) => e.type === 'recovered');
      log(`starvation reported ${JSON.stringify(starved)}; recovered after ${recovered.type === 'recovered' ? recovered.afterMs.toFixed(0) : '?'} ms`);
      await sleep(1000);
      const result = await run.live.stop();
      const gaps = run.events.flatMap((e) => (e.type === 'gap' ? [e.gap] : []));
      expect(gaps.map((g) => g.cause)).toEqual(['starved']);
      expect((gaps[0]!.to - gaps[0]!.from) / 16).toBeGreaterThan(1000);
      expect((gaps[0]!.to - gaps[0]!.from) / 16).toBeLessThan(2200);
      expect(run.mic.health.underruns).toBe(1);
      await expectExact(server, run, result);
    } finally {
      if (feeder.exitCode === null) {
        feeder.kill('SIGTERM');
        await new Promise((r) => feeder.once('exit', r));
      }
      await server.close();
      undo();
      await mic.stop();
    }
  });
});

describe('no device comes back: each backend ends with a typed terminal error', () => {
  const backends: Array<[MicrophoneBackendName, MicrophoneOptions]> = [
    ['parec', { backend: 'parec' }],
    ['arecord', { backend: 'arecord', sampleRate: 16_000 }],
    ['sox', { backend: 'sox', sampleRate: 16_000 }],
    ['pvrecorder', { backend: 'pvrecorder', device: 'FakeMic' }],
  ];
  for (const [name, options] of backends) {
    it(`${name}: the audio server goes away; after bounded retries the capture fails with MIC_DEVICE_LOST, the session keeps what was captured`, async () => {
      if (name === 'arecord') requireTools('arecord');
      if (name === 'sox' && !soxDrivers().includes('pulseaudio')) throw new Error('this test needs sox\'s pulseaudio driver (Debian: libsox-fmt-pulse); run npm run setup');
      const mic = await startFakeMic({ rate: 16_000 });
      const undo = usePulse(mic.env);
      const server = await startRetainingServer();
      try {
        const run = await capture(server, { ...options, recovery: { pollMs: 100, retryDelayMs: 100, attempts: 3, starvationMs: 400, lostAfterMs: 800 } });
        await sleep(800);
        const killedAt = performance.now();
        await mic.stop();
        const failure = await run.live.done.then(() => null, (e: unknown) => e);
        log(`${name}: terminal error ${(performance.now() - killedAt).toFixed(0)} ms after the server went; events ${run.events.map((e) => e.type).join(', ')}`);
        expect(failure).toMatchObject({ name: 'MicrophoneError', code: 'MIC_DEVICE_LOST', backend: name });
        expect(run.events.at(-1)).toMatchObject({ type: 'failed' });
        expect(run.events.some((e) => e.type === 'device-lost')).toBe(true);
        expect(run.mic.health.state).toBe('failed');
        // What was captured before the loss was still sent and counted.
        const stored = await storedAudio(server, run.live.session.sessionId);
        expect(stored.length).toBe(run.mic.deliveredFrames);
        expect(stored.length).toBeGreaterThan(16_000 * 0.5);
      } finally {
        await server.close();
        undo();
        await mic.stop().catch(() => undefined);
      }
    });
  }
});
