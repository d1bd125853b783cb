import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser } from 'playwright-core';
import { echoAudio, fakeMicrophoneArgs, startTestServer, toWav, type SpeechScript, type TestServer } from '@soundclone/testing';
import { bundlePage } from '../../packages/web-audio/demo/dev-server.ts';
import { bundleWorklet } from '../../packages/web-audio/scripts/build-worklet.mjs';

/**
 * The README's browser recipe, run: Debian's Chromium (playwright-core, no browser download), its fake
 * microphone playing a WAV of echo speech, a page the kit serves cross-origin isolated, the SDK's
 * live-captions store in it, and the service hearing the words in the audio (echo mode).
 */
const SCRIPT: SpeechScript = [
  // A second and more of lead-in: the fake file starts when getUserMedia opens the device, before the capture runs.
  { at: '1.5s', say: 'hello browser' },
  { at: '3.5s', say: 'isolated' },
];

type W = { app: { store: import('@soundclone/web-audio').LiveCaptions; isolated: boolean; sharedMemory: boolean } };

describe('browser recipe: Chromium with a fake microphone, a cross-origin isolated page', () => {
  let server: TestServer;
  let browser: Browser;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'kit-browser-'));
    const wav = join(dir, 'mic.wav');
    const pcm = Int16Array.from(echoAudio(SCRIPT, { tail: '1s' }), (v) => Math.round(v * 32767));
    writeFileSync(wav, toWav(pcm));
    server = await startTestServer({ recognizer: 'echo' });
    browser = await chromium.launch({ executablePath: '/usr/bin/chromium', headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', ...fakeMicrophoneArgs(wav)], timeout: 30_000 });
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the page isolated; the words spoken into the fake microphone come back as lines', async () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const [app, worklet] = await Promise.all([bundlePage(join(here, 'kit-recipe-page.ts')), bundleWorklet()]);
    const page = await server.page({ files: { '/app.js': app, '/capture-worklet.js': worklet } });
    const response = await fetch(page.url);
    expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(response.headers.get('cross-origin-embedder-policy')).toBe('require-corp');

    const tab = await browser.newPage();
    try {
      await tab.goto(page.url);
      await tab.waitForFunction(() => (window as unknown as Partial<W>).app !== undefined);
      expect(await tab.evaluate(() => ({ isolated: (window as unknown as W).app.isolated, sharedMemory: (window as unknown as W).app.sharedMemory }))).toEqual({ isolated: true, sharedMemory: true });
      await tab.evaluate(() => (window as unknown as W).app.store.start());
      await tab.waitForFunction(() => (window as unknown as W).app.store.getSnapshot().lines.length >= 2, undefined, { timeout: 20_000 });
      await tab.evaluate(() => (window as unknown as W).app.store.stop());
      const lines = await tab.evaluate(() => (window as unknown as W).app.store.getSnapshot().lines.map((l: { text: string }) => l.text));
      expect(lines).toEqual(['hello browser', 'isolated']);
      expect(page.sessions).toHaveLength(1);
      // Made by the page's backend, which holds the key; the page only ever had the socket token.
      expect(server.requests.filter((r) => r.path.endsWith('/stt/realtime/sessions')).length).toBe(1);
    } finally {
      await tab.close();
    }
  });
});
