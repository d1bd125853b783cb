import { afterEach, describe, expect, it } from 'vitest';
import { SOCKET_FEATURES } from '@soundclone/core/internal';
import { KEY_A, serverForSuite, start, type TestServer } from '../support/server.js';
import { connect, createSession, open, reconnect, socketUrl, speech, storedAudio } from './support.js';

/**
 * Skip frames (docs/protocol.md "Skipped time"): captured time a client's voice gate did not send. The
 * received cursor moves over it, nothing is charged for it, it is no transport gap, and line and word
 * times stay in capture time.
 */
describe('realtime socket: skipped time', () => {
  const server = serverForSuite({ retainRealtimeAudioSamples: 16_000 * 120 });
  const extra: TestServer[] = [];
  afterEach(async () => {
    for (const s of extra.splice(0)) await s.close();
  });

  /**
   * The stretches of a speech() signal a gate would skip: inside every silence of at least 600 ms,
   * after 320 ms of it were sent (the hangover), on the 20 ms grid so the recogniser's frames fall
   * where they fall in the whole signal.
   */
  function silences(signal: Int16Array): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    for (let at = 0; at < signal.length;) {
      if (signal[at] !== 0) {
        at++;
        continue;
      }
      let end = at;
      while (end < signal.length && signal[end] === 0) end++;
      if (end - at >= 9600) {
        const from = Math.ceil((at + 5120) / 320) * 320;
        const to = Math.floor(end / 320) * 320;
        if (to > from) out.push([from, to]);
      }
      at = end;
    }
    return out;
  }

  it('a gated stream gives the same lines, words and times as the whole stream, is charged only for its audio, and is no gap', async () => {
    const signal = speech(4, 3);
    const skips = silences(signal);
    expect(skips.length).toBe(4);
    const skipped = skips.reduce((n, [a, b]) => n + b - a, 0);

    const whole = await connect(server);
    whole.peer.stream(1, signal);
    whole.peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const wholeEnd = (await whole.peer.waitFor('session.finished')).session;

    const gated = await connect(server);
    expect(gated.ready.features).toContain(SOCKET_FEATURES.skipFrames);
    let at = 0;
    for (const [from, to] of skips) {
      gated.peer.stream(1, signal, at, from);
      gated.peer.skip(1, from, to - from);
      at = to;
    }
    gated.peer.stream(1, signal, at);
    await gated.peer.acked(signal.length);
    const open = (await server.call('GET', `/stt/realtime/sessions/${gated.created.sessionId}`)).body.data;
    gated.peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const gatedEnd = (await gated.peer.waitFor('session.finished')).session;

    expect(wholeEnd.lines.length).toBe(4);
    const shape = (l: any): unknown => ({ text: l.text, words: l.words });
    expect(gatedEnd.lines.map(shape)).toEqual(wholeEnd.lines.map(shape));
    const times = (peer: typeof whole.peer): unknown => peer.all('transcript.line').map((m) => [m.line.startMs, m.line.endMs]);
    expect(times(gated.peer)).toEqual(times(whole.peer));
    // Every line of the gated stream was committed by the skip after it, before the audio that follows.
    expect(gated.peer.all('transcript.line').length).toBe(4);

    expect(gatedEnd.status).toBe('COMPLETED');
    expect(gatedEnd.notices.map((n: { code: string }) => n.code)).not.toContain('TRANSPORT_GAP');
    expect(gatedEnd.usage).toMatchObject({ receivedSamples: String(signal.length), capturedSamples: String(signal.length) });
    const charge = (samples: number): string => String(Math.ceil(samples / 16_000) * 10);
    expect(wholeEnd.usage.billableCharacters).toBe(charge(signal.length));
    expect(gatedEnd.usage.billableCharacters).toBe(charge(signal.length - skipped));
    expect(open.usage.estimatedCharacters).toBe(charge(signal.length - skipped));
    // The stored audio (test-only) keeps capture positions: zeros where time was skipped.
    const stored = await storedAudio(server, gated.created.sessionId);
    expect(stored.length).toBe(signal.length);
    const expected = signal.slice();
    for (const [from, to] of skips) expected.fill(0, from, to);
    expect(stored).toEqual(expected);
  });

  it('a long skip is charged as nothing: 1 s of audio, 60 s skipped, 1 s of audio settle 2 s', async () => {
    const signal = speech(1, 5).subarray(0, 16_000);
    const { created, peer } = await connect(server);
    peer.stream(1, signal);
    peer.skip(1, 16_000, 60 * 16_000);
    peer.stream(1, signal, 0, signal.length);
    // stream() numbers frames from 0: send the second second at its capture position instead.
    for (let at = 0; at < 16_000; at += 320) peer.frame(1, 61 * 16_000 + at, signal.subarray(at, at + 320));
    await peer.acked(62 * 16_000);
    peer.json({ type: 'session.finish', capturedSamples: String(62 * 16_000) });
    const finished = (await peer.waitFor('session.finished')).session;
    expect(finished).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: String(62 * 16_000), billableCharacters: '20' } });
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(JSON.stringify(task)).not.toContain('TRANSPORT_GAP');
  });

  it('a skip is checked like a frame: duplicates dropped, overlaps trimmed, past the cursor or in another epoch refused', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(1, 9).subarray(0, 3200);
    peer.stream(1, signal);
    peer.skip(1, 3200, 1600);
    await peer.acked(4800);
    // A resend after a reconnect: the same skip again (duplicate) and one reaching past it (trimmed).
    peer.skip(1, 3200, 1600);
    peer.skip(1, 4000, 2000);
    await peer.acked(6000);
    peer.skip(1, 7000, 100);
    await peer.waitFor('error', (m) => m.code === 'BEYOND_CURSOR');
    peer.skip(2, 6000, 100);
    await peer.waitFor('error', (m) => m.code === 'WRONG_EPOCH');
    const bad = Buffer.alloc(22);
    bad.set([0x53, 0x43, 1, 1]);
    peer.ws.send(bad);
    expect((await peer.waitFor('error', (m) => m.code === 'BAD_FRAME')).details).toEqual({ reason: 'BAD_SKIP' });
    const view = (await server.call('GET', `/stt/realtime/sessions/${created.sessionId}`)).body.data;
    expect(view.usage).toMatchObject({ receivedSamples: '6000', sentSamples: '6000' });
    await peer.close();
    // A new socket resumes at the cursor the skip moved.
    const again = await reconnect(server, created.sessionId);
    expect(again.ready.receivedSamples).toBe('6000');
    await again.peer.close();
  });

  it('in manual commit mode a skip commits nothing: the line waits for the finish, its times still in capture time', async () => {
    const signal = speech(2, 4);
    const skips = silences(signal);
    const whole = await connect(server, { options: { segmentCommitMode: 'manual' } });
    whole.peer.stream(1, signal);
    whole.peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const wholeEnd = (await whole.peer.waitFor('session.finished')).session;
    const gated = await connect(server, { options: { segmentCommitMode: 'manual' } });
    let at = 0;
    for (const [from, to] of skips) {
      gated.peer.stream(1, signal, at, from);
      gated.peer.skip(1, from, to - from);
      at = to;
    }
    gated.peer.stream(1, signal, at);
    await gated.peer.acked(signal.length);
    expect(gated.peer.all('transcript.line')).toEqual([]);
    gated.peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const gatedEnd = (await gated.peer.waitFor('session.finished')).session;
    expect(gatedEnd.lines.length).toBe(1);
    expect(gatedEnd.lines.map((l: any) => [l.text, l.words])).toEqual(wholeEnd.lines.map((l: any) => [l.text, l.words]));
  });

  it('skips past the spending limit: skipped time needs no balance', async () => {
    const poor = await start({ accountOverrides: { [KEY_A]: { totalMonthlyChars: 0, totalOrderChars: 10 } }, realtimeTiming: { supplementWaitMs: 200 } });
    extra.push(poor);
    const created = await createSession(poor);
    const peer = await open(socketUrl(poor, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    const signal = speech(1, 2).subarray(0, 8000);
    peer.stream(1, signal);
    peer.skip(1, 8000, 10 * 16_000);
    // 12,000 samples of audio in all: within the one second 10 Characters pay for.
    for (let at = 0; at < 4000; at += 320) peer.frame(1, 168_000 + at, signal.subarray(at, Math.min(4000, at + 320)));
    await peer.acked(172_000);
    expect(peer.all('session.notice')).toEqual([]);
    peer.json({ type: 'session.finish', capturedSamples: '172000' });
    const finished = (await peer.waitFor('session.finished')).session;
    expect(finished).toMatchObject({ status: 'COMPLETED', usage: { receivedSamples: '172000', billableCharacters: '10' } });
  });
});
