import type { Page } from 'playwright-core';
import type { DemoApi, DemoSnapshot, DemoStartOptions } from '../../packages/web-audio/demo/page/main.ts';

/** What the demo page exposes on `window` for tests (the page sets `demo`; tests set the rest). */
export type DemoWindow = { demo: DemoApi; denyMicrophone: boolean; streams: MediaStream[] };

export const snapshot = (page: Page): Promise<DemoSnapshot> => page.evaluate(() => (window as unknown as DemoWindow).demo.snapshot());

/**
 * Opens the demo at `url` and starts it keeping every block handed to the session (the stop result's
 * `input`); the page's uncaught errors are collected in `errors` as they come.
 */
export async function startKeepingInput(page: Page, url: string, options: DemoStartOptions = {}): Promise<{ started: Awaited<ReturnType<DemoApi['start']>>; errors: string[] }> {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url);
  const started = await page.evaluate((o) => (window as unknown as DemoWindow).demo.start(o), { ...options, keepInput: true });
  return { started, errors };
}

/** Stop on the page: what the demo's stop() reports (the capture's result, the session's finish). */
export const stopDemo = (page: Page) => page.evaluate(() => (window as unknown as DemoWindow).demo.stop());

/** Start on the page: null when it started, else the error's name and code. */
export const tryStart = (page: Page, options: DemoStartOptions = {}) =>
  page.evaluate((o) => (window as unknown as DemoWindow).demo.start(o).then(() => null, (e: Error & { code?: string }) => ({ name: e.name, code: e.code })), options);

/** Polls `read` every 100 ms until `ok`, or fails naming `what` and the last value. */
export async function until<T>(what: string, read: () => Promise<T>, ok: (value: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (ok(value)) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
