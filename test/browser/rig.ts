import { join } from 'node:path';
import { expect } from 'vitest';
import type { Browser } from 'playwright-core';
import { startDemo, type DemoOptions, type DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { ARTIFACTS, WAV_RATE, launchChromium, writeWav } from './support.ts';

/**
 * What a browser test runs against: the demo's backend (its reference server and key), Chromium with
 * a fake microphone that plays a WAV made by the test, and, for the lab tests, the lab page's server
 * (lab.ts). Started once per file and closed after it.
 */
export interface DemoRig {
  readonly demo: DemoServer;
  readonly browser: Browser;
  /** The fake microphone's WAV (a test may launch another Chromium on it). */
  readonly wavPath: string;
}

/** The demo's backend as most tests want it: 60 s of each session's audio kept, to read back. */
const KEEP_AUDIO: DemoOptions = { serverOptions: { retainRealtimeAudioSamples: 16_000 * 60 } };

/**
 * Writes `pcm` (16-bit, WAV_RATE) to ARTIFACTS/`wavName`, starts the demo's backend with `demoOptions`
 * (default: each session's audio kept), then Chromium with the WAV as its fake microphone. When a part
 * fails to start, what started is closed.
 */
export async function startDemoRig(wavName: string, pcm: Int16Array, demoOptions: DemoOptions = KEEP_AUDIO): Promise<DemoRig> {
  const wavPath = join(ARTIFACTS, wavName);
  writeWav(wavPath, pcm, WAV_RATE);
  const demo = await startDemo(demoOptions);
  try {
    return { demo, browser: await launchChromium(wavPath), wavPath };
  } catch (caught) {
    await demo.close(); // nothing left running when a part fails to start
    throw caught;
  }
}

/** Closes what a rig started, in reverse order (any part may be missing: a beforeAll that failed). */
export async function closeRig(rig: { readonly browser?: Browser; readonly lab?: { close(): Promise<void> }; readonly demo?: DemoServer } | undefined): Promise<void> {
  await rig?.browser?.close();
  await rig?.lab?.close();
  await rig?.demo?.close();
}

/** The PCM16 the demo's reference server stored for a session (its test-only audio read). */
export async function storedAudio(demo: DemoServer, sessionId: string): Promise<Int16Array> {
  const r = await fetch(`${demo.baseUrl}/sound_clone/api/v1/stt/realtime/sessions/${sessionId}/audio`, { headers: { accessKey: demo.accessKey } });
  expect(r.status).toBe(200);
  const bytes = new Uint8Array(await r.arrayBuffer());
  return new Int16Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 2).slice();
}
