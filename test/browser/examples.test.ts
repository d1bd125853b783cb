import { createRequire } from 'node:module';
import { existsSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { closeRig, startDemoRig } from './rig.ts';
import { ARTIFACTS, speechWav } from './support.ts';
import { platform, watchPlatform } from './lab.ts';

/**
 * The framework examples as a developer runs them: `vite build` of the example app (against the
 * packages' built dist/, as an installed package is), its own Node backend minting sessions and tokens
 * with the SoundClone client against the reference server, and the page in Chromium with the fake
 * microphone: Start, captions on screen, a screenshot kept in test/artifacts/browser, Stop.
 */
const here = dirname(fileURLToPath(import.meta.url));
const packages = join(here, '..', '..', 'packages');
const wav = speechWav();
let demo: DemoServer;
let browser: Browser;

beforeAll(async () => void ({ demo, browser } = await startDemoRig('fake-mic-examples.wav', wav.pcm, {})));
afterAll(() => closeRig({ demo, browser }));

interface ExampleServer { readonly url: string; close(): Promise<void> }

for (const binding of ['react', 'vue', 'svelte'] as const) {
  describe(`the ${binding} example`, () => {
    it('builds with Vite, runs with its token endpoint, and shows live captions from the microphone', async () => {
      const example = join(packages, binding, 'example');
      // The example uses the packages as installed: their built output, the worklet file included.
      for (const built of [join(packages, binding, 'dist', 'index.js'), join(packages, 'web-audio', 'dist', 'capture-worklet.js')]) {
        if (!existsSync(built)) throw new Error(`${built} is missing: run \`pnpm build\` first`);
      }
      const { build } = createRequire(join(packages, binding, 'package.json'))('vite') as { build: (o: { configFile: string }) => Promise<unknown> };
      await build({ configFile: join(example, 'vite.config.mjs') });
      const { startExampleServer } = (await import(join(example, 'server.mjs'))) as { startExampleServer: (o: { baseUrl: string; accessKey: string }) => Promise<ExampleServer> };
      const server = await startExampleServer({ baseUrl: demo.baseUrl, accessKey: demo.accessKey });
      const page = await browser.newPage({ viewport: { width: 800, height: 500 } });
      try {
        await page.addInitScript(watchPlatform);
        await page.goto(server.url);
        await page.getByRole('button', { name: 'Start' }).click();
        await page.waitForSelector('#status:text("live")');
        await page.waitForFunction(() => document.querySelectorAll('#captions p').length >= 2, undefined, { timeout: 20_000 });
        const lines = await page.locator('#captions p').allTextContents();
        expect(lines.every((text) => text.trim().length > 0)).toBe(true);
        expect(await page.locator('#captions p').first().isVisible()).toBe(true);
        const shot = join(ARTIFACTS, `example-${binding}.png`);
        await page.screenshot({ path: shot });
        expect(statSync(shot).size).toBeGreaterThan(5_000);
        await page.getByRole('button', { name: 'Stop' }).click();
        await page.waitForSelector('#status:text("stopped")');
        const left = await platform(page);
        expect(left.liveTracks).toBe(0);
        expect(left.openContexts).toBe(0);
        expect(left.calls).toBe(1); // (React's example runs under StrictMode: its double mount asked once too)
      } finally {
        await page.close();
        await server.close();
      }
    });
  });
}
