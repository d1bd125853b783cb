import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStreams } from '@soundclone/core/rx';
import { EventCapture, clientFor, feed, speech, startRealtimeServer, storedAudio } from './support.js';

describe('realtime session: streaming end to end', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  it('streams faster than real time: stored audio is bit-identical, each line once, finish settles once', async () => {
    const client = clientFor(server);
    const session = await client.stt.realtime.connect({ options: { includeDetectedLanguage: true, entityCategories: ['name'] } });
    const events = new EventCapture(session);
    const states: string[] = [];
    const streams = sessionStreams(session);
    streams.state$.subscribe((s) => states.push(s));
    const pcm = speech(4);
    const lines: string[] = [];
    const sub = streams.lines$.subscribe((line) => lines.push(line.id));
    await feed(session, pcm);
    await events.waitFor('first.frame');
    const first = session.finish();
    expect(session.finish()).toBe(first);
    const result = await first;
    expect(session.state).toBe('finished');
    expect(result.session.status).toBe('COMPLETED');
    expect(result.session.usage.receivedSamples).toBe(BigInt(pcm.length));
    expect(result.session.usage.capturedSamples).toBe(BigInt(pcm.length));
    expect(await storedAudio(server, session.sessionId)).toEqual(pcm);
    expect(lines.length).toBe(4);
    expect(new Set(lines).size).toBe(lines.length);
    expect(result.lines.map((l) => l.id)).toEqual(lines);
    expect(result.lines.every((l) => l.languageCode !== null && l.pendingSupplements.length === 0)).toBe(true);
    expect(events.all('line.updated').length).toBeGreaterThan(0);
    expect(states).toEqual(['streaming', 'finishing', 'finished']);
    expect(events.all('state').map((c) => c.reason)).toEqual(['finish()', 'finished']);
    expect(sub.closed).toBe(true);
    expect(session.listenerCount('state')).toBe(1);
    events.dispose();
    expect(session.eventNames()).toEqual([]);
  });
});
