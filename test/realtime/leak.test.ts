import type { RunningServer } from '@soundclone/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, speech, startRealtimeServer } from './support.js';

const count = (kind: string): number => process.getActiveResourcesInfo().filter((r) => r === kind).length;
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));

/**
 * Long-lived objects must not leak (issue 4 "Done when"): sessions opened, streamed into and finished one
 * after another leave timers, sockets and listeners where they were. 200 here keeps the suite fast; the
 * shape of the check is the 1,000-session one.
 */
describe('realtime session: leaks', () => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await startRealtimeServer({ retainRealtimeAudioSamples: 0 });
  });
  afterAll(() => server.close());

  it('200 sessions in a row: timers, sockets and listeners stay flat on both sides', async () => {
    const client = clientFor(server);
    const pcm = speech(1, 31).subarray(0, 8000);
    const run = async (): Promise<void> => {
      const session = await client.stt.realtime.connect({});
      const states: string[] = [];
      const onState = (c: { to: string }): void => void states.push(c.to);
      session.on('state', onState);
      session.writePcm16(pcm);
      const result = await session.finish();
      expect(result.session.status).toBe('COMPLETED');
      session.off('state', onState);
      expect(session.eventNames()).toEqual([]);
    };
    for (let i = 0; i < 20; i++) await run();
    await settle();
    const timersBefore = count('Timeout');
    const socketsBefore = count('TCPSocketWrap');
    for (let i = 0; i < 180; i++) await run();
    await settle();
    expect(server.sockets.size).toBe(0);
    expect(count('Timeout')).toBeLessThanOrEqual(timersBefore + 2);
    expect(count('TCPSocketWrap')).toBeLessThanOrEqual(socketsBefore + 2);
  }, 120_000);
});
