import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import SrtParser from 'srt-parser-2';
import { attachCaptions, SoundClone, SrtWriter, WebVttWriter, type Cue, type CueChange } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import type { DemoServer } from '../../packages/web-audio/demo/dev-server.ts';
import { clientFor, feed, speech, startRealtimeServer } from '../realtime/support.ts';
import { latestFinal } from '../captions/support.ts';
import { closeRig, startDemoRig, storedAudio } from './rig.ts';
import { ARTIFACTS, speechWav } from './support.ts';
import { snapshot, tryStart, until, type DemoWindow } from './demo-page.ts';

/**
 * Caption cues as Chromium itself reads them. The WebVTT a live session's writer produced, loaded
 * through a <track> element, parses to the writer's cues and to what srt-parser-2 reads from the
 * same session's SRT; and the demo page's TextTrack holds the final cues of its session, the same
 * cues a caption engine in Node makes from the same audio through the same reference server.
 */
let browser: Browser;
let demo: DemoServer;

beforeAll(async () => void ({ demo, browser } = await startDemoRig('fake-mic-captions.wav', speechWav().pcm, { serverOptions: { recognizer: 'deterministic', retainRealtimeAudioSamples: 16_000 * 60 } })));
afterAll(() => closeRig({ demo, browser }));

/** A cue as compared here: times in whole ms (both formats carry milliseconds), the text as shown. */
interface SeenCue {
  readonly id: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly text: string;
}

const ms = (seconds: number): number => Math.round(seconds * 1000);
const asSeen = (cue: Cue): SeenCue => ({ id: cue.id, startMs: Math.round(cue.startMs), endMs: Math.round(cue.endMs), text: cue.text });
const words = (texts: readonly string[]): string[] => texts.flatMap((t) => t.split(/\s+/u).filter((w) => w !== ''));

/** The cues of a TextTrack as Chromium holds them; text as displayed (markup and entities resolved). */
function trackCues(page: Page, selector: string): Promise<SeenCue[]> {
  return page.evaluate((sel) => {
    const media = document.querySelector(sel) as HTMLMediaElement;
    const track = media.textTracks[media.textTracks.length - 1];
    return Array.from(track?.cues ?? [], (c) => {
      const cue = c as VTTCue;
      return { id: cue.id, startMs: Math.round(cue.startTime * 1000), endMs: Math.round(cue.endTime * 1000), text: cue.getCueAsHTML().textContent ?? '' };
    });
  }, selector);
}

/** A live session through the reference server, its cues written as WebVTT and SRT as they became final. */
async function liveSession(server: RunningServer): Promise<{ cues: Cue[]; vtt: string; srt: string; lines: string[] }> {
  const session = await clientFor(server).stt.realtime.connect({});
  // Short lines, so cues hold two lines: the line break must survive both formats and Chromium.
  const captions = attachCaptions(session, { maxLineChars: 10 });
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
  await feed(session, speech(14, 7));
  const result = await session.finish({ timeoutMs: 30_000 });
  vttWriter.end();
  srtWriter.end();
  captions.detach();
  return { cues: latestFinal(changes).filter((c) => c.text !== ''), vtt, srt, lines: result.lines.map((l) => l.revisedText ?? l.text) };
}

describe('caption cues in Chromium', () => {
  it('Chromium parses the WebVTT written for a live session, through a <track>, into the writer\'s cues; srt-parser-2 reads the same from the SRT', async () => {
    const realtime = await startRealtimeServer({ recognizer: 'deterministic' });
    let files: Server | undefined;
    const page = await browser.newPage();
    try {
      const { cues, vtt, srt, lines } = await liveSession(realtime);
      expect(cues.length).toBeGreaterThanOrEqual(5);
      expect(cues.filter((c) => c.lines.length === 2).length).toBeGreaterThanOrEqual(3);
      expect(words(cues.map((c) => c.text))).toEqual(words(lines));

      files = createServer((req, res) => {
        if (req.url === '/session.vtt') res.writeHead(200, { 'Content-Type': 'text/vtt; charset=utf-8' }).end(vtt);
        else res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end('<!doctype html><audio id="media"><track id="track" kind="captions" srclang="en" label="Session" src="/session.vtt"></audio>');
      });
      await new Promise<void>((resolve) => files!.listen(0, '127.0.0.1', resolve));
      await page.goto(`http://127.0.0.1:${String((files.address() as { port: number }).port)}/`);
      // Loading starts once the track is not disabled; readyState 2 is LOADED, 3 ERROR.
      const readyState = await page.evaluate(() => new Promise<number>((resolve) => {
        const el = document.getElementById('track') as HTMLTrackElement;
        el.addEventListener('load', () => resolve(el.readyState));
        el.addEventListener('error', () => resolve(el.readyState));
        el.track.mode = 'hidden';
      }));
      expect(readyState).toBe(2);
      const chromium = await trackCues(page, '#media');

      expect(chromium).toEqual(cues.map(asSeen));
      const parsedSrt = new SrtParser().fromSrt(srt);
      expect(parsedSrt.map((c) => ({ startMs: ms(c.startSeconds), endMs: ms(c.endSeconds), text: c.text }))).toEqual(chromium.map(({ startMs, endMs, text }) => ({ startMs, endMs, text })));
    } finally {
      await page.close();
      if (files !== undefined) await new Promise((resolve) => files!.close(resolve));
      await realtime.close();
    }
  });

  it('the demo page\'s TextTrack holds its session\'s final cues: the cues a Node caption engine makes of the same audio, their words the final lines\' words', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${demo.url}/`);
      expect(await tryStart(page)).toBeNull();
      // Watch the caption box: each live cue it shows, and the VTTCue the track holds for it then.
      await page.evaluate(() => {
        const w = window as unknown as { liveSeen: Array<{ id: string; text: string; cue: TextTrackCue | null }> };
        w.liveSeen = [];
        const box = document.getElementById('cue') as HTMLElement;
        new MutationObserver(() => {
          if (!box.classList.contains('live')) return;
          const tracks = (document.getElementById('captions-media') as HTMLMediaElement).textTracks;
          const id = box.dataset['id'] ?? '';
          w.liveSeen.push({ id, text: box.textContent ?? '', cue: tracks[tracks.length - 1]?.cues?.getCueById(id) ?? null });
        }).observe(box, { childList: true, subtree: true, characterData: true, attributes: true });
      });
      // The fake microphone's file (about 5.5 s: three lines of tone bursts), then silence.
      await until('the fake microphone\'s lines', () => snapshot(page), (s) => s.lines.length >= 3 && (s.stats?.sentSamples ?? 0) >= 16_000 * 6, 30_000);
      await page.screenshot({ path: join(ARTIFACTS, 'demo-cues.png') });
      const stopped = await page.evaluate(() => (window as unknown as DemoWindow).demo.stop());
      expect(stopped.finish.status).toBe('COMPLETED');
      const onTrack = await trackCues(page, '#captions-media');
      const box = await page.locator('#cue').evaluate((el) => ({ id: (el as HTMLElement).dataset['id'], live: el.classList.contains('live'), lines: Array.from(el.querySelectorAll('.cue-line'), (l) => l.textContent) }));
      const label = await page.evaluate(() => {
        const tracks = (document.getElementById('captions-media') as HTMLMediaElement).textTracks;
        return { count: tracks.length, label: tracks[tracks.length - 1]?.label, mode: tracks[tracks.length - 1]?.mode };
      });

      // Live cues were shown before their lines committed; a live cue whose id a final cue took is the
      // same VTTCue object on the track, updated in place.
      const live = await page.evaluate(() => {
        const w = window as unknown as { liveSeen: Array<{ id: string; text: string; cue: TextTrackCue | null }> };
        const tracks = (document.getElementById('captions-media') as HTMLMediaElement).textTracks;
        const cues = tracks[tracks.length - 1]!.cues!;
        const seen = w.liveSeen.filter((s) => s.text !== '');
        return { shown: seen.length, onTrack: seen.filter((s) => s.cue !== null).length, kept: seen.filter((s) => s.cue !== null && cues.getCueById(s.id) !== null).map((s) => cues.getCueById(s.id) === s.cue) };
      });
      expect(live.shown).toBeGreaterThan(0);
      expect(live.onTrack).toBe(live.shown);
      expect(live.kept.length).toBeGreaterThan(0);
      expect(live.kept.every((same) => same)).toBe(true);

      expect(onTrack.length).toBeGreaterThanOrEqual(3);
      expect(words(onTrack.map((c) => c.text))).toEqual(words(stopped.finish.lines));
      expect(label).toEqual({ count: 1, label: 'Session 1', mode: 'hidden' });
      // The caption box shows the newest cue, final once the session ended.
      expect(box).toEqual({ id: onTrack.at(-1)!.id, live: false, lines: onTrack.at(-1)!.text.split('\n') });

      // The same audio, as the server stored it, through a Node session and core's caption engine.
      const sessionId = demo.sessions.at(-1) as string;
      const stored = await storedAudio(demo, sessionId);
      const session = await new SoundClone({ accessKey: demo.accessKey, baseUrl: demo.baseUrl }).stt.realtime.connect({});
      const captions = attachCaptions(session);
      const changes: CueChange[] = [];
      captions.on('cue', (c) => changes.push(c));
      await feed(session, stored);
      const replayed = await session.finish({ timeoutMs: 30_000 });
      captions.detach();
      expect(replayed.lines.map((l) => l.text)).toEqual(stopped.finish.lines);
      expect(onTrack).toEqual(latestFinal(changes).filter((c) => c.text !== '').map(asSeen));
    } finally {
      await page.close();
    }
  });
});
