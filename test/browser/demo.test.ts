import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { SoundClone } from '@soundclone/core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { chatty, slotted, type Slotted } from './recognizers.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { ARTIFACTS, speechWav } from './support.ts';
import { snapshot, stopDemo as stop, tryStart, until, type DemoWindow } from './demo-page.ts';

/**
 * The live-captions demo as a visitor meets it, in real Chromium: failed Starts hold nothing on the
 * service, a busy service is said in plain words, the captions keep the newest line in view, the
 * meter rests at zero after Stop, earlier sessions stay on the page; and the demo's own server on a
 * taken port. The reference server runs a recognizer with two slots that commits a line every
 * 200 ms of audio, so a long transcript and a full service take seconds, not minutes.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
let recognizer: Slotted;
let demo: DemoServer;
let browser: Browser;
let client: SoundClone;

beforeAll(async () => {
  recognizer = slotted(chatty(200), 2);
  ({ demo, browser } = await startDemoRig('fake-mic-demo.wav', speechWav().pcm, { serverOptions: { recognizer } }));
  client = new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl });
});
afterAll(() => closeRig({ demo, browser }));


/** A page whose getUserMedia can be refused (as a visitor's "Block") and which keeps every stream it opened. */
async function newPage(): Promise<Page> {
  const page = await browser.newPage();
  await page.addInitScript(() => {
    const w = window as unknown as DemoWindow;
    w.denyMicrophone = false;
    w.streams = [];
    const devices = navigator.mediaDevices;
    const real = devices.getUserMedia.bind(devices);
    devices.getUserMedia = async (constraints) => {
      if (w.denyMicrophone) throw new DOMException('Permission denied', 'NotAllowedError');
      const stream = await real(constraints);
      w.streams.push(stream);
      return stream;
    };
  });
  await page.goto(`${demo.url}/`);
  return page;
}

/** Every microphone track the page opened has ended (a failed Start let go of the microphone). */
const micReleased = (page: Page) => page.evaluate(() => (window as unknown as DemoWindow).streams.every((s) => s.getTracks().every((t) => t.readyState === 'ended')));


describe('live-captions demo in Chromium', () => {
  it('a refused microphone reserves no session; a Start that fails after reserving one releases it at once; a normal Start then works at once', async () => {
    const page = await newPage();
    try {
      const before = demo.sessions.length;
      await page.evaluate(() => void ((window as unknown as DemoWindow).denyMicrophone = true));
      // More refusals than the service has slots: none of them may cost one.
      for (let i = 0; i < 4; i++) expect(await tryStart(page)).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_PERMISSION_DENIED' });
      expect(demo.sessions.length).toBe(before);
      expect(recognizer.open).toBe(0);
      expect((await snapshot(page)).message).toMatch(/^The browser did not allow the microphone\./);
      expect(await page.locator('#message').isVisible()).toBe(true);
      expect(await page.locator('#start').isEnabled()).toBe(true);

      // The microphone is allowed but Start fails later (here: the worklet does not load), after the
      // session was reserved: each is finished at once, so the next one finds its slot free.
      await page.evaluate(() => void ((window as unknown as DemoWindow).denyMicrophone = false));
      for (let i = 0; i < 4; i++) expect(await tryStart(page, { workletUrl: '/no-such-worklet.js' })).toEqual({ name: 'WebAudioError', code: 'WEB_AUDIO_WORKLET_LOAD_FAILED' });
      const reserved = demo.sessions.slice(before);
      expect(reserved).toHaveLength(4);
      expect(demo.released).toEqual(expect.arrayContaining(reserved));
      expect(recognizer.open).toBe(0);
      for (const id of reserved) expect((await client.stt.realtime.get(id)).status).toBe('COMPLETED');
      expect(await micReleased(page)).toBe(true);
      expect(await page.locator('#lines .session').count()).toBe(0); // failed Starts add no heading

      const t0 = Date.now();
      expect(await tryStart(page)).toBeNull();
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(await page.locator('#message').isVisible()).toBe(false);
      await until('audio', () => snapshot(page), (s) => (s.stats?.sentSamples ?? 0) >= 8000);
      const result = await stop(page);
      expect(result.finish.status).toBe('COMPLETED');
      expect(recognizer.open).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('a busy service: the 503 and its code pass through the demo server, the page says so in plain words without waiting, and Start works once a slot frees', async () => {
    const held = [await client.stt.realtime.create({}), await client.stt.realtime.create({})];
    const page = await newPage();
    try {
      expect(recognizer.open).toBe(2);
      const direct = await fetch(`${demo.url}/api/session`, { method: 'POST' });
      expect(direct.status).toBe(503);
      expect(await direct.json()).toMatchObject({ code: -1, errorCode: 'SERVICE_UNAVAILABLE', details: { reason: 'RECOGNIZER_BUSY' } });

      const t0 = Date.now();
      expect(await tryStart(page)).toEqual({ name: 'ServiceUnavailableError', code: 'SERVICE_UNAVAILABLE' });
      expect(Date.now() - t0).toBeLessThan(3000); // no retries behind the visitor's back
      expect((await snapshot(page)).message).toBe('The speech service is busy, try again in a moment.');
      expect(await page.locator('#message').textContent()).not.toMatch(/HTTP|50\d/);
      expect(await micReleased(page)).toBe(true);

      for (const h of held.splice(0)) await client.stt.realtime.finish(h.sessionId, 0);
      expect(await tryStart(page)).toBeNull();
      await until('audio', () => snapshot(page), (s) => (s.stats?.sentSamples ?? 0) >= 8000);
      expect((await stop(page)).finish.status).toBe('COMPLETED');
    } finally {
      for (const h of held) await client.stt.realtime.finish(h.sessionId, 0).catch(() => undefined);
      await page.close();
    }
  });

  it('leaving the page mid-capture finishes its session at once (its recognizer slot frees now, not after the recovery window)', async () => {
    const page = await newPage();
    try {
      expect(await tryStart(page)).toBeNull();
      const live = await until('audio', () => snapshot(page), (s) => (s.stats?.sentSamples ?? 0) >= 8000);
      expect(recognizer.open).toBe(1);
      await page.goto('about:blank');
      await until('the release', async () => demo.released.includes(live.sessionId as string), (v) => v, 5000);
      expect(recognizer.open).toBe(0);
      expect((await client.stt.realtime.get(live.sessionId as string)).status).toBe('COMPLETED');
    } finally {
      await page.close();
    }
  });

  it('the captions keep the newest line in view, stay put while the reader scrolls back, and follow again from "Newest"', async () => {
    const page = await newPage();
    await page.setViewportSize({ width: 900, height: 520 });
    const view = () =>
      page.evaluate(() => {
        const panel = document.getElementById('captions') as HTMLElement;
        const lines = panel.querySelectorAll('.line');
        const last = lines[lines.length - 1];
        const p = panel.getBoundingClientRect();
        const r = last?.getBoundingClientRect();
        return {
          lines: lines.length,
          overflowing: panel.scrollHeight > panel.clientHeight + 20,
          panelInViewport: p.bottom <= innerHeight + 1,
          newestInPanel: r !== undefined && r.top >= p.top - 1 && r.bottom <= p.bottom + 1,
          newestInViewport: r !== undefined && r.top >= 0 && r.bottom <= innerHeight + 1,
          scrollTop: panel.scrollTop,
          newestButton: !(document.getElementById('newest') as HTMLElement).hidden,
        };
      });
    try {
      expect(await tryStart(page)).toBeNull();
      const many = await until('many lines', view, (v) => v.lines >= 14);
      expect(many).toMatchObject({ overflowing: true, panelInViewport: true, newestInPanel: true, newestInViewport: true, newestButton: false });

      // The reader scrolls back with the wheel: new lines must not pull the text away from them.
      const box = (await page.locator('#captions').boundingBox())!;
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
      await page.mouse.wheel(0, -10_000);
      const back = await until('scrolled to the top', view, (v) => v.scrollTop === 0 && v.newestButton);
      const later = await until('more lines', view, (v) => v.lines >= back.lines + 4);
      expect(later).toMatchObject({ scrollTop: 0, newestInPanel: false, newestButton: true });

      await page.locator('#newest').click();
      const followed = await until('following again', view, (v) => v.lines >= later.lines + 3);
      expect(followed).toMatchObject({ newestInPanel: true, newestInViewport: true, newestButton: false });
      await page.screenshot({ path: join(ARTIFACTS, 'demo-scrolled.png') });
      await stop(page);
    } finally {
      await page.close();
    }
  });

  it('Stop rests the level meter at zero; a second Start keeps the first session\'s lines under their own heading', async () => {
    const page = await newPage();
    const width = () => page.locator('#level').evaluate((el) => parseFloat((el as HTMLElement).style.width || '0'));
    try {
      expect(await tryStart(page)).toBeNull();
      // The fake microphone's tone bursts light the meter.
      await until('the meter to move', width, (w) => w > 30);
      const first = await until('lines', () => snapshot(page), (s) => s.lines.length >= 3);
      await stop(page);
      expect(await width()).toBe(0);
      await new Promise((r) => setTimeout(r, 300)); // a level queued before Stop must not come back
      expect(await width()).toBe(0);
      expect((await snapshot(page)).level).toBe(-Infinity);
      const kept = await page.locator('#lines .session').first().locator('.line').allTextContents();
      expect(kept.length).toBeGreaterThanOrEqual(first.lines.length);

      expect(await tryStart(page)).toBeNull();
      await until('lines of the second session', () => snapshot(page), (s) => s.lines.length >= 2);
      const result = await stop(page);
      const s = await snapshot(page);
      expect(s.sessions).toBe(2);
      expect(await page.locator('#lines .session').first().locator('.line').allTextContents()).toEqual(kept);
      const heads = await page.locator('#lines .session-head').allTextContents();
      expect(heads).toHaveLength(2);
      expect(heads[0]).toMatch(/^Session 1 · /);
      expect(heads[1]).toMatch(/^Session 2 · /);
      // snapshot.lines is the current session's: what its finish returned.
      expect(s.lines).toEqual(result.finish.lines);
      expect(await width()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it('the Gate toggle: the worklet gates the capture, the page shows speech or silence and "saved N %"', async () => {
    const page = await newPage();
    try {
      const seen = new Set<string>();
      await page.click('#gate');
      await page.click('#start');
      // Streaming, and the capture's first stats in (they may come a moment after the state).
      const streaming = await until('streaming', () => snapshot(page), (s) => s.connection === 'streaming' && s.stats !== undefined && s.stats !== null);
      expect(await page.locator('#gate').isDisabled()).toBe(true); // chosen at Start
      // The WAV (three lines in 5.6 s), then 2 s of the fake device's silence after it.
      const rate = streaming.stats!.sampleRate;
      await until('the WAV and 2 s after it', async () => {
        const s = await snapshot(page);
        seen.add(s.gate.activity);
        return (s.stats?.capturedFrames ?? 0) / rate;
      }, (seconds) => seconds >= speechWav().pcm.length / 44_100 + 2, 20_000);
      expect([...seen]).toEqual(expect.arrayContaining(['speech', 'silence']));
      await page.click('#stop');
      await until('the finish line', () => page.locator('#details').textContent(), (t) => (t ?? '').startsWith('Finished'));
      const s = await snapshot(page);
      expect(s.gate.on).toBe(true);
      expect(s.gate.speech.filter((e) => e.event === 'speech.start').length).toBeGreaterThanOrEqual(1);
      const saved = /^saved (\d+) %$/.exec(await page.locator('#saved').textContent() ?? '');
      expect(saved, 'the page says how much was saved').not.toBeNull();
      expect(Number(saved![1])).toBeGreaterThanOrEqual(10); // at least the 2 s of silence after the WAV
      expect(await page.locator('#gate').isDisabled()).toBe(false);
    } finally {
      await page.close();
    }
  });
});

describe('the demo\'s own server', () => {
  const run = (env: Record<string, string | undefined>, stopWhen?: RegExp): Promise<{ code: number | null; stdout: string; stderr: string }> =>
    new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(root, 'packages/web-audio/demo/start.mjs')], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 50_000);
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        if (stopWhen?.test(stdout)) child.kill('SIGTERM');
      });
      child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  const hold = async (port: number): Promise<Server | undefined> => {
    const server = createServer();
    return new Promise((resolve) => {
      server.once('error', () => resolve(undefined)); // taken already: just as good
      server.listen(port, '127.0.0.1', () => resolve(server));
    });
  };

  it('on a taken port: one line naming the port and PORT, exit code 1, no stack', async () => {
    const blocker = (await hold(0))!;
    try {
      const port = (blocker.address() as { port: number }).port;
      const { code, stdout, stderr } = await run({ PORT: String(port) });
      expect(code).toBe(1);
      expect(stdout).toBe('');
      const lines = stderr.trimEnd().split('\n');
      expect(lines, stderr).toHaveLength(1);
      expect(lines[0]).toContain(`port ${port} is already in use`);
      expect(lines[0]).toContain('PORT=');
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise((r) => blocker.close(r));
    }
  });

  it('a PORT that is not a port: one line, exit code 1', async () => {
    const { code, stderr } = await run({ PORT: 'eighty' });
    expect(code).toBe(1);
    expect(stderr.trimEnd().split('\n')).toEqual(['Live captions demo: PORT must be a port number from 0 to 65535, not "eighty".']);
  });

  it('defaults to its own port, not the reference server\'s 8787, so both run side by side', async () => {
    const reference = await hold(8787); // held here, or by a reference server already running
    try {
      const { stdout, stderr } = await run({ PORT: undefined }, /Live captions demo: http/);
      // 8788 may be in use on a shared machine: then the one-line refusal names it, never 8787.
      expect(`${stdout}${stderr}`).toMatch(/Live captions demo: http:\/\/127\.0\.0\.1:8788\/|port 8788 is already in use/);
      expect(`${stdout}${stderr}`).not.toMatch(/demo: http:\/\/127\.0\.0\.1:8787\/|port 8787 is/);
    } finally {
      if (reference !== undefined) await new Promise((r) => reference.close(r));
    }
  });
});
