import { describe, expect, it } from 'vitest';
import { idem, KEY_A, KEY_B, PREFIX, serverForSuite } from './support/server.js';
import { pcm, toPcm16, type Piece } from './support/wav.js';

const BOB: Piece = { tone: 400, ms: 300 };
/** Two lines of speech: each a pair of bursts, then 600 ms of silence (commits in auto mode). */
const TWO_LINES = toPcm16(pcm([{ tone: 220, ms: 300 }, { silence: 100 }, BOB, { silence: 600 }, { tone: 900, ms: 300 }, { silence: 600 }]));

describe('realtime sessions over REST and the session domain', () => {
  const server = serverForSuite({
    realtimeTiming: { supplementWaitMs: 150 },
    supplementPolicy: (line, kind) => (line.text.includes('bob') && (kind === 'revision' || kind === 'language') ? 'withhold' : 'now'),
  });

  const create = (body: Record<string, unknown> = {}, key = idem(), account = KEY_A) =>
    server.call('POST', '/stt/realtime/sessions', { key: account, json: body, headers: { 'Idempotency-Key': key } });
  const audioOf = (sessionId: string, account = KEY_A) => server.services.realtime.get(server.services.accounts.byAccessKey(account)!, sessionId).audio;

  it('creates a session: epoch 1, accepting, cursors "0", a socket URL and token, a PROCESSING task in History', async () => {
    const r = await create({ title: 'Live', options: { segmentCommitMode: 'auto' } });
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(d).toMatchObject({ status: 'ACTIVE', epoch: 1, accepting: true, partial: '', lines: [], notices: [], modelId: 'svc_stt_realtime_v1' });
    expect(d.usage).toEqual({ estimatedCharacters: '0', billableCharacters: '0', elapsedMs: expect.stringMatching(/^[0-9]+$/), sentSamples: '0', receivedSamples: '0', capturedSamples: '0', accepting: true });
    expect(d.socket.url).toBe(`${server.url.replace('http', 'ws')}${PREFIX}/stt/realtime/socket`);
    expect(d.socket.token).toMatch(/^rtt_rs_/);
    expect(server.services.realtime.verifyToken(d.socket.token)).toBe(d.sessionId);
    expect(server.services.realtime.verifyToken(d.socket.token.slice(0, -2) + 'xx')).toBeUndefined();
    const task = await server.call('GET', `/stt/transcriptions/${d.transcriptionId}`);
    expect(task.body.data).toMatchObject({ status: 'PROCESSING', modelId: 'svc_stt_realtime_v1', title: 'Live', transcript: null });
  });

  it('needs an Idempotency-Key, replays the same session, refuses another body, validates options', async () => {
    expect((await server.call('POST', '/stt/realtime/sessions', { json: {} })).body.details.violations[0].field).toBe('Idempotency-Key');
    const key = idem();
    const a = await create({ options: { includeDetectedLanguage: true } }, key);
    const b = await create({ options: { includeDetectedLanguage: true } }, key);
    expect(b.body.data.sessionId).toBe(a.body.data.sessionId);
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect((await create({}, key)).status).toBe(409);
    const bad = await create({ options: { segmentCommitMode: 'sometimes', inputEncoding: 'other', colour: 1, matchKnownSpeakers: true } });
    expect(bad.body.details.violations.map((v: any) => v.field).sort()).toEqual(['options.colour', 'options.inputEncoding', 'options.matchKnownSpeakers', 'options.segmentCommitMode']);
  });

  it('is owned: another account gets 404 for GET, pause and finish', async () => {
    const d = (await create()).body.data;
    for (const [method, path] of [['GET', ''], ['POST', '/pause'], ['POST', '/finish']] as const) {
      const r = await server.call(method, `/stt/realtime/sessions/${d.sessionId}${path}`, { key: KEY_B, json: method === 'POST' ? { capturedSamples: '0' } : undefined });
      expect(r.status).toBe(404);
    }
  });

  it('feeds PCM with epoch and start sample: duplicates dropped, overlaps trimmed, gaps and stale epochs refused', async () => {
    const d = (await create()).body.data;
    const audio = audioOf(d.sessionId);
    const first = TWO_LINES.subarray(0, 8000);
    expect(audio.feed(1, 0n, first)).toEqual({ kind: 'accepted', acceptedSamples: 8000, duplicateSamples: 0, receivedSamples: 8000n });
    expect(audio.feed(1, 0n, first)).toEqual({ kind: 'accepted', acceptedSamples: 0, duplicateSamples: 8000, receivedSamples: 8000n });
    expect(audio.feed(1, 6000n, TWO_LINES.subarray(6000, 10_000))).toEqual({ kind: 'accepted', acceptedSamples: 2000, duplicateSamples: 2000, receivedSamples: 10_000n });
    expect(audio.feed(1, 10_001n, TWO_LINES.subarray(10_001, 10_100))).toMatchObject({ kind: 'rejected', reason: 'BEYOND_CURSOR', receivedSamples: 10_000n });
    expect(audio.feed(2, 10_000n, TWO_LINES.subarray(10_000, 10_100))).toMatchObject({ kind: 'rejected', reason: 'WRONG_EPOCH', epoch: 1 });
    audio.feed(1, 10_000n, TWO_LINES.subarray(10_000));
    const view = (await server.call('GET', `/stt/realtime/sessions/${d.sessionId}`)).body.data;
    expect(view.usage).toMatchObject({ receivedSamples: String(TWO_LINES.length), sentSamples: String(TWO_LINES.length) });
    expect(view.lines).toHaveLength(2);
    expect(view.lines[0]).toMatchObject({ id: 'line_0001', text: expect.stringContaining('bob'), revisedText: null, entities: [] });
    expect(view.lines[0].words.length).toBe(2);
    expect(view.usage.estimatedCharacters).toBe('30'); // 2.2 s of audio: 3 started seconds at 600 per minute
  });

  it('pauses (commits the open segment, stops accepting) and resumes into the next epoch', async () => {
    const d = (await create({ options: { segmentCommitMode: 'manual' } })).body.data;
    const audio = audioOf(d.sessionId);
    audio.feed(1, 0n, TWO_LINES);
    let view = (await server.call('GET', `/stt/realtime/sessions/${d.sessionId}`)).body.data;
    expect(view.lines).toHaveLength(0); // manual: silence does not commit
    expect(view.partial.split(' ')).toHaveLength(3);
    const missing = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/pause`, { json: {} });
    expect(missing.body.details.violations[0].field).toBe('capturedSamples');
    const bad = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/pause`, { json: { capturedSamples: '-1' } });
    expect(bad.status).toBe(400);
    const paused = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/pause`, { json: { capturedSamples: String(TWO_LINES.length) } });
    view = paused.body.data;
    expect(view).toMatchObject({ status: 'PAUSED', accepting: false, partial: '', epoch: 1 });
    expect(view.lines).toHaveLength(1);
    expect(view.lines[0].text.split(' ')).toHaveLength(3);
    expect(view.usage).toMatchObject({ capturedSamples: String(TWO_LINES.length), accepting: false });
    expect(audio.feed(1, BigInt(TWO_LINES.length), TWO_LINES)).toMatchObject({ kind: 'rejected', reason: 'NOT_ACCEPTING' });
    expect(audio.resume()).toBe(2);
    expect(audio.feed(2, BigInt(TWO_LINES.length), TWO_LINES.subarray(0, 100))).toMatchObject({ kind: 'accepted', acceptedSamples: 100 });
    const rotations: boolean[] = [];
    const off = audio.subscribe((e) => e.type === 'usage.updated' && rotations.push(e.rotate));
    audio.rotate();
    off();
    expect(rotations).toEqual([true]);
    expect(audio.accepting).toBe(false);
    expect(audio.resume()).toBe(3);
  });

  it('finishes once: COMPLETED, settled charge, task in History; repeated and concurrent finishes return the same result', async () => {
    const d = (await create({ options: { includeAlignment: true } })).body.data;
    audioOf(d.sessionId).feed(1, 0n, TWO_LINES);
    const used0 = (await server.call('GET', '/user/info')).body.data.benefit.usedMonthlyChars as number;
    const body = { json: { capturedSamples: TWO_LINES.length } };
    const results = await Promise.all(Array.from({ length: 5 }, () => server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, body)));
    const again = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, { json: { capturedSamples: '0' } });
    for (const r of [...results, again]) {
      expect(r.body.data).toMatchObject({ status: 'COMPLETED', accepting: false, transcriptionId: d.transcriptionId });
      expect(r.body.data.usage.billableCharacters).toBe('30');
    }
    const used1 = (await server.call('GET', '/user/info')).body.data.benefit.usedMonthlyChars as number;
    expect(used1 - used0).toBe(30);
    const task = (await server.call('GET', `/stt/transcriptions/${d.transcriptionId}`)).body.data;
    expect(task).toMatchObject({ status: 'COMPLETED', modelId: 'svc_stt_realtime_v1', audioDurationMs: String(Math.ceil(TWO_LINES.length / 16)) });
    expect(task.billing).toMatchObject({ state: 'SETTLED', reservedCharacters: '30', settledCharacters: '30', releasedCharacters: '0', billableCharacters: '30' });
    expect(task.transcript.segments).toHaveLength(2);
    const list = (await server.call('GET', '/stt/transcriptions?pageSize=100')).body.data.items;
    expect(list.find((i: any) => i.transcriptionId === d.transcriptionId)).toMatchObject({ modelId: 'svc_stt_realtime_v1', status: 'COMPLETED', characters: '30' });
    const txt = await fetch(`${server.url}${PREFIX}/stt/transcriptions/${d.transcriptionId}/download/txt`, { headers: { accessKey: KEY_A } });
    expect(await txt.text()).toContain(task.transcript.segments[1].text);
    const pause = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/pause`, { json: { capturedSamples: '1' } });
    expect(pause.status).toBe(409);
    expect(pause.body.errorCode).toBe('SESSION_CLOSED');
    expect(audioOf(d.sessionId).feed(1, BigInt(TWO_LINES.length), TWO_LINES)).toMatchObject({ kind: 'rejected', reason: 'NOT_ACCEPTING' });
  });

  it('marks a transport gap PARTIAL without changing the charge', async () => {
    const d = (await create()).body.data;
    audioOf(d.sessionId).feed(1, 0n, TWO_LINES);
    const r = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, { json: { capturedSamples: String(TWO_LINES.length + 16_000) } });
    expect(r.body.data.status).toBe('PARTIAL');
    expect(r.body.data.usage).toMatchObject({ billableCharacters: '30', capturedSamples: String(TWO_LINES.length + 16_000), receivedSamples: String(TWO_LINES.length) });
    expect(r.body.data.notices.map((n: any) => n.code)).toEqual(['TRANSPORT_GAP']);
  });

  it('reports withheld supplements as SUPPLEMENT_NOT_RECEIVED notices and a FAILED revision', async () => {
    const d = (await create({ options: { rewriteInstruction: 'Tidy', includeDetectedLanguage: true, processingContentStorage: true } })).body.data;
    audioOf(d.sessionId).feed(1, 0n, TWO_LINES);
    const started = Date.now();
    const r = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, { json: { capturedSamples: String(TWO_LINES.length) } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    const view = r.body.data;
    expect(view.notices).toEqual([
      { code: 'SUPPLEMENT_NOT_RECEIVED', message: expect.any(String), supplements: ['language', 'revision'], lineIds: ['line_0001'] },
      { code: 'PROCESSING_STORAGE_NOT_APPLIED', message: expect.any(String) },
    ]);
    expect(view.lines[1]).toMatchObject({ languageCode: 'en', revisedText: expect.stringMatching(/\.$/) });
    const task = (await server.call('GET', `/stt/transcriptions/${d.transcriptionId}`)).body.data;
    expect(task.transcript).toMatchObject({ revisionStatus: 'FAILED', revisionErrorCode: 'REVISION_NOT_RECEIVED', revisedText: null });
    expect(task.status).toBe('COMPLETED');
  });

  it('returns at once when a withheld supplement arrives late but before the wait ends', async () => {
    const d = (await create({ options: { includeDetectedLanguage: true } })).body.data;
    const audio = audioOf(d.sessionId);
    audio.feed(1, 0n, TWO_LINES);
    setTimeout(() => audio.deliverSupplement('line_0001', 'language'), 30);
    const r = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, { json: { capturedSamples: String(TWO_LINES.length) } });
    expect(r.body.data.notices).toEqual([]);
    expect(r.body.data.lines[0].languageCode).toBe('en');
  });

  it('settles a session that received nothing at zero', async () => {
    const d = (await create()).body.data;
    const r = await server.call('POST', `/stt/realtime/sessions/${d.sessionId}/finish`, { json: { capturedSamples: 0 } });
    expect(r.body.data).toMatchObject({ status: 'COMPLETED', lines: [] });
    expect(r.body.data.usage.billableCharacters).toBe('0');
  });
});
