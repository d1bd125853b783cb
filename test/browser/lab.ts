import { createServer, type Server } from 'node:http';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { Page } from 'playwright-core';
import { bundlePage, type DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { bundleWorklet } from '../../packages/web-audio/scripts/build-worklet.mjs';
import type { Lab, LabGrant } from './lab-page.ts';
import { closeRig, startDemoRig, storedAudio, type DemoRig } from './rig.ts';
import { decodeFloat32, stretchesLikeThePage } from './support.ts';

/**
 * A bare page for tests that call the package directly (lab-page.ts on `window.lab`), served
 * cross-origin isolated from 127.0.0.1 with the worklet beside it. Sessions come from the demo's
 * backend (its reference server and key), reserved from Node and handed to the page as a grant.
 */
export interface LabServer {
  readonly url: string;
  grant(): Promise<LabGrant>;
  close(): Promise<void>;
}

export type LabWindow = { lab: Lab; run: Awaited<ReturnType<Lab['run']>> };

const here = dirname(fileURLToPath(import.meta.url));

export async function startLab(demo: DemoServer): Promise<LabServer> {
  const [script, worklet] = await Promise.all([bundlePage(join(here, 'lab-page.ts')), bundleWorklet()]);
  const files: Record<string, { type: string; body: string }> = {
    '/': { type: 'text/html; charset=utf-8', body: '<!doctype html><meta charset="utf-8"><title>lab</title><script type="module" src="/lab.js"></script>' },
    '/lab.js': { type: 'text/javascript; charset=utf-8', body: script },
    '/capture-worklet.js': { type: 'text/javascript; charset=utf-8', body: worklet },
  };
  const http: Server = createServer((req, res) => {
    const file = files[new URL(req.url ?? '/', 'http://127.0.0.1').pathname];
    const headers = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp', 'Cache-Control': 'no-store' };
    if (file === undefined) res.writeHead(404, headers).end();
    else res.writeHead(200, { ...headers, 'Content-Type': file.type }).end(file.body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const port = (http.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${String(port)}/`,
    grant: async () => {
      const r = await fetch(`${demo.url}/api/session`, { method: 'POST' });
      expect(r.status).toBe(200);
      return (await r.json()) as LabGrant;
    },
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

/** Opens the lab page, waits for its script, and reserves a session for it (the grant to run with). */
export async function openLab(page: Page, lab: LabServer): Promise<LabGrant> {
  await page.goto(lab.url);
  await page.waitForFunction(() => (window as unknown as Partial<LabWindow>).lab !== undefined);
  return lab.grant();
}

export type LabFinish = Awaited<ReturnType<Lab['finish']>>;

/** Stops the page's run and finishes its session (lab-page.ts finish()). */
export const finishRun = (page: Page): Promise<LabFinish> => page.evaluate(() => (window as unknown as LabWindow).lab.finish((window as unknown as LabWindow).run));

/**
 * The server holds exactly each stretch the capture handed on, resampled on its own (the cuts at
 * the gaps), the gaps at their exact session samples, and the session's counts agree.
 */
export async function expectExactStretches(demo: DemoServer, sessionId: string, done: LabFinish): Promise<Int16Array[]> {
  const stored = await storedAudio(demo, sessionId);
  const input = decodeFloat32(done.input);
  const { parts, expected, cuts: cutSamples } = stretchesLikeThePage(input, done.cuts.map((c) => c.frames), done.rate[0]!, done.kernel as 'wasm' | 'js');
  expect(stored.length).toBe(expected.length);
  expect(stored).toEqual(expected);
  // Each cut at its exact session sample: a gap's atSample, a drop's sessionSample.
  expect(done.gaps.map((g) => g.atSample)).toEqual(cutSamples.filter((_, k) => done.cuts[k]!.kind === 'gap'));
  expect(done.cuts.flatMap((c) => (c.kind === 'drop' ? [c.sessionSample] : []))).toEqual(cutSamples.filter((_, k) => done.cuts[k]!.kind === 'drop'));
  expect(done.capturedSamples).toBe(String(expected.length));
  expect(done.sentSamples).toBe(expected.length);
  return parts;
}

/**
 * Run before any page script: every getUserMedia call and the streams it gave, every AudioContext
 * made, every unhandled rejection and every error reported to the page. The calls pass through
 * untouched; this only watches.
 */
export function watchPlatform(): void {
  const w = window as unknown as PlatformWatch;
  w.gum = { calls: 0, streams: [] };
  const devices = navigator.mediaDevices;
  const native = devices.getUserMedia.bind(devices);
  devices.getUserMedia = async (constraints) => {
    w.gum.calls++;
    const stream = await native(constraints);
    w.gum.streams.push(stream);
    return stream;
  };
  w.contexts = [];
  const Native = window.AudioContext;
  window.AudioContext = class extends Native {
    constructor(options?: AudioContextOptions) {
      super(options);
      w.contexts.push(this);
    }
  };
  w.rejections = [];
  window.addEventListener('unhandledrejection', (e) => w.rejections.push(String((e.reason as { code?: string } | null)?.code ?? e.reason)));
  w.reported = [];
  window.addEventListener('error', (e) => w.reported.push(String((e.error as { code?: string } | null)?.code ?? e.message)));
}

export type PlatformWatch = {
  gum: { calls: number; streams: MediaStream[] };
  contexts: AudioContext[];
  rejections: string[];
  reported: string[];
};

/** What the page's platform shows now: getUserMedia calls, live tracks, contexts not closed, rejections, reports. */
export const platform = (page: Page): Promise<{ calls: number; liveTracks: number; openContexts: number; rejections: string[]; reported: string[] }> =>
  page.evaluate(() => {
    const w = window as unknown as PlatformWatch;
    return {
      calls: w.gum.calls,
      liveTracks: w.gum.streams.flatMap((s) => s.getTracks()).filter((t) => t.readyState === 'live').length,
      openContexts: w.contexts.filter((c) => c.state !== 'closed').length,
      rejections: w.rejections.slice(),
      reported: w.reported.slice(),
    };
  });

/** Polls the page until `check` (run in the page) is true; fails naming `what` after `ms`. */
export async function pageUntil(page: Page, what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await page.evaluate(check))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What a lab test runs against: the demo rig (60 s of each session's audio kept) and the lab page's server. */
export interface LabRig extends DemoRig {
  readonly lab: LabServer;
}

/** Starts the demo rig with `pcm` (16-bit, WAV_RATE) as Chromium's fake microphone, then the lab page's server on it. */
export async function startLabRig(wavName: string, pcm: Int16Array): Promise<LabRig> {
  const rig = await startDemoRig(wavName, pcm);
  try {
    return { ...rig, lab: await startLab(rig.demo) };
  } catch (caught) {
    await closeRig(rig); // nothing left running when a part fails to start
    throw caught;
  }
}
