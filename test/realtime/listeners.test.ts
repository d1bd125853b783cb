import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionStreams } from '@soundclone/core/rx';
import { clientFor, feed, speech, startRealtimeServer } from './support.js';

/** Application listeners that throw: reported, isolated from each other, never breaking the session. */
describe('realtime session: throwing listeners', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer();
  });
  afterAll(() => server.close());

  it('a `state` listener throwing on `finished` changes nothing: finish() resolves, the session is torn down, the error is reported', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const reported: Array<{ kind: string; detail?: Readonly<Record<string, unknown>> }> = [];
    session.on('debug', (info) => {
      if (info.kind === 'listener-error') reported.push(info);
    });
    const bug = new Error('bug in app listener');
    session.on('state', (c) => {
      if (c.to === 'finished') throw bug;
    });
    const seenAfter: string[] = [];
    session.on('state', (c) => seenAfter.push(c.to)); // registered after the throwing one: still called
    let stateCompleted = false;
    sessionStreams(session).state$.subscribe({ complete: () => (stateCompleted = true) });
    await feed(session, speech(1, 91));
    const result = await session.finish({ timeoutMs: 5000 });
    expect(result.session.status).toBe('COMPLETED');
    expect(session.state).toBe('finished');
    expect(seenAfter.at(-1)).toBe('finished');
    expect(reported).toEqual([{ kind: 'listener-error', detail: { event: 'state', error: bug } }]);
    expect(stateCompleted).toBe(true);
    // Torn down: the socket is closed (the server sees it go), so nothing keeps the process alive.
    for (let i = 0; i < 100 && server.sockets.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(server.sockets.size).toBe(0);
  });

  it('listeners throwing on lines and acks do not stop message handling; off() removes a listener as registered', async () => {
    const session = await clientFor(server).stt.realtime.connect({});
    const reported: string[] = [];
    session.on('debug', (info) => {
      if (info.kind === 'listener-error') reported.push(String(info.detail?.['event']));
    });
    const lines: string[] = [];
    const throwingLine = (): void => {
      throw new Error('line listener bug');
    };
    session.on('line', throwingLine);
    session.on('line', (line) => lines.push(line.id));
    const throwingAck = (): void => {
      throw new Error('ack listener bug');
    };
    session.once('backpressure', throwingAck); // told after each audio.ack
    expect(session.listeners('line')).toContain(throwingLine);
    const pcm = speech(3, 93);
    await feed(session, pcm);
    const result = await session.finish();
    expect(result.session.status).toBe('COMPLETED');
    expect(lines).toEqual(result.session.lines.map((l) => l.id));
    expect(lines.length).toBeGreaterThan(0);
    expect(reported.filter((e) => e === 'line').length).toBe(lines.length);
    expect(reported.filter((e) => e === 'backpressure').length).toBe(1); // once() still fires once
    session.off('line', throwingLine);
    expect(session.listeners('line')).not.toContain(throwingLine);
    expect(session.listenerCount('line')).toBe(1);
  });
});
