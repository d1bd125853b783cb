import { TestingError } from '../errors.js';
import { toSamples, type AudioTime } from '../speech/time.js';
import type { FaultStep } from './steps.js';

/**
 * Named fault scenarios: the steps are drawn from a seed, so a scenario that found a bug finds it
 * again with the same seed. `audio` is how much audio the test sends: steps fall inside it.
 *
 *   flaky-wifi          three incidents, one in each third of the audio: a link stall of 150–600 ms or
 *                       a reset connection
 *   rotation-storm      the service rotates the session every 0.5–1.5 s of audio
 *   finish-under-stall  acks withheld from 70 % of the audio for 1.5 s, and the link stalls for 800 ms
 *                       as the last frame arrives, so the finish is sent into a stalled link
 */
export type ScenarioName = 'flaky-wifi' | 'rotation-storm' | 'finish-under-stall';
export const SCENARIOS: readonly ScenarioName[] = ['flaky-wifi', 'rotation-storm', 'finish-under-stall'];

export interface ScenarioOptions {
  /** How much audio the test sends (samples, '10s'). */
  readonly audio: AudioTime;
  /** Default 1. */
  readonly seed?: number;
}

export function scenario(name: ScenarioName, options: ScenarioOptions): FaultStep[] {
  const total = toSamples(options.audio, 'audio', 'TESTING_INVALID_FAULT');
  if (total < 16_000) throw new TestingError('TESTING_INVALID_FAULT', `scenario ${name}: needs at least one second of audio (got ${total} samples)`);
  const seed = options.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new TestingError('TESTING_INVALID_FAULT', `scenario ${name}: seed must be a whole number`);
  const random = mulberry32(seed);
  const between = (low: number, high: number): number => Math.floor(low + random() * (high - low));
  switch (name) {
    case 'flaky-wifi':
      return [0, 1, 2].map((third): FaultStep => {
        const at = between((total * (third * 3 + 1)) / 10, (total * (third * 3 + 3)) / 10);
        return random() < 0.5 ? { at, do: 'cut' } : { at, do: 'stall', ms: between(150, 600) };
      });
    case 'rotation-storm': {
      const steps: FaultStep[] = [];
      for (let at = 16_000 + between(0, 8_000); at < total * 0.9; at += between(8_000, 24_000)) steps.push({ at, do: 'rotate' });
      return steps;
    }
    case 'finish-under-stall':
      return [
        { at: Math.floor(total * 0.7), do: 'withholdAcks', forMs: 1_500 },
        { at: total, do: 'stall', ms: 800 },
      ];
    default:
      throw new TestingError('TESTING_INVALID_FAULT', `unknown scenario ${JSON.stringify(name)}; use ${SCENARIOS.join(', ')}`);
  }
}

/** A small seeded generator (the same sequence for the same seed, everywhere). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
