import { createHash } from 'node:crypto';
import type { RealtimeSocketSession } from '@soundclone/core';
import { scriptAudio, startTestServer, type SpeechScript } from '@soundclone/testing';
import type { TestingMeasure } from '../measure.js';

const RUNS = 200;
/** Frame sizes the audio is written in, one per run in turn: 10 ms to 70 ms, and one odd size. */
const FRAMES = [160, 320, 480, 640, 800, 960, 1_120, 317];

const SCRIPT: SpeechScript = [
  { at: '0.5s', say: 'hello world' },
  { at: '2s', say: 'the quick brown fox', supplements: { language: 'de', languageProbability: 0.7 } },
  { at: '4s', say: 'goodbye', duration: '600ms' },
  { at: '5.5s', say: 'one more line to close' },
];

/**
 * Event-log determinism: the same script and audio, written in a different framing each run, must
 * give a byte-identical log of every transcript event (partial, line, line.updated) and the finish's
 * lines. `RUNS` runs, a fresh server each; the result counts the runs whose log equals the first's.
 */
export const measure: TestingMeasure = {
  id: 'determinism',
  label: `Event-log determinism (${String(RUNS)} runs, ${String(FRAMES.length)} framings)`,
  async run(signal) {
    const pcm = scriptAudio(SCRIPT);
    const digests = new Map<string, number>();
    let first = '';
    let events = 0;
    for (let run = 0; run < RUNS; run++) {
      signal?.throwIfAborted();
      const server = await startTestServer({ script: SCRIPT });
      try {
        const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true, includeAlignment: true } });
        const log = record(session);
        const frame = FRAMES[run % FRAMES.length]!;
        for (let at = 0; at < pcm.length; at += frame) session.writePcm16(pcm.subarray(at, at + frame));
        const result = await session.finish();
        log.push(`result ${json(result.lines)}`);
        const digest = createHash('sha256').update(log.join('\n')).digest('hex');
        if (run === 0) {
          first = digest;
          events = log.length;
        }
        digests.set(digest, (digests.get(digest) ?? 0) + 1);
      } finally {
        await server.close();
      }
    }
    const identical = digests.get(first) ?? 0;
    return {
      result: `${String(identical)} of ${String(RUNS)} identical`,
      target: `${String(RUNS)} of ${String(RUNS)}`,
      met: identical === RUNS,
      detail: `${String(events)} entries a log; ${String(digests.size)} distinct log${digests.size === 1 ? '' : 's'}`,
    };
  },
};

/** Every event of a session that carries transcript content, as one string per event. */
function record(session: RealtimeSocketSession): string[] {
  const log: string[] = [];
  for (const name of ['partial', 'line', 'line.updated'] as const) session.on(name, (payload: unknown) => log.push(`${name} ${json(payload)}`));
  return log;
}

function json(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}
