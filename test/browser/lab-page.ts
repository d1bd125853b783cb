import { attachSession, openMicrophone, startCapture, type Capture, type StartCaptureOptions } from '@soundclone/web-audio';
import type { CaptureGap } from '@soundclone/core';

/**
 * The browser tests' own page script (bundled like the demo's, from the sources): the package's calls
 * on `window.lab`, and one helper that runs a capture into a session the test reserved, keeping what
 * it needs to check the result: every block handed to the session, where each gap cut it, every
 * event, and what was written to the session after stop() resolved.
 */
export interface LabRun {
  readonly capture: Capture;
  readonly session: Awaited<ReturnType<typeof attachSession>>;
  /** Every block the capture handed to the session (onSamples), copied. */
  readonly input: Float32Array[];
  /** Where each cut falls in `input` (frames before it), in order: a gap, or a drop (at its session sample). */
  readonly cuts: LabCut[];
  readonly events: Array<{ type: string; [key: string]: unknown }>;
  /** session.write() calls made after stop() resolved (must stay 0). */
  writesAfterStop: number;
  stopped: boolean;
}

export interface LabCut {
  readonly frames: number;
  readonly kind: 'gap' | 'drop';
  /** A drop's sessionSample (where the session's segment ended). */
  readonly sessionSample?: number;
}

export interface LabGrant {
  readonly sessionId: string;
  readonly token: string;
  readonly socketUrl: string;
}

async function run(grant: LabGrant, options: Omit<StartCaptureOptions, 'session' | 'onSamples'>): Promise<LabRun> {
  const session = await attachSession(grant);
  const input: Float32Array[] = [];
  let frames = 0;
  const lab: Omit<LabRun, 'capture'> & { capture?: Capture } = { session, input, cuts: [], events: [], writesAfterStop: 0, stopped: false };
  // The real session, watched: a write after stop() resolved is counted (it must never happen).
  const write = session.write.bind(session);
  session.write = ((...args: Parameters<typeof session.write>) => {
    if (lab.stopped) lab.writesAfterStop++;
    return write(...args);
  }) as typeof session.write;
  const capture = await startCapture({
    ...options, session, workletUrl: '/capture-worklet.js',
    onSamples: (block) => {
      input.push(block.slice());
      frames += block.length;
    },
  });
  // A gap is reported with the first frame after it, before that frame's block is handed on.
  capture.on('event', (e) => {
    lab.events.push({ ...e, ...('error' in e ? { error: (e.error as { code?: string }).code } : {}) });
    if (e.type === 'gap') lab.cuts.push({ frames, kind: 'gap' });
  });
  // A drop is reported between the blocks around it: the session's segment ends there too.
  capture.on('drop', (d) => lab.cuts.push({ frames, kind: 'drop', sessionSample: d.sessionSample }));
  lab.capture = capture;
  return lab as LabRun;
}

/** Stops the capture (its outcome as a code or 'ok'), marks the run stopped, finishes the session. */
async function finish(lab: LabRun): Promise<{ stop: string; input: string; cuts: LabCut[]; gaps: CaptureGap[]; rate: number[]; kernel: string; sentSamples: number; capturedSamples: string; receivedSamples: string; status: string }> {
  const stop = await lab.capture.stop().then(() => 'ok', (e: { code?: string }) => e.code ?? 'error');
  lab.stopped = true;
  const result = lab.capture.result;
  const finished = await lab.session.finish();
  const all = new Float32Array(lab.input.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of lab.input) {
    all.set(b, at);
    at += b.length;
  }
  return {
    stop,
    input: base64(all),
    cuts: lab.cuts.slice(),
    gaps: lab.capture.gaps.slice(),
    rate: [lab.capture.sampleRate],
    kernel: lab.capture.stats.kernel,
    sentSamples: result?.sentSamples ?? -1,
    capturedSamples: String(finished.session.usage.capturedSamples),
    receivedSamples: String(finished.session.usage.receivedSamples),
    status: finished.session.status,
  };
}

/** Float32 little-endian bytes as base64 (what support.ts decodeFloat32 reads). */
function base64(samples: Float32Array): string {
  const bytes = new Uint8Array(samples.buffer, samples.byteOffset, samples.byteLength);
  let text = '';
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
}

const lab = { attachSession, openMicrophone, startCapture, run, finish };
export type Lab = typeof lab;
(window as unknown as { lab: Lab }).lab = lab;
