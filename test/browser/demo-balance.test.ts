import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { SoundClone } from '@soundclone/core';
import { startDemo, type DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { speechWav } from './support.ts';
import { snapshot, stopDemo, tryStart, until } from './demo-page.ts';

/**
 * The live-captions demo when the account's characters run out, in real Chromium: the service stops
 * the session after exactly the audio the balance paid for (10 Characters: one second), and the page
 * says so in plain words, stops the microphone, and says the same at the next Start.
 */
let demo: DemoServer;
let browser: Browser;

beforeAll(async () => void ({ demo, browser } = await startDemoRig('fake-mic-demo-balance.wav', speechWav().pcm, { serverOptions: { accountOverrides: { 'demo-key': { totalMonthlyChars: 0, totalOrderChars: 10 } }, realtimeTiming: { supplementWaitMs: 200 } } })));
afterAll(() => closeRig({ demo, browser }));

describe('live-captions demo: the account runs out of characters', () => {
  it('stops after the second the balance paid for, says so in plain words, and says it again at the next Start', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${demo.url}/`);
      expect(await tryStart(page)).toBeNull();
      const stopped = await until('the balance message', () => snapshot(page), (s) => s.message !== '' && s.captureState === 'stopped');
      expect(stopped.message).toBe("The account's characters ran out after 1.0 s of audio, so captions stopped. Add characters to the account (a bigger plan or a character order), then press Start again.");
      expect(stopped.connection).toBe('failed');
      expect(await page.locator('#message').textContent()).not.toMatch(/HTTP|402|BALANCE_EXHAUSTED/);
      expect(await page.locator('#start').isEnabled()).toBe(true);
      const sessionId = demo.sessions.at(-1) as string;
      const view = await new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl }).stt.realtime.get(sessionId);
      expect(view.status).toBe('PARTIAL');
      expect(view.usage).toMatchObject({ receivedSamples: 16_000n, billableCharacters: 10n });

      expect(await tryStart(page)).toEqual({ name: 'InsufficientCharactersError', code: 'INSUFFICIENT_CHARACTERS' });
      expect((await snapshot(page)).message).toBe('The account has no characters left for captions. Add characters to the account (a bigger plan or a character order), then press Start again.');
    } finally {
      await page.close();
    }
  });

  it('an account at its open-session limit is told apart from a busy service', async () => {
    const limited = await startDemo({ serverOptions: { maxRealtimeSessionsPerAccount: 1 } });
    const client = new SoundClone({ accessKey: limited.accessKey, baseUrl: limited.baseUrl });
    const held = await client.stt.realtime.create({});
    const page = await browser.newPage();
    try {
      await page.goto(`${limited.url}/`);
      expect(await tryStart(page)).toEqual({ name: 'RateLimitError', code: 'RATE_LIMITED' });
      expect((await snapshot(page)).message).toBe('This account already has as many captions running as it may at once. Stop captions in another tab or window, then press Start again.');
      await client.stt.realtime.finish(held.sessionId, 0);
      expect(await tryStart(page)).toBeNull();
      await stopDemo(page);
    } finally {
      await page.close();
      await limited.close();
    }
  });
});
