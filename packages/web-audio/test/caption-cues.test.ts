import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachCaptions, CaptionError, isSoundCloneError, type CueChange, type RealtimeSocketSession } from '@soundclone/core';
import type { RunningServer } from '@soundclone/server';
import { attachSession } from '@soundclone/web-audio';
import { captionCues } from '@soundclone/web-audio/rx';
import { clientFor, feed, speech, startRealtimeServer } from '../../../test/realtime/support.ts';
import { finalWords, latestFinal } from '../../../test/captions/support.ts';

/**
 * captionCues(): the caption engine's decisions as an Observable, on a real session (token attach, as a
 * page does) against the reference server: the same cues as the core binding, completion at the
 * session's end after every cue settled, and no listener or timer left behind.
 */
const EVENTS = ['partial', 'line', 'line.updated', 'state'] as const;
let server: RunningServer;

beforeAll(async () => {
  server = await startRealtimeServer();
});
afterAll(async () => server?.close());

async function browserSession(): Promise<RealtimeSocketSession> {
  const created = await clientFor(server).stt.realtime.create({ title: 'caption cues' });
  return attachSession({ sessionId: created.sessionId, token: created.socket.token, socketUrl: created.socket.url });
}

const listening = (session: RealtimeSocketSession): number[] => EVENTS.map((e) => session.listenerCount(e));
const words = (text: string): string[] => text.split(/\s+/u).filter((w) => w !== '');

describe('captionCues', () => {
  it('emits the binding\'s cues, completes at finish after every cue settled, and leaves no listener behind', async () => {
    const session = await browserSession();
    const reference = attachCaptions(session);
    const expected: CueChange[] = [];
    reference.on('cue', (c) => expected.push(c));
    const before = listening(session);
    const seen: CueChange[] = [];
    let completed = false;
    let duringSubscription: number[] = [];
    captionCues(session).subscribe({ next: (c) => seen.push(c), complete: () => (completed = true) });
    duringSubscription = listening(session);
    await feed(session, speech(6, 5));
    const result = await session.finish({ timeoutMs: 30_000 });

    expect(completed).toBe(true);
    // Subscribed: the binding's four listeners and the completion's `state` listener. Completed: none left.
    expect(duringSubscription).toEqual([before[0]! + 1, before[1]! + 1, before[2]! + 1, before[3]! + 2]);
    expect(listening(session)).toEqual(before);
    reference.detach();

    const lineWords = result.lines.flatMap((l) => words(l.revisedText ?? l.text));
    expect(lineWords.length).toBeGreaterThan(6);
    const cues = latestFinal(seen);
    expect(finalWords(cues)).toEqual(lineWords);
    expect(cues.every((c) => c.settled)).toBe(true);
    expect(cues.map((c) => [c.id, c.text, c.startMs, c.endMs])).toEqual(latestFinal(expected).map((c) => [c.id, c.text, c.startMs, c.endMs]));
  });

  it('unsubscribing detaches at once: listeners removed, the engine\'s wake-up timer cleared, nothing emitted after', async () => {
    const session = await browserSession();
    const before = listening(session);
    const timers = new Set<unknown>();
    const seen: CueChange[] = [];
    // Stability by time only, on timers the test can see: the engine always has a wake-up pending
    // while a partial's words wait.
    const subscription = captionCues(session, {
      stableUpdates: 100,
      stableMs: 200,
      setTimeout: (fn, ms) => {
        const handle = setTimeout(() => {
          timers.delete(handle);
          fn();
        }, ms);
        timers.add(handle);
        return handle;
      },
      clearTimeout: (handle) => {
        timers.delete(handle);
        clearTimeout(handle as ReturnType<typeof setTimeout>);
      },
    }).subscribe((c) => seen.push(c));
    const pcm = speech(8, 9);
    await feed(session, pcm, 0, pcm.length / 2);
    // Unsubscribe while the engine waits on a timer: a partial's words are not stable yet.
    for (let i = 0; i < 300 && (seen.length === 0 || timers.size === 0); i++) await new Promise((r) => setTimeout(r, 5));
    expect(seen.length).toBeGreaterThan(0);
    expect(timers.size).toBe(1);
    subscription.unsubscribe();
    expect(listening(session)).toEqual(before);
    expect(timers.size).toBe(0);
    const count = seen.length;
    await feed(session, pcm, pcm.length / 2);
    const result = await session.finish({ timeoutMs: 30_000 });
    expect(result.lines.length).toBeGreaterThan(0);
    expect(seen.length).toBe(count);
    expect(timers.size).toBe(0);
  });

  it('a session already ended completes at once without listening; bad options throw at the call', async () => {
    const session = await browserSession();
    await session.finish({ timeoutMs: 10_000 });
    const before = listening(session);
    let completed = false;
    const seen: CueChange[] = [];
    captionCues(session).subscribe({ next: (c) => seen.push(c), complete: () => (completed = true) });
    expect(completed).toBe(true);
    expect(seen).toEqual([]);
    expect(listening(session)).toEqual(before);

    let thrown: unknown;
    try {
      captionCues(session, { maxLines: 0 });
    } catch (caught) {
      thrown = caught;
    }
    expect(isSoundCloneError(thrown, CaptionError) && thrown.code).toBe('CAPTIONS_INVALID_OPTION');
  });
});
