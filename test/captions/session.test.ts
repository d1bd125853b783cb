import type { RunningServer } from '@soundclone/server';
import { attachCaptions, SrtWriter, WebVttWriter, type CueChange } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebVTTParser } from 'webvtt-parser';
import SrtParser from 'srt-parser-2';
import { ChaosProxy } from '../realtime/chaos-proxy.js';
import { EventCapture, clientFor, speech, startRealtimeServer } from '../realtime/support.js';
import { finalWords, latestFinal } from './support.js';

const RATE = 16_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A live session through a proxy that cuts the socket, with rotations and a pause: the final cues'
 * words are the final lines' words, in order, none lost or doubled; the WebVTT and SRT written live say
 * the same.
 */
describe('captions of a live session', () => {
  let server: RunningServer;
  let proxy: ChaosProxy;
  beforeAll(async () => {
    server = await startRealtimeServer({ realtimeTiming: { rotateEverySamples: RATE * 9 }, socket: { heartbeatIntervalMs: 100, heartbeatTimeoutMs: 1500 } });
    proxy = await new ChaosProxy(server.port).listen();
  });
  afterAll(async () => {
    await proxy.close();
    await server.close();
  });

  it('cuts, rotations and a pause: final cue words equal the final lines, VTT and SRT agree', async () => {
    const pcm = speech(40, 3);
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({
      socketUrl: `ws://127.0.0.1:${String(proxy.port)}/sound_clone/api/v1/stt/realtime/socket`,
      heartbeatTimeoutMs: 600,
      connectTimeoutMs: 2000,
      reconnect: { nextRetryDelayMs: (c) => (c.elapsedMs > 20_000 ? null : 20 * c.attempt) },
    });
    const events = new EventCapture(session, ['line', 'reconnected', 'rotated', 'partial']);
    const captions = attachCaptions(session);
    // Stability by time alone: only the binding's timer can show these words before their line commits.
    const timed = attachCaptions(session, { stableUpdates: 100, stableMs: 30 });
    const timedLive: string[] = [];
    timed.on('cue', (change) => {
      if (change.kind === 'live' && change.cue.text !== '') timedLive.push(change.cue.text);
    });
    const changes: CueChange[] = [];
    let vtt = '';
    let srt = '';
    const vttWriter = new WebVttWriter((c) => (vtt += c));
    const srtWriter = new SrtWriter((c) => (srt += c));
    captions.on('cue', (change) => {
      changes.push(change);
      vttWriter.write(change);
      srtWriter.write(change);
    });
    const step = RATE * 3;
    for (let at = 0, k = 0; at < pcm.length; at += step, k++) {
      for (let i = at; i < Math.min(pcm.length, at + step); i += 320) {
        session.writePcm16(pcm.subarray(i, Math.min(pcm.length, at + step, i + 320)));
        if ((i / 320) % 25 === 0) await sleep(1);
      }
      if (k % 3 === 1) proxy.cut();
      if (k === 4) {
        await session.pause();
        await session.resume();
      }
    }
    const result = await session.finish({ timeoutMs: 60_000 });
    vttWriter.end();
    srtWriter.end();
    captions.detach();
    timed.detach();
    expect(timedLive.length).toBeGreaterThan(0);
    expect(finalWords(timed.engine.cues())).toEqual(finalWords(captions.engine.cues()));
    expect(events.all('reconnected').length).toBeGreaterThan(1);
    expect(events.all('rotated').length).toBeGreaterThan(1);
    expect(events.all('partial').length).toBeGreaterThan(0);
    expect(changes.some((c) => c.kind === 'live')).toBe(true);
    expect(changes.some((c) => c.kind === 'revised')).toBe(true); // alignment re-timed cues

    const lineWords = result.lines.flatMap((l) => (l.revisedText ?? l.text).split(/\s+/u).filter((w) => w !== ''));
    expect(lineWords.length).toBeGreaterThan(40);
    const cues = latestFinal(changes);
    expect(finalWords(cues)).toEqual(lineWords);
    expect(cues.every((c) => c.settled)).toBe(true);
    expect(new Set(cues.map((c) => c.id)).size).toBe(cues.length);

    const parsedVtt = new WebVTTParser().parse(vtt);
    expect(parsedVtt.errors).toEqual([]);
    const parsedSrt = new SrtParser().fromSrt(srt);
    const split = (t: string): string[] => t.split(/\s+/u).filter((w) => w !== '');
    expect(parsedVtt.cues.flatMap((c) => split(c.text))).toEqual(lineWords);
    expect(parsedSrt.flatMap((c) => split(c.text))).toEqual(lineWords);
    const ms = (x: number): number => Math.round(x * 1000);
    expect(parsedSrt.map((c) => [ms(c.startSeconds), ms(c.endSeconds)])).toEqual(parsedVtt.cues.map((c) => [ms(c.startTime), ms(c.endTime)]));
    expect(vttWriter.lateRevisions).toBe(0);
  }, 120_000);
});
