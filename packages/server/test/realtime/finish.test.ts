import { describe, expect, it } from 'vitest';
import { startServer } from '../../src/index.js';
import { serverForSuite } from '../support/server.js';
import { connect, open, sleep, socketUrl, speech } from './support.js';

/** Finish over the socket: supplements, notices, one charge however many finishes race. */
describe('realtime socket: finish', () => {
  const server = serverForSuite({ realtimeTiming: { supplementWaitMs: 200 } });

  const used = async (): Promise<number> => (await server.call('GET', '/user/info')).body.data.benefit.usedMonthlyChars as number;

  it('withheld supplements become SUPPLEMENT_NOT_RECEIVED notices (one per set of kinds) and a FAILED revision', async () => {
    const { created, peer } = await connect(server, { options: { rewriteInstruction: 'Tidy', includeDetectedLanguage: true } });
    const signal = speech(3);
    // Line 1 misses its revision and language, lines 2 and 3 only the revision.
    const withholdAll = server.faults.socket.inject({ kind: 'withholdSupplements', kinds: ['revision', 'language'], sessionId: created.sessionId });
    peer.stream(1, signal, 0, 19_000);
    await peer.waitFor('transcript.line');
    withholdAll.remove();
    server.faults.socket.inject({ kind: 'withholdSupplements', kinds: ['revision'], sessionId: created.sessionId });
    peer.stream(1, signal, 19_000);
    await peer.acked(signal.length);
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    const lineIds = peer.all('transcript.line').map((m) => m.line.id);
    expect(lineIds).toEqual(['line_0001', 'line_0002', 'line_0003']);
    const notices = peer.all('session.notice').map((m) => m.notice);
    expect(notices).toEqual([
      { code: 'SUPPLEMENT_NOT_RECEIVED', message: expect.any(String), supplements: ['language', 'revision'], lineIds: ['line_0001'] },
      { code: 'SUPPLEMENT_NOT_RECEIVED', message: expect.any(String), supplements: ['revision'], lineIds: ['line_0002', 'line_0003'] },
    ]);
    expect(finished.session.notices).toEqual(notices);
    expect(peer.all('transcript.revision')).toEqual([]);
    expect(peer.all('transcript.language').map((m) => m.lineId)).toEqual(['line_0002', 'line_0003']);
    const task = (await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data;
    expect(task.transcript).toMatchObject({ revisionStatus: 'FAILED', revisionErrorCode: 'REVISION_NOT_RECEIVED' });
    server.faults.socket.clear();
  });

  it('delayed supplements still arrive as their own events before session.finished', async () => {
    const { created, peer } = await connect(server, { options: { entityCategories: ['name'] } });
    server.faults.socket.inject({ kind: 'delaySupplements', ms: 60, kinds: ['entities'], sessionId: created.sessionId });
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    const types = peer.messages.map((m) => m.type);
    expect(types.indexOf('transcript.entities')).toBeGreaterThan(-1);
    expect(types.indexOf('transcript.entities')).toBeLessThan(types.indexOf('session.finished'));
    expect(peer.all('transcript.entities')[0]).toEqual({ type: 'transcript.entities', lineId: 'line_0001', entities: expect.any(Array) });
    expect(finished.session.notices).toEqual([]);
    server.faults.socket.clear();
  });

  it('concurrent REST and socket finishes (and repeats) settle once: one charge, one task', async () => {
    const { created, peer } = await connect(server);
    const signal = speech(2);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    const before = await used();
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const rest = await Promise.all([1, 2, 3].map(() => server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(signal.length) } })));
    const finished = await peer.waitFor('session.finished');
    const again = await server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: '1' } });
    const charge = finished.session.usage.billableCharacters;
    expect(Number(charge)).toBe(Math.ceil(signal.length / 16_000) * 10);
    for (const r of [...rest, again]) expect(r.body.data).toMatchObject({ status: 'COMPLETED', transcriptionId: created.transcriptionId, usage: { billableCharacters: charge } });
    expect((await used()) - before).toBe(Number(charge));
    expect(peer.all('session.finished')).toHaveLength(1);
    const history = (await server.call('GET', '/stt/transcriptions?pageSize=100')).body.data.items.filter((i: any) => i.transcriptionId === created.transcriptionId);
    expect(history).toHaveLength(1);
  });

  it('a captured count above what arrived marks a transport gap (PARTIAL) and never changes the charge', async () => {
    const { peer } = await connect(server);
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    peer.json({ type: 'session.captured', capturedSamples: String(signal.length + 8000) });
    peer.json({ type: 'session.finish', capturedSamples: String(signal.length) });
    const finished = await peer.waitFor('session.finished');
    expect(finished.session).toMatchObject({ status: 'PARTIAL', usage: { capturedSamples: String(signal.length + 8000), receivedSamples: String(signal.length), billableCharacters: String(Math.ceil(signal.length / 16_000) * 10) } });
    expect(peer.all('session.notice').map((m) => m.notice.code)).toEqual(['TRANSPORT_GAP']);
  });

  it('a plain disconnect leaves the task incomplete until finish; a reconnect during finish gets the final view', async () => {
    const { created, peer } = await connect(server, { options: { includeDetectedLanguage: true } });
    server.faults.socket.inject({ kind: 'withholdSupplements', sessionId: created.sessionId });
    const signal = speech(1);
    peer.stream(1, signal);
    await peer.acked(signal.length);
    await peer.close();
    await sleep(50);
    expect((await server.call('GET', `/stt/transcriptions/${created.transcriptionId}`)).body.data.status).toBe('PROCESSING');
    const finishing = server.call('POST', `/stt/realtime/sessions/${created.sessionId}/finish`, { json: { capturedSamples: String(signal.length) } });
    await sleep(20);
    const late = await open(socketUrl(server, { token: created.socket.token }));
    const finished = await late.waitFor('session.finished');
    expect(finished.session.status).toBe('COMPLETED');
    expect((await late.closed).code).toBe(4409);
    expect((await finishing).body.data.notices[0]).toMatchObject({ code: 'SUPPLEMENT_NOT_RECEIVED', supplements: ['alignment', 'language'] });
    server.faults.socket.clear();
  });
});

describe('realtime timing: the finish wait', () => {
  it('startServer refuses a supplement wait past the spec\'s 8 s, below 0 or not whole, naming the option', async () => {
    for (const supplementWaitMs of [8001, -1, 1.5, Number.NaN]) {
      await expect(startServer({ accessKeys: ['k'], realtimeTiming: { supplementWaitMs } })).rejects.toThrow(/realtimeTiming\.supplementWaitMs must be a whole number of milliseconds in \[0, 8000\]/);
    }
    const server = await startServer({ accessKeys: ['k'], realtimeTiming: { supplementWaitMs: 8000 } });
    await server.close();
  });
});
