import type { RunningServer } from '@soundclone/server';
import { sessionStreams } from '@soundclone/core/rx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCapture, clientFor, feed, speech, startRealtimeServer } from './support.js';

/** @soundclone/core/rx: the session's events as Observables, against the reference server. */
describe('realtime session: rx streams', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  it('each stream carries its event, all complete when the session finishes, and none leaves a listener', async () => {
    const session = await clientFor(server).stt.realtime.connect({ options: { entityCategories: ['name'] } });
    const events = new EventCapture(session);
    const streams = sessionStreams(session);
    const seen = { partials: [] as string[], lines: [] as string[], updates: 0, notices: 0, usage: 0, backpressure: 0 };
    const completed: string[] = [];
    const done = (name: string) => ({ complete: () => completed.push(name) });
    streams.partials$.subscribe({ next: (p) => seen.partials.push(p.text), ...done('partials$') });
    streams.lines$.subscribe({ next: (l) => seen.lines.push(l.id), ...done('lines$') });
    streams.lineUpdates$.subscribe({ next: () => (seen.updates += 1), ...done('lineUpdates$') });
    streams.notices$.subscribe({ next: () => (seen.notices += 1), ...done('notices$') });
    streams.usage$.subscribe({ next: () => (seen.usage += 1), ...done('usage$') });
    streams.backpressure$.subscribe({ next: () => (seen.backpressure += 1), ...done('backpressure$') });
    const states: string[] = [];
    streams.state$.subscribe({ next: (s) => states.push(s), ...done('state$') });
    // One listener per subscribed event, and one `state` listener per stream for its completion.
    expect(session.listenerCount('line')).toBe(2); // the capture's and lines$
    expect(session.listenerCount('state')).toBe(8);

    await feed(session, speech(3, 41));
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(seen.lines).toEqual(result.lines.map((l) => l.id));
    expect(seen.lines).toEqual(events.all('line').map((l) => l.id));
    expect(seen.partials).toEqual(events.all('partial').map((p) => p.text));
    expect(seen.updates).toBe(events.all('line.updated').length);
    expect(seen.updates).toBeGreaterThan(0);
    expect(seen.usage).toBe(events.all('usage').length);
    expect(seen.backpressure).toBeGreaterThan(0);
    expect(seen.notices).toBe(result.notices.length);
    expect(states).toEqual(['streaming', 'finishing', 'finished']);
    expect(completed.sort()).toEqual(['backpressure$', 'lineUpdates$', 'lines$', 'notices$', 'partials$', 'state$', 'usage$']);
    events.dispose();
    expect(session.eventNames()).toEqual([]);
  });

  it('state$ replays the current state; after the end every stream completes at once', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const late: string[] = [];
    sessionStreams(session).state$.subscribe((s) => late.push(s));
    expect(late).toEqual(['streaming']); // subscribed after connect: the current state first
    session.close();
    expect(late).toEqual(['streaming', 'closed']);

    const after = sessionStreams(session);
    const values: string[] = [];
    const completed: string[] = [];
    after.state$.subscribe({ next: (s) => values.push(s), complete: () => completed.push('state$') });
    after.lines$.subscribe({ next: (l) => values.push(l.id), complete: () => completed.push('lines$') });
    after.partials$.subscribe({ complete: () => completed.push('partials$') });
    expect(values).toEqual(['closed']);
    expect(completed).toEqual(['state$', 'lines$', 'partials$']);
    expect(session.eventNames()).toEqual([]);
  });

  it('unsubscribing removes exactly the listeners the subscription added', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const streams = sessionStreams(session);
    const mine = (): void => {};
    session.on('line', mine);
    const subscriptions = [
      streams.lines$.subscribe(() => {}),
      streams.lines$.subscribe(() => {}),
      streams.partials$.subscribe(() => {}),
      streams.state$.subscribe(() => {}),
    ];
    expect(session.listenerCount('line')).toBe(3);
    expect(session.listenerCount('partial')).toBe(1);
    expect(session.listenerCount('state')).toBe(4);
    for (const s of subscriptions) s.unsubscribe();
    expect(session.listeners('line')).toEqual([mine]);
    expect(session.listenerCount('partial')).toBe(0);
    expect(session.listenerCount('state')).toBe(0);
    // A thousand subscribe/unsubscribe rounds leave nothing behind.
    for (let i = 0; i < 1000; i++) streams.lineUpdates$.subscribe(() => {}).unsubscribe();
    expect(session.eventNames()).toEqual(['line']);
    session.off('line', mine);
    await session.finish();
  });
});
