import { readFileSync } from 'node:fs';
import { SoundClone } from '@soundclone/core';
import { BENCH_KEY, hostServer } from '../server/host.js';
import { TESTDATA, librivoxIds, testRecording } from '../testdata.js';
import { CORPUS_RATE, phrasesOf } from './corpus.js';

/**
 * WER of the gated session against the ungated one, through the reference server and PocketSphinx:
 * each of pocketsphinx-testdata's five LibriVox clips, split at its pauses into phrases (corpus.ts
 * phrasesOf) with `PAUSE_MS` of digital silence inserted between them and before the first, is sent
 * once with `gate: false` and once with `gate: true` (the session's gate, defaults); each run's
 * committed lines are scored against the clip's transcription.
 */
const PAUSE_MS = 2000;

export interface WerRow {
  readonly clips: number;
  readonly words: number;
  readonly audioSeconds: number;
  readonly ungated: number;
  readonly gated: number;
  /** Samples skipped over samples captured in the gated runs. */
  readonly savedShare: number;
  readonly ungatedText: string[];
  readonly gatedText: string[];
}

function transcriptions(): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const line of readFileSync(`${TESTDATA}/librivox/transcription`, 'utf8').trim().split('\n')) {
    const m = /^(.*)\((.+)\)\s*$/.exec(line);
    if (m === null) continue;
    map.set(m[2]!, words(m[1]!.replace(/<\/?s>/g, '')));
  }
  return map;
}

function words(text: string): string[] {
  return text.toLowerCase().replace(/[^a-z' ]/g, ' ').split(/\s+/).filter((w) => w !== '');
}

/** Word-level edit distance. */
function errors(reference: readonly string[], hypothesis: readonly string[]): number {
  let previous = Array.from({ length: hypothesis.length + 1 }, (_, j) => j);
  for (let i = 1; i <= reference.length; i++) {
    const current = [i];
    for (let j = 1; j <= hypothesis.length; j++) {
      const substitution = previous[j - 1]! + (reference[i - 1] === hypothesis[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[hypothesis.length]!;
}

/** One clip's stream: silence, then each phrase followed by silence. */
function streamOf(clip: Int16Array): Float32Array {
  const pause = new Float32Array((PAUSE_MS * CORPUS_RATE) / 1000);
  const parts: Float32Array[] = [pause];
  for (const phrase of phrasesOf(Float32Array.from(clip, (v) => v / 32768))) parts.push(phrase, pause);
  const out = new Float32Array(parts.reduce((n, p) => n + p.length, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.length), 0);
  return out;
}

export async function gatedWer(progress: (text: string) => void = () => undefined): Promise<WerRow> {
  const server = await hostServer({ in: 'this-process', recognizer: 'pocketsphinx', decoders: 2 });
  try {
    const client = new SoundClone({ accessKey: BENCH_KEY, baseUrl: server.url });
    const truth = transcriptions();
    let words_ = 0, ungatedErrors = 0, gatedErrors = 0, samples = 0, skipped = 0;
    const ungatedText: string[] = [];
    const gatedText: string[] = [];
    for (const id of librivoxIds()) {
      const reference = truth.get(id) ?? [];
      const stream = streamOf(testRecording(`librivox/${id}`));
      words_ += reference.length;
      for (const gate of [false, true]) {
        progress(`vad: WER, ${id}, ${gate ? 'gated' : 'ungated'}…`);
        const session = await client.stt.realtime.connect({ gate });
        for (let at = 0; at < stream.length; at += 320) {
          await session.whenWritable();
          session.write(stream.subarray(at, Math.min(stream.length, at + 320)));
        }
        const result = await session.finish({ timeoutMs: 120_000 });
        const text = result.lines.map((l) => l.text).join(' ');
        const e = errors(reference, words(text));
        if (gate) {
          gatedErrors += e;
          gatedText.push(text);
          samples += stream.length;
          skipped += session.stats.skippedSamples;
        } else {
          ungatedErrors += e;
          ungatedText.push(text);
        }
      }
    }
    return {
      clips: truth.size, words: words_, audioSeconds: samples / CORPUS_RATE,
      ungated: ungatedErrors / words_, gated: gatedErrors / words_, savedShare: skipped / samples, ungatedText, gatedText,
    };
  } finally {
    await server.close();
  }
}
