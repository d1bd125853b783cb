import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { scriptAudio, toWav } from '@soundclone/testing';
import { startBackend } from '../src/backend.js';

/**
 * The component's tests, written once with `node:assert` and run by each runner's file (test/node,
 * test/vitest, test/jest). The component captures the microphone, so it runs where that exists: real
 * Chromium (playwright-core), its fake capture device playing the script's audio once, the page served
 * by the app's own backend, which mints sessions on the runner's test server.
 */
export const script = [
  { at: '0.3s', say: 'hello from the browser' },
  { at: '1.8s', say: 'captions in react' },
];

/** Debian's Chromium when present (`CHROMIUM_PATH` to choose another); else playwright's own download. */
const executablePath = process.env.CHROMIUM_PATH ?? (existsSync('/usr/bin/chromium') ? '/usr/bin/chromium' : undefined);

/**
 * What the cases share: the backend, a browser whose microphone plays the script, and its page.
 * @param {import('@soundclone/testing').TestServer} server
 */
export async function openFixture(server) {
  const dir = mkdtempSync(join(tmpdir(), 'react-captions-'));
  const wav = join(dir, 'speech.wav');
  writeFileSync(wav, toWav(scriptAudio(script)));
  const backend = await startBackend({ client: server.client() });
  const browser = await chromium.launch({
    executablePath,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream',
      // %noloop: the file plays once per getUserMedia, then silence.
      `--use-file-for-fake-audio-capture=${wav}%noloop`, '--autoplay-policy=no-user-gesture-required'],
  });
  return {
    backend,
    browser,
    async close() {
      await browser.close();
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** @typedef {Awaited<ReturnType<typeof openFixture>>} Fixture */

/**
 * A fresh page of the app: its captions and status as shown.
 * @param {Fixture} fixture
 */
async function openPage(fixture) {
  const page = await fixture.browser.newPage();
  await page.goto(fixture.backend.url);
  return {
    page,
    lines: () => page.locator('#captions p').allTextContents(),
    status: () => page.locator('#status').textContent(),
  };
}

/** @type {ReadonlyArray<{ name: string, run: (server: import('@soundclone/testing').TestServer, fixture: Fixture) => Promise<void> }>} */
export const cases = [
  {
    name: 'shows each line as it is heard, in order, then stops',
    async run(_server, fixture) {
      const app = await openPage(fixture);
      try {
        assert.equal(await app.status(), 'idle');
        await app.page.getByRole('button', { name: 'Start' }).click();
        await app.page.waitForFunction((n) => document.querySelectorAll('#captions p').length >= n, script.length, { timeout: 30_000 });
        assert.deepEqual(await app.lines(), script.map((l) => l.say));
        assert.equal(await app.status(), 'live');
        await app.page.getByRole('button', { name: 'Stop' }).click();
        await app.page.waitForFunction(() => document.querySelector('#status')?.textContent === 'stopped', null, { timeout: 30_000 });
        // The captions stay on screen after the stop.
        assert.deepEqual(await app.lines(), script.map((l) => l.say));
      } finally {
        await app.page.close();
      }
    },
  },
  {
    name: 'a stop finishes the session: settled, charged for the audio captured',
    async run(server, fixture) {
      const app = await openPage(fixture);
      try {
        const before = fixture.backend.sessions.length;
        await app.page.getByRole('button', { name: 'Start' }).click();
        await app.page.waitForFunction((n) => document.querySelectorAll('#captions p').length >= n, script.length, { timeout: 30_000 });
        await app.page.getByRole('button', { name: 'Stop' }).click();
        await app.page.waitForFunction(() => document.querySelector('#status')?.textContent === 'stopped', null, { timeout: 30_000 });
        assert.equal(fixture.backend.sessions.length, before + 1, 'one session per Start');
        const sessionId = fixture.backend.sessions.at(-1);
        const charges = await server.charges(sessionId);
        assert.equal(charges.state, 'SETTLED');
        // Captured in real time until the Stop: at least the scripted speech (less a second: the page
        // may start listening a little after the device starts playing), charged for what the service
        // received, rounded up to the millisecond (16 samples at 16 kHz).
        const stored = await server.storedAudio(sessionId);
        assert.ok(stored.length >= scriptAudio(script).length - 16_000, `stored ${stored.length} samples`);
        assert.equal(charges.billableDurationMs, BigInt(Math.ceil(stored.length / 16)));
      } finally {
        await app.page.close();
      }
    },
  },
];
