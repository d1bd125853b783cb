import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PocketSphinxRecognizer } from '../../src/index.js';
import { start, type TestServer } from '../support/server.js';
import { connect, createSession } from '../realtime/support.js';
import { CLIP_0870, CLIP_0930, concat, readClip, wer } from './support.js';

/**
 * PocketSphinx behind a realtime session over the raw socket: partials and lines from real speech,
 * decoders handed back when a session finishes or its recovery window passes (so an abandoned session
 * does not hold ~100 MB).
 */
describe('realtime sessions with PocketSphinx', () => {
  let recognizer: PocketSphinxRecognizer;
  let server: TestServer;
  beforeAll(async () => {
    recognizer = new PocketSphinxRecognizer({ maxIdleDecoders: 0 });
    server = await start({ recognizer, realtimeTiming: { recoveryWindowMs: 400 } });
  });
  afterAll(async () => {
    await server.close();
    recognizer.close();
  });

  it('sends partials, then lines with aligned words and a null language; finishing returns the decoder', async () => {
    const { created, peer } = await connect(server, { options: { includeAlignment: true, includeDetectedLanguage: true } });
    expect(recognizer.decoders).toBe(1);
    // A second of silence between the recordings: a pause the detector ends the first line on.
    const pcm = concat(readClip(CLIP_0930.path), new Int16Array(16_000), readClip(CLIP_0870.path));
    peer.stream(1, pcm);
    peer.json({ type: 'session.finish', capturedSamples: String(pcm.length) });
    const finished = await peer.waitFor('session.finished', () => true, 60_000);
    const partials = peer.all('transcript.partial').filter((m: { text: string }) => m.text !== '');
    expect(partials.length).toBeGreaterThan(2);
    const lines = finished.session.lines as Array<{ text: string; languageCode: string | null; words: Array<{ text: string; startMs: number }> }>;
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(wer(`${CLIP_0930.text} ${CLIP_0870.text}`, lines.map((l) => l.text).join(' '))).toBeLessThanOrEqual(0.4);
    for (const line of lines) {
      expect(line.languageCode).toBeNull();
      expect(line.words.map((w) => w.text).join(' ')).toBe(line.text);
    }
    expect(created.sessionId).toBe(finished.session.sessionId);
    expect(recognizer.decoders).toBe(0);
    peer.close();
  });

  it('an abandoned session commits its open segment and frees its decoder when the recovery window passes', async () => {
    const created = await createSession(server);
    // A slot, but no decoder until audio comes: a session nobody connects to holds no ~90 MB.
    expect(recognizer.streams).toBe(1);
    expect(recognizer.decoders).toBe(0);
    const session = server.services.realtime.byId(created.sessionId)!;
    const clip = readClip(CLIP_0930.path);
    // No socket: the domain is fed directly, and speech is cut off mid-sentence (no pause to end it).
    session.audio.feed(1, 0n, clip.subarray(0, Math.floor(clip.length * 0.8)));
    expect(recognizer.decoders).toBe(1);
    expect(session.audio.lines).toHaveLength(0);
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(session.audio.expired).toBe(true);
    expect(recognizer.decoders).toBe(0);
    expect(recognizer.streams).toBe(0);
    expect(session.audio.lines).toHaveLength(1);
    const finished = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(Math.floor(clip.length * 0.8)) } });
    expect(finished.body.data.lines.map((l: { text: string }) => l.text)).toEqual([session.audio.lines[0]!.text]);
  });
});
