import { describe, expect, it } from 'vitest';
import type { RealtimeSocketSession } from '@soundclone/core';
import { EchoRecognizer, echoAudio, encodeLikeSdk, placeEcho, startTestServer, type SpeechScript } from '@soundclone/testing';

const SCRIPT: SpeechScript = [
  { at: '0.3s', say: 'hello world' },
  { at: '2.5s', say: "the tone's 42 words" },
  { at: '6s', say: 'goodbye' },
];
const SAID = SCRIPT.map((l) => l.say);

/** Float audio in [-1, 1] as the service's stream hears it: PCM16. */
function pcm16(audio: Float32Array): Int16Array {
  return Int16Array.from(audio, (v) => Math.max(-32768, Math.min(32767, Math.round(v * 32767))));
}

/** Every event of a session that carries transcript content, one string per event. */
function record(session: RealtimeSocketSession): string[] {
  const log: string[] = [];
  const json = (value: unknown): string => JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  for (const name of ['partial', 'line', 'line.updated'] as const) session.on(name, (payload: unknown) => log.push(`${name} ${json(payload)}`));
  return log;
}

describe('echo: the tone code', () => {
  it('spells the script in tones and refuses what it cannot say or place', () => {
    const lines = placeEcho(SCRIPT);
    // "hello": 5 letters of 100 ms less the last gap; "world" 200 ms later.
    expect(lines[0]).toEqual({ startMs: 300, endMs: 300 + 460 + 200 + 460, words: ['hello', 'world'] });
    const audio = echoAudio(SCRIPT);
    expect(audio.length).toBe(Math.round(((lines[2]?.endMs ?? 0) + 600) * 16));
    expect(echoAudio(SCRIPT)).toEqual(audio);
    const code = (f: () => unknown): unknown => {
      try {
        f();
      } catch (error) {
        return (error as { code?: string }).code;
      }
      return 'accepted';
    };
    expect(code(() => echoAudio([{ at: 0, say: 'naïve' }]))).toBe('TESTING_INVALID_SCRIPT');
    expect(code(() => echoAudio([{ at: 0, say: 'one' }, { at: '0.5s', say: 'too close' }]))).toBe('TESTING_INVALID_SCRIPT');
    expect(code(() => echoAudio(SCRIPT, { sampleRate: 1_000 }))).toBe('TESTING_INVALID_SCRIPT');
  });

  it('hears the words back, the same events however the audio is framed', () => {
    const audio = pcm16(echoAudio(SCRIPT));
    const run = (frame: number): string => {
      const stream = new EchoRecognizer().openStream({ maxSpeakers: 1 });
      const events = [];
      for (let at = 0; at < audio.length; at += frame) events.push(...stream.push(audio.subarray(at, at + frame)));
      events.push(...stream.flush());
      return JSON.stringify(events);
    };
    const reference = run(320);
    const segments = JSON.parse(reference).filter((e: { type: string }) => e.type === 'segment');
    expect(segments.map((e: { segment: { words: Array<{ text: string }> } }) => e.segment.words.map((w) => w.text).join(' '))).toEqual(SAID);
    expect(segments[0].segment.startMs).toBe(300);
    for (const frame of [1, 37, 4_800, audio.length]) expect(run(frame)).toBe(reference);
  });

  it("survives the SDK's encode path from a 48 kHz and a 44.1 kHz capture", async () => {
    for (const rate of [48_000, 44_100]) {
      const stream = new EchoRecognizer().openStream({ maxSpeakers: 1 });
      const events = [...stream.push(encodeLikeSdk(echoAudio(SCRIPT, { sampleRate: rate }), rate)), ...stream.flush()];
      const heard = events.flatMap((e) => (e.type === 'segment' ? [e.segment.words.map((w) => w.text).join(' ')] : []));
      expect(heard, `at ${rate} Hz`).toEqual(SAID);
    }
  });
});

describe('echo through the service', () => {
  it('a 48 kHz capture written through the SDK comes back as the words, in a byte-identical event log run after run', async () => {
    const audio = echoAudio(SCRIPT, { sampleRate: 48_000 });
    const logs = new Set<string>();
    for (let run = 0; run < 5; run++) {
      const server = await startTestServer({ recognizer: 'echo' });
      try {
        const session = await server.client().stt.realtime.connect({ sampleRate: 48_000, options: { includeAlignment: true } });
        const log = record(session);
        // Written in differently sized pieces every run: the log must not show it.
        const piece = [480, 1_024, 4_800, 333, 48_000][run] as number;
        for (let at = 0; at < audio.length; at += piece) session.write(audio.subarray(at, at + piece));
        const result = await session.finish();
        expect(result.lines.map((l) => l.text)).toEqual(SAID);
        log.push(`result ${JSON.stringify(result.lines)}`);
        logs.add(log.join('\n'));
        expect(() => server.setScript(SCRIPT)).toThrow(expect.objectContaining({ code: 'TESTING_INVALID_SCRIPT' }));
      } finally {
        await server.close();
      }
    }
    expect(logs.size).toBe(1);
  });
});
