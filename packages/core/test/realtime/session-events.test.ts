import { afterEach, describe, expect, it } from 'vitest';
import { RealtimeSocketSession } from '../../src/realtime/realtime-session.js';
import type { ServerMessage } from '../../src/realtime/messages/server-messages.js';
import type { RealtimeNotice, RealtimeUsage } from '../../src/types/realtime.js';
import { FakeSocket, ready, tick } from './fake-socket.js';

/**
 * One event per kind of result, each with its rule, beside the raw `message` event that carries every
 * server message as received. The server is played through a scripted socket so the duplicates and
 * stale messages a real server sends only under faults can be sent on purpose.
 */
async function started(epoch = 1): Promise<{ session: RealtimeSocketSession; socket: FakeSocket; raw: ServerMessage[] }> {
  const session = new RealtimeSocketSession({
    sessionId: 'rs_1', socketUrl: 'ws://127.0.0.1:1/sound_clone/api/v1/stt/realtime/socket', accessKey: 'k',
    WebSocket: FakeSocket, reconnect: { nextRetryDelayMs: () => null },
  });
  const raw: ServerMessage[] = [];
  session.on('message', (m) => raw.push(m));
  const starting = session.start();
  await tick();
  const socket = FakeSocket.last;
  socket.open();
  socket.receive(ready({ epoch }));
  await starting;
  return { session, socket, raw };
}

const usage = { estimatedCharacters: '3', billableCharacters: '0', elapsedMs: '1200', sentSamples: '320', receivedSamples: '320', capturedSamples: '320', accepting: true };

describe('realtime session events: one per kind of result', () => {
  afterEach(() => {
    FakeSocket.all = [];
  });

  it('`partial` carries the current epoch only; `message` still shows the stale one', async () => {
    const { session, socket, raw } = await started(2);
    const partials: string[] = [];
    session.on('partial', (p) => partials.push(`${p.epoch}:${p.text}`));
    socket.receive({ type: 'transcript.partial', epoch: 1, text: 'left behind' });
    socket.receive({ type: 'transcript.partial', epoch: 2, text: 'hello' });
    expect(partials).toEqual(['2:hello']);
    expect(raw.filter((m) => m.type === 'transcript.partial')).toHaveLength(2);
    session.close();
  });

  it('`notice` tells each notice once; a different one is told too', async () => {
    const { session, socket, raw } = await started();
    const notices: RealtimeNotice[] = [];
    session.on('notice', (n) => notices.push(n));
    const gap = { code: 'TRANSPORT_GAP', message: 'audio 1.0 s to 1.5 s never arrived' };
    socket.receive({ type: 'session.notice', notice: gap });
    socket.receive({ type: 'session.notice', notice: gap });
    socket.receive({ type: 'session.notice', notice: { ...gap, lineIds: ['ln_1'] } });
    expect(notices).toEqual([gap, { ...gap, lineIds: ['ln_1'] }]);
    expect(session.notices).toEqual(notices);
    expect(raw.filter((m) => m.type === 'session.notice')).toHaveLength(3);
    session.close();
  });

  it('`usage` carries each usage report, parsed; a report without usage is not told', async () => {
    const { session, socket } = await started();
    const reports: RealtimeUsage[] = [];
    session.on('usage', (u) => reports.push(u));
    socket.receive({ type: 'usage.updated', rotate: false, epoch: 1, usage });
    socket.receive({ type: 'usage.updated', rotate: false, epoch: 1, usage: { broken: true } });
    expect(reports).toEqual([{ estimatedCharacters: 3n, billableCharacters: 0n, elapsedMs: 1200n, sentSamples: 320n, receivedSamples: 320n, capturedSamples: 320n, accepting: true }]);
    session.close();
  });

  it('no event is named after a server message: results come only through their own events', async () => {
    const { session, socket } = await started();
    const named: string[] = [];
    for (const type of ['transcript.partial', 'transcript.line', 'session.notice', 'usage.updated', 'audio.ack']) {
      session.on(type as 'message', () => named.push(type));
    }
    socket.receive({ type: 'transcript.partial', epoch: 1, text: 'x' });
    socket.receive({ type: 'session.notice', notice: { code: 'TRANSPORT_GAP', message: 'm' } });
    socket.receive({ type: 'usage.updated', rotate: false, epoch: 1, usage });
    socket.receive({ type: 'audio.ack', epoch: 1, receivedSamples: '0' });
    expect(named).toEqual([]);
    session.close();
  });
});
