import { SoundClone, type CaptionLine } from '@soundclone/core';
import { BENCH_KEY, hostServer } from '../server/host.js';
import { sleep } from '../speech.js';
import { joined, librivoxIds, testRecording } from '../testdata.js';

const RATE = 16_000;

/** What a live session told the client, with the client's clock (ms since the first sample was written). */
export type TraceEvent =
  | { readonly atMs: number; readonly kind: 'partial'; readonly epoch: number; readonly text: string }
  | { readonly atMs: number; readonly kind: 'line'; readonly line: CaptionLine }
  | { readonly atMs: number; readonly kind: 'update'; readonly line: CaptionLine };

export interface Trace {
  readonly events: readonly TraceEvent[];
  readonly audioS: number;
  readonly clips: number;
  readonly finalWords: readonly string[];
}

/** The LibriVox recordings pocketsphinx-testdata ships, each followed by a second of silence. */
function librivox(): { pcm: Int16Array; clips: number } {
  const ids = librivoxIds();
  return { pcm: joined(ids.flatMap((id) => [testRecording(`librivox/${id}`), new Int16Array(RATE)])), clips: ids.length };
}

/**
 * Streams the recordings at 1x real time (as a microphone would) through the reference server with
 * PocketSphinx, in its own process, and records every partial, line and line update with its arrival
 * time. The caption engine is then replayed over this one trace for each setting, so every setting
 * sees exactly the same input.
 */
export async function recordTrace(): Promise<Trace> {
  const { pcm, clips } = librivox();
  const server = await hostServer({ in: 'child', recognizer: 'pocketsphinx' });
  try {
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const session = await client.stt.realtime.connect({});
    const events: TraceEvent[] = [];
    let started = Number.NaN;
    const now = (): number => performance.now() - started;
    session.on('partial', (m) => events.push({ atMs: now(), kind: 'partial', epoch: m.epoch, text: m.text }));
    session.on('line', (line) => events.push({ atMs: now(), kind: 'line', line }));
    session.on('line.updated', (u) => events.push({ atMs: now(), kind: 'update', line: u.line }));
    started = performance.now();
    let next = 0;
    while (next < pcm.length) {
      const due = Math.min(pcm.length, Math.floor(((now() / 1000) * RATE) / 320) * 320);
      if (due > next) {
        session.writePcm16(pcm.subarray(next, due));
        next = due;
      }
      await sleep(10);
    }
    const result = await session.finish({ timeoutMs: 120_000 });
    const finalWords = result.lines.flatMap((l) => (l.revisedText ?? l.text).split(/\s+/u).filter((w) => w !== ''));
    return { events, audioS: pcm.length / RATE, clips, finalWords };
  } finally {
    await server.close();
  }
}
