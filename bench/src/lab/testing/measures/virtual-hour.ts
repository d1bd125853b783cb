import { loadavg } from 'node:os';
import { scriptAudio, startTestServer, type SpeechScript } from '@soundclone/testing';
import type { TestingMeasure } from '../measure.js';

/** A line every five minutes of the hour; the last one ends at 57:00.9, the tail fills the hour. */
const SCRIPT: SpeechScript = Array.from({ length: 12 }, (_, i) => ({ at: `${(i * 5 + 2) * 60}s`, say: `line number ${i + 1}` }));
const TAIL = '179.1s';
const HOUR_SAMPLES = 16_000 * 3_600;

/**
 * The one-hour virtual session of the testing kit's README: `startTestServer({ time: 'audio' })`, an
 * hour of scripted audio written through the SDK as fast as it takes it (`whenWritable`, 100 s in
 * flight), the service rotating every 20 minutes of its clock, then finish. Wall time from connect to
 * the finished session; audio made before the clock starts. The row fails (met: no) on a wrong
 * transcript or a clock that did not follow the audio, whatever the time.
 */
export const measure: TestingMeasure = {
  id: 'virtual-hour',
  label: "one-hour session on virtual time (time: 'audio'): wall time",
  async run(signal) {
    const pcm = scriptAudio(SCRIPT, { tail: TAIL });
    if (pcm.length !== HOUR_SAMPLES) throw new Error(`the script's audio is ${pcm.length} samples, not an hour`);
    const server = await startTestServer({ script: SCRIPT, time: 'audio', retainAudioSeconds: 0, server: { realtimeTiming: { rotateEveryMs: 1_200_000 } } });
    try {
      const startedAt = server.clock.now();
      const wallStart = performance.now();
      const session = await server.client().stt.realtime.connect({ maxInFlightSamples: 1_600_000 });
      let rotations = 0;
      session.on('rotated', () => (rotations += 1));
      for (let at = 0; at < pcm.length; at += 160_000) {
        signal?.throwIfAborted();
        const block = pcm.subarray(at, at + 160_000);
        await session.whenWritable({ samples: block.length, ...(signal !== undefined ? { signal } : {}) });
        session.writePcm16(block);
      }
      const result = await session.finish();
      const wallMs = performance.now() - wallStart;
      const virtualMs = server.clock.now() - startedAt;
      const linesRight = result.lines.map((l) => l.text).join('|') === SCRIPT.map((l) => l.say).join('|');
      const correct = linesRight && virtualMs === 3_600_000 && rotations === 2;
      return {
        result: `${(wallMs / 1000).toFixed(1)} s`,
        target: 'under 5 s, 12 of 12 lines, 2 rotations',
        met: correct && wallMs < 5_000,
        detail: `${result.lines.length} lines${linesRight ? '' : ' (WRONG)'}, ${rotations} rotations, virtual clock moved ${(virtualMs / 60_000).toFixed(1)} min, ${(3_600_000 / wallMs).toFixed(0)}× real time; load average ${(loadavg()[0] ?? 0).toFixed(1)} at the end (the SDK and the service share one thread)`,
      };
    } finally {
      await server.close();
    }
  },
};
