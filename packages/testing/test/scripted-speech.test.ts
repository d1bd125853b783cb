import { describe, expect, it } from 'vitest';
import type { RealtimeSocketSession } from '@soundclone/core';
import { ScriptedRecognizer, placeScript, scriptAudio, startTestServer, toSamples, type SpeechScript } from '@soundclone/testing';

const SCRIPT: SpeechScript = [
  { at: '0.5s', say: 'hello world' },
  { at: '2s', say: 'the quick brown fox', supplements: { language: 'de', languageProbability: 0.7 } },
  { at: '4s', say: 'goodbye', duration: '600ms' },
];

/** Every event of a session that carries transcript content, as one string per event. */
function record(session: RealtimeSocketSession): string[] {
  const log: string[] = [];
  const json = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  for (const name of ['partial', 'line', 'line.updated'] as const) session.on(name, (payload: unknown) => log.push(`${name} ${json(payload)}`));
  return log;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

describe('speech script', () => {
  it('places lines in samples and refuses what cannot be placed', () => {
    const placed = placeScript(SCRIPT);
    expect(placed.map((l) => [l.start, l.end])).toEqual([[8_000, 17_600], [32_000, 51_200], [64_000, 73_600]]);
    expect(placed[0]?.words.map((w) => [w.text, w.start, w.end])).toEqual([['hello', 8_000, 12_800], ['world', 12_800, 17_600]]);
    expect(toSamples('250ms', 'x')).toBe(4_000);
    const invalid = (script: unknown): unknown => {
      try {
        placeScript(script as SpeechScript);
      } catch (error) {
        return (error as { code?: string }).code;
      }
      return 'accepted';
    };
    expect(invalid([{ at: '1s', say: '   ' }])).toBe('TESTING_INVALID_SCRIPT');
    expect(invalid([{ at: 'soon', say: 'hi' }])).toBe('TESTING_INVALID_SCRIPT');
    expect(invalid([{ at: -1, say: 'hi' }])).toBe('TESTING_INVALID_SCRIPT');
    expect(invalid([{ at: '1s', say: 'one two three' }, { at: '1.5s', say: 'overlaps' }])).toBe('TESTING_INVALID_SCRIPT');
    expect(invalid([{ at: '1s', say: 'hi', supplements: { delayMs: { language: -5 } } }])).toBe('TESTING_INVALID_SCRIPT');
  });

  it('makes matching audio: tones where words are, the same for the same seed', () => {
    const pcm = scriptAudio(SCRIPT);
    expect(pcm.length).toBe(73_600 + 8_000);
    const loud = (from: number, to: number): number => pcm.subarray(from, to).reduce((max, s) => Math.max(max, Math.abs(s)), 0);
    expect(loud(9_000, 11_000)).toBeGreaterThan(5_000);
    expect(loud(20_000, 30_000)).toBeLessThan(64);
    expect(scriptAudio(SCRIPT)).toEqual(pcm);
    expect(scriptAudio(SCRIPT, { seed: 2 })).not.toEqual(pcm);
  });

  it('recognizes the same events however the audio is framed', () => {
    const recognizer = new ScriptedRecognizer(SCRIPT);
    const run = (frame: number): string => {
      const stream = recognizer.openStream({ maxSpeakers: 1 });
      const events = [];
      for (let at = 0; at < 81_600; at += frame) events.push(...stream.push(new Int16Array(Math.min(frame, 81_600 - at))));
      events.push(...stream.flush());
      return JSON.stringify(events);
    };
    const reference = run(320);
    expect(JSON.parse(reference).filter((e: { type: string }) => e.type === 'segment')).toHaveLength(3);
    for (const frame of [1, 37, 4_800, 81_600]) expect(run(frame)).toBe(reference);
  });

  it('commits the words heard so far on a flush; the rest of the line follows as its own line', () => {
    const stream = new ScriptedRecognizer([{ at: 0, say: 'one two three four', duration: 4_000 }]).openStream({ maxSpeakers: 1 });
    expect(stream.push(new Int16Array(2_000)).map((e) => (e.type === 'partial' ? e.text : ''))).toEqual(['one', 'one two']);
    const flushed = stream.flush();
    expect(flushed.map((e) => (e.type === 'segment' ? e.segment.words.map((w) => w.text).join(' ') : e.type))).toEqual(['one two']);
    expect(stream.partial).toBe('');
    const rest = stream.push(new Int16Array(2_000));
    expect(rest.map((e) => (e.type === 'segment' ? `${e.segment.startMs} ${e.segment.words.map((w) => w.text).join(' ')}` : e.text))).toEqual(['three', '125 three four']);
  });
});

describe('scripted speech through the service', () => {
  it('sends partials and lines when the received audio reaches them, with the scripted supplements', async () => {
    const server = await startTestServer({ script: SCRIPT });
    try {
      const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true } });
      const lines: string[] = [];
      const partials: string[] = [];
      session.on('line', (line) => lines.push(line.text));
      session.on('partial', (partial) => partials.push(partial.text));
      const pcm = scriptAudio(SCRIPT);
      // Up to just before the end of "world": one partial, no line yet.
      session.writePcm16(pcm.subarray(0, 17_280));
      await until(() => partials.length === 1, 'the first partial');
      expect(partials).toEqual(['hello']);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(lines).toEqual([]);
      // Past it: the line.
      session.writePcm16(pcm.subarray(17_280, 17_600));
      await until(() => lines.length === 1, 'the first line');
      expect(lines).toEqual(['hello world']);
      session.writePcm16(pcm.subarray(17_600));
      const result = await session.finish();
      expect(result.lines.map((l) => [l.text, l.languageCode, l.languageProbability])).toEqual([
        ['hello world', 'en', 0.9],
        ['the quick brown fox', 'de', 0.7],
        ['goodbye', 'en', 0.9],
      ]);
      expect(partials).toEqual(['hello', 'the', 'the quick', 'the quick brown']);
    } finally {
      await server.close();
    }
  });

  it('delays and withholds supplements as the script says', async () => {
    const script: SpeechScript = [
      { at: 0, say: 'held back', supplements: { withhold: ['language'] } },
      { at: '1s', say: 'comes later', supplements: { delayMs: { language: 300 } } },
    ];
    const server = await startTestServer({ script, server: { realtimeTiming: { supplementWaitMs: 1_000 } } });
    try {
      const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true } });
      const updated: Array<[string, string | null, string]> = [];
      const seen = new Map<string, number>();
      session.on('line', (line) => seen.set(line.text, performance.now()));
      session.on('line.updated', (update) => {
        updated.push([update.line.text, update.line.languageCode, String(update.supplement)]);
        if (update.line.languageCode !== null) seen.set(`${update.line.text} updated`, performance.now());
      });
      session.writePcm16(scriptAudio(script));
      const result = await session.finish();
      expect(result.lines.map((l) => l.languageCode)).toEqual([null, 'en']);
      expect(updated.filter(([, language]) => language !== null)).toEqual([['comes later', 'en', 'language']]);
      // The service held it 300 ms after the line (the line itself may have taken a moment to arrive).
      expect((seen.get('comes later updated') ?? 0) - (seen.get('comes later') ?? Infinity)).toBeGreaterThanOrEqual(250);
      expect(result.notices.map((n) => [n.code, n.lineIds])).toEqual([['SUPPLEMENT_NOT_RECEIVED', ['line_0001']]]);
    } finally {
      await server.close();
    }
  });

  it('gives a byte-identical event log in 100 of 100 runs', async () => {
    const pcm = scriptAudio(SCRIPT);
    const logs = new Set<string>();
    let runs = 0;
    for (let run = 0; run < 100; run++) {
      const server = await startTestServer({ script: SCRIPT });
      try {
        const session = await server.client().stt.realtime.connect({ options: { includeDetectedLanguage: true, includeAlignment: true } });
        const log = record(session);
        // Framed differently every run: the log must not show it.
        const frame = 160 * (1 + (run % 7));
        for (let at = 0; at < pcm.length; at += frame) session.writePcm16(pcm.subarray(at, at + frame));
        const result = await session.finish();
        log.push(`result ${JSON.stringify(result.lines)}`);
        logs.add(log.join('\n'));
        runs += 1;
      } finally {
        await server.close();
      }
    }
    expect(runs).toBe(100);
    expect(logs.size).toBe(1);
    expect([...logs][0]).toContain('the quick brown fox');
  });
});
