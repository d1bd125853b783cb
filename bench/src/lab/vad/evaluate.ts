import { VoiceGate, type VoiceDetector } from '@soundclone/core/internal';
import { CORPUS_RATE, type Stream } from './corpus.js';

export const BLOCK = 128;
/** The onset completeness window: the 200 ms before an onset and the 200 ms after it must all be sent. */
export const BEFORE_MS = 200;
const AFTER_MS = 200;

export interface GateSettings {
  readonly preRollMs: number;
  readonly hangoverMs: number;
  readonly commitAfterMs: number;
}

export interface StreamScore {
  readonly utterances: number;
  /** Utterances with every sample of [onset - 200 ms, onset + 200 ms) sent (the part after clipped to the utterance). */
  readonly complete: number;
  /** Utterances none of whose samples was sent. */
  readonly missed: number;
  /** Share of the utterances' own samples sent. */
  readonly speechSent: number;
  /** The utterances' samples. */
  readonly speechSamples: number;
  /** Share of all the stream's samples sent. */
  readonly sent: number;
  /** Share of the stream that is silence (outside every utterance). */
  readonly silence: number;
}

/** The stream's 128-sample blocks, as views made once (the last partial block dropped). */
export function blocksOf(samples: Float32Array): Float32Array[] {
  const out: Float32Array[] = [];
  for (let at = 0; at + BLOCK <= samples.length; at += BLOCK) out.push(samples.subarray(at, at + BLOCK));
  return out;
}

/**
 * Runs the gate over the stream block by block and marks every sample it says to send; `detector`
 * null is the gate off (everything sent). Fails when a decision sends a range twice or backwards.
 */
export function scoreStream(stream: Stream, blocks: readonly Float32Array[], detector: VoiceDetector | null, settings: GateSettings): StreamScore {
  const n = blocks.length * BLOCK;
  const sent = new Uint8Array(n);
  if (detector === null) sent.fill(1);
  else {
    detector.reset();
    const gate = new VoiceGate({ sampleRate: CORPUS_RATE, detector, ...settings });
    let until = 0;
    for (const block of blocks) {
      const d = gate.process(block);
      if (d.sendTo > d.sendFrom) {
        if (d.sendFrom < until || d.sendTo > gate.position) throw new Error(`${stream.id}: bad range [${d.sendFrom}, ${d.sendTo}) after ${until}`);
        sent.fill(1, d.sendFrom, d.sendTo);
        until = d.sendTo;
      }
    }
  }
  const before = (BEFORE_MS * CORPUS_RATE) / 1000;
  const after = (AFTER_MS * CORPUS_RATE) / 1000;
  let complete = 0, missed = 0, speech = 0, speechSent = 0, total = 0;
  for (const [onset, end] of stream.utterances) {
    if (end > n) break;
    let ok = true;
    for (let i = Math.max(0, onset - before); i < Math.min(end, onset + after); i++) if (sent[i] === 0) { ok = false; break; }
    let hits = 0;
    for (let i = onset; i < end; i++) hits += sent[i]!;
    complete += ok ? 1 : 0;
    missed += hits === 0 ? 1 : 0;
    speech += end - onset;
    speechSent += hits;
    total++;
  }
  let all = 0;
  for (let i = 0; i < n; i++) all += sent[i]!;
  return { utterances: total, complete, missed, speechSent: speechSent / speech, speechSamples: speech, sent: all / n, silence: 1 - speech / n };
}
