import { placeScript, scriptEnd, type SpeechScript } from './script.js';
import { SAMPLE_RATE, toSamples, type AudioTime } from './time.js';

export interface ScriptAudioOptions {
  /** Silence after the last line, so its line is committed before a finish (default 500 ms). */
  readonly tail?: AudioTime;
  /** Seed of the faint noise under everything (default 1): every sample differs, stored-audio checks mean something. */
  readonly seed?: number;
}

/**
 * 16 kHz mono PCM16 that matches a speech script: a tone for each word where the script places it,
 * near-silence between. Any audio of the right length drives the scripted recognizer; this one also
 * sounds like speech to a voice gate and to the deterministic recognizer, and is the same for the same
 * script and seed.
 */
export function scriptAudio(script: SpeechScript, options: ScriptAudioOptions = {}): Int16Array {
  const lines = placeScript(script);
  const tail = toSamples(options.tail ?? '500ms', 'tail');
  const seed = options.seed ?? 1;
  const out = new Int16Array(scriptEnd(lines) + tail);
  for (let i = 0; i < out.length; i++) out[i] = ((Math.imul(i + seed * 7919, 2654435761) >>> 16) % 64) - 32;
  let toneIndex = 0;
  const fade = SAMPLE_RATE / 100;
  for (const line of lines) {
    for (const word of line.words) {
      const hz = 220 + ((toneIndex++ * 97 + seed * 31) % 600);
      // A word sounds for all but its last 40 ms, fading in and out over 10 ms (no clicks).
      const sounding = Math.max(1, word.end - word.start - SAMPLE_RATE / 25);
      for (let n = 0; n < sounding; n++) {
        const envelope = Math.min(1, n / fade, (sounding - n) / fade);
        out[word.start + n] = Math.round(0.4 * 32767 * envelope * Math.sin((2 * Math.PI * hz * n) / SAMPLE_RATE)) + (out[word.start + n] as number);
      }
    }
  }
  return out;
}
