import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isStateStoreError, StateStoreError, type ServerOptions } from '../src/index.js';
import { idem, KEY_A, KEY_B, start, transcribe, upload, type TestServer } from './support/server.js';
import { speechWav } from './support/wav.js';
import { createSession, open as openSocket, socketUrl, speech } from './realtime/support.js';

const lines = (file: string): string[] => readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');

/** startServer({ dataDir }): what one run wrote, the next run serves; what a crash cut short is dropped. */
describe('state kept in a data directory', () => {
  let dataDir: string;
  let server: TestServer | undefined;
  const open = async (options: Partial<ServerOptions> = {}): Promise<TestServer> => (server = await start({ dataDir, ...options }));
  const restart = async (options: Partial<ServerOptions> = {}): Promise<TestServer> => {
    await server?.close();
    server = undefined;
    return open(options);
  };
  beforeEach(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'state-kept-'));
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('a restart keeps voices, saved designs, deleted covers, transcriptions with transcripts and billing, and balances', async () => {
    let s = await open();
    const form = new FormData();
    form.append('name', 'Narrator');
    form.append('files', new Blob([new Uint8Array(speechWav())]), 'a.wav');
    const created = (await s.call('POST', '/voices/tts', { body: form })).body.data.id as string;
    expect((await s.call('PUT', `/voices/rename/${created}`, { json: { name: 'Storyteller' } })).status).toBe(200);
    const design = (await s.call('POST', '/voices/design/save', { json: { designId: 'design-1-01', name: 'Designed' } })).body.data.id as string;
    expect((await s.call('DELETE', '/cover', { json: { ids: ['cover-1-0001'] } })).body.data.succeedIds).toEqual(['cover-1-0001']);
    const task = await transcribe(s, { uploadId: await upload(s, speechWav()), title: 'kept' });
    expect(task.status).toBe('COMPLETED');
    const view = (await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data;
    const text = (await (await fetch(`${s.url}/sound_clone/api/v1/stt/transcriptions/${task.transcriptionId}/download/txt`, { headers: { accessKey: KEY_A } })).text());
    const userBefore = (await s.call('GET', '/user/info')).body.data;
    const userB = (await s.call('GET', '/user/info', { key: KEY_B })).body.data;
    const history = (await s.call('GET', '/stt/transcriptions')).body.data;

    s = await restart();
    expect(s.state).toMatchObject({ dataDir, interruptedTasks: 0 });
    const voices = (await s.call('GET', '/voices')).body.data as Array<{ id: string; name: string; type: string }>;
    expect(voices.find((v) => v.id === created)).toMatchObject({ name: 'Storyteller', type: 'clone' });
    expect(voices.find((v) => v.id === design)).toMatchObject({ name: 'Designed', type: 'design' });
    // A saved design is used up for good, and a deleted cover stays deleted.
    expect((await s.call('POST', '/voices/design/save', { json: { designId: 'design-1-01', name: 'Again' } })).status).toBe(400);
    expect((await s.call('DELETE', '/cover', { json: { ids: ['cover-1-0001'] } })).body.data.nonExistIds).toEqual(['cover-1-0001']);
    const got = (await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data;
    expect(got).toEqual(view);
    const again = await (await fetch(`${s.url}/sound_clone/api/v1/stt/transcriptions/${task.transcriptionId}/download/txt`, { headers: { accessKey: KEY_A } })).text();
    expect(again).toBe(text);
    expect((await s.call('GET', '/user/info')).body.data).toEqual(userBefore);
    expect((await s.call('GET', '/user/info', { key: KEY_B })).body.data).toEqual(userB);
    expect((await s.call('GET', '/stt/transcriptions')).body.data).toEqual(history);
    // Ids go on after the kept ones: a new voice never reuses one.
    const form2 = new FormData();
    form2.append('name', 'Next');
    form2.append('files', new Blob([new Uint8Array(speechWav())]), 'b.wav');
    const next = (await s.call('POST', '/voices/tts', { body: form2 })).body.data.id as string;
    expect(BigInt(next)).toBeGreaterThan(BigInt(design));
    // The journal was folded at this start: one line per entity, no repeats.
    const kept = lines(join(dataDir, 'state.jsonl')).map((l) => JSON.parse(l) as { type: string; voice?: { id: string } });
    expect(kept[0]).toEqual({ type: 'header', format: 'soundclone-state', version: 1 });
    expect(kept.filter((r) => r.voice?.id === created)).toHaveLength(1);
  });

  it('a task running when the process stopped is FAILED at the next start, its reservation released once', async () => {
    let s = await open({ taskTiming: { queueMs: 1, processingMs: 60_000, reconcilingMs: 1 } });
    const chars = async () => (await s.services.store.accounts.ledger(s.services.accounts.byAccessKey(KEY_A)!.id))?.chars;
    const before = { ...(await chars()) };
    const r = await s.call('POST', '/stt/transcriptions', { json: { uploadId: await upload(s, speechWav()) }, headers: { 'Idempotency-Key': idem() } });
    const id = r.body.data.transcriptionId as string;
    expect(r.body.data.billing.state).toBe('RESERVED');
    expect((await chars())?.reserved).toBeGreaterThan(0n);

    s = await restart();
    expect(s.state?.interruptedTasks).toBe(1);
    const failed = (await s.call('GET', `/stt/transcriptions/${id}`)).body.data;
    expect(failed).toMatchObject({ status: 'FAILED', error: { errorCode: 'INTERNAL', retryable: true, action: 'RETRY' } });
    expect(failed.billing).toMatchObject({ state: 'RELEASED', settledCharacters: '0', releasedCharacters: failed.billing.reservedCharacters });
    expect(await chars()).toEqual(before);

    s = await restart();
    expect(s.state?.interruptedTasks).toBe(0);
    expect(await chars()).toEqual(before);
    expect((await s.call('GET', `/stt/transcriptions/${id}`)).body.data).toEqual(failed);
  });

  it('an Idempotency-Key used before a restart replays the same task after it (and still refuses another body)', async () => {
    let s = await open();
    const uploadId = await upload(s, speechWav());
    const key = idem();
    const first = await s.call('POST', '/stt/transcriptions', { json: { uploadId, title: 'once' }, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(200);
    s = await restart();
    const again = await s.call('POST', '/stt/transcriptions', { json: { uploadId, title: 'once' }, headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(200);
    expect(again.body.data.transcriptionId).toBe(first.body.data.transcriptionId);
    expect(again.body.data.requestId).toBe(first.body.data.requestId);
    const other = await s.call('POST', '/stt/transcriptions', { json: { uploadId, title: 'other' }, headers: { 'Idempotency-Key': key } });
    expect(other.body.errorCode).toBe('IDEMPOTENCY_CONFLICT');
    expect((await s.call('GET', '/stt/transcriptions')).body.data.total).toBe(1);
  });

  it('an open realtime session at a stop is FAILED at the next start, nothing charged', async () => {
    let s = await open();
    const session = await s.call('POST', '/stt/realtime/sessions', { json: {}, headers: { 'Idempotency-Key': idem() } });
    const id = session.body.data.transcriptionId as string;
    expect((await s.call('GET', `/stt/transcriptions/${id}`)).body.data).toMatchObject({ status: 'PROCESSING', billing: { state: 'ACCRUING' } });
    const ledger = async () => (await s.services.store.accounts.ledger(s.services.accounts.byAccessKey(KEY_A)!.id))?.chars;
    const before = { ...(await ledger()) };
    s = await restart();
    expect(s.state?.interruptedTasks).toBe(1);
    expect((await s.call('GET', `/stt/transcriptions/${id}`)).body.data).toMatchObject({ status: 'FAILED', billing: { state: 'RELEASED', settledCharacters: '0' } });
    expect(await ledger()).toEqual(before);
  });

  it('a realtime creation key is kept: after a restart the same key replays the session as it ended, another body is 409', async () => {
    let s = await open();
    const key = idem();
    const first = await s.call('POST', '/stt/realtime/sessions', { json: { title: 'kept key' }, headers: { 'Idempotency-Key': key } });
    expect(first.status).toBe(200);
    s = await restart();
    const again = await s.call('POST', '/stt/realtime/sessions', { json: { title: 'kept key' }, headers: { 'Idempotency-Key': key } });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    // The session was open at the stop: the start failed it, and the replay says so.
    expect(again.body.data).toMatchObject({ sessionId: first.body.data.sessionId, transcriptionId: first.body.data.transcriptionId, status: 'FAILED', accepting: false, socket: { url: `${s.url.replace(/^http/, 'ws')}/sound_clone/api/v1/stt/realtime/socket` } });
    expect(s.services.realtime.verifyToken(again.body.data.socket.token)).toBe(first.body.data.sessionId);
    const other = await s.call('POST', '/stt/realtime/sessions', { json: { title: 'other' }, headers: { 'Idempotency-Key': key } });
    expect(other.body.errorCode).toBe('IDEMPOTENCY_CONFLICT');
    expect((await s.call('GET', '/stt/transcriptions')).body.data.total).toBe(1);
  });

  it('an open session whose reservation grew with its audio leaves nothing reserved after a restart, even when another task wrote the ledger since', async () => {
    let s = await open({ realtimeTiming: { recoveryWindowMs: 60_000 } });
    const chars = async () => (await s.services.store.accounts.ledger(s.services.accounts.byAccessKey(KEY_A)!.id))?.chars;
    const before = { ...(await chars()) };
    const created = await createSession(s);
    const peer = await openSocket(socketUrl(s, { sessionId: created.sessionId }), { accessKey: KEY_A });
    await peer.waitFor('session.ready');
    peer.stream(1, speech(3), 0, 2 * 16_000, 320);
    await peer.acked(32_000);
    // The session's reservation grew with its audio, without a write of its own.
    const grown = (await chars())?.reserved ?? 0n;
    expect(grown).toBeGreaterThan(0n);
    // A batch task settles now: its write carries the ledger, with the session's grown reservation in it.
    const task = await transcribe(s, { uploadId: await upload(s, speechWav()) });
    expect(task.status).toBe('COMPLETED');
    const charged = BigInt(task.billing.settledCharacters as string);
    expect((await chars())?.reserved).toBe(grown);

    s = await restart();
    expect(s.state?.interruptedTasks).toBe(1);
    expect((await chars())?.reserved).toBe(0n);
    const after = await chars();
    const spent = (after?.monthlyUsed ?? 0n) + (after?.orderUsed ?? 0n) - ((before.monthlyUsed ?? 0n) + (before.orderUsed ?? 0n));
    expect(spent).toBe(charged);
    // And it stays so at the next start.
    s = await restart();
    expect((await chars())?.reserved).toBe(0n);
  });

  it('a long run compacts its journal as it goes: the file stays small and the last change wins', async () => {
    let s = await open();
    const account = s.services.accounts.byAccessKey(KEY_A);
    if (account === undefined) throw new Error('no account');
    const voice = await s.services.voices.createClone(account, 'v0', [{ size: 1 }]);
    for (let i = 1; i <= 2100; i++) await s.services.voices.rename(account, voice.id, { name: `v${i}` });
    expect(lines(join(dataDir, 'state.jsonl')).length).toBeLessThan(200);
    s = await restart();
    expect((await s.services.voices.list(account)).find((v) => v.id === voice.id)?.name).toBe('v2100');
  }, 60_000);

  it('a last line cut short by a crash is dropped and cut off the file; a bad last line too; the rest loads', async () => {
    let s = await open();
    const task = await transcribe(s, { uploadId: await upload(s, speechWav()) });
    const view = (await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data;
    // A restart folds the journal; from then on a start that finds nothing new leaves the file as it is.
    s = await restart();
    await s.close();
    server = undefined;
    const file = join(dataDir, 'state.jsonl');
    const whole = readFileSync(file, 'utf8');
    appendFileSync(file, '{"type":"voice","voice":{"id":"1000');
    s = await open();
    expect(s.state?.dropped).toEqual({ line: whole.split('\n').filter((l) => l !== '').length + 1, bytes: 35 });
    expect((await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data).toEqual(view);
    expect(readFileSync(file, 'utf8')).toBe(whole);
    await s.close();
    server = undefined;
    appendFileSync(file, '{"type":"task","task":"not a task"}\n');
    s = await open();
    expect(s.state?.dropped?.line).toBe(whole.split('\n').filter((l) => l !== '').length + 1);
    expect(readFileSync(file, 'utf8')).toBe(whole);
    expect((await s.call('GET', `/stt/transcriptions/${task.transcriptionId}`)).body.data.status).toBe('COMPLETED');
  });

  it('a bad line before the last is STATE_CORRUPT naming the file and the line, and holds nothing', async () => {
    const s = await open();
    await transcribe(s, { uploadId: await upload(s, speechWav()) });
    await s.close();
    server = undefined;
    const file = join(dataDir, 'state.jsonl');
    const good = lines(file);
    writeFileSync(file, [good[0], 'this is not json', ...good.slice(1)].map((l) => `${l}\n`).join(''));
    const error = await start({ dataDir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isStateStoreError(error)).toBe(true);
    expect(error).toBeInstanceOf(StateStoreError);
    expect(error).toMatchObject({ code: 'STATE_CORRUPT', details: { file, line: 2 } });
    expect((error as Error).message).toContain(`${file}:2: not a JSON line`);
    writeFileSync(file, [good[0], '{"type":"voice","voice":{"id":"x"}}', ...good.slice(1)].map((l) => `${l}\n`).join(''));
    await expect(start({ dataDir })).rejects.toMatchObject({ code: 'STATE_CORRUPT', details: { line: 2 } });
    // Nothing held after a refusal: the repaired file opens.
    writeFileSync(file, good.map((l) => `${l}\n`).join(''));
    expect((await open()).state?.records).toBeGreaterThan(0);
  });

  it('one process per directory: a second start is STATE_LOCKED naming the pid; a dead pid\'s lock is taken over', async () => {
    await open();
    const error = await start({ dataDir }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ name: 'StateStoreError', code: 'STATE_LOCKED', details: { pid: process.pid } });
    expect((error as Error).message).toContain(`${dataDir} is in use by process ${process.pid}`);
    await server?.close();
    server = undefined;
    expect(() => readFileSync(join(dataDir, 'lock'))).toThrow(/ENOENT/);
    // A lock left by a process that no longer runs (pid past the kernel's pid_max), and one that is junk.
    for (const stale of ['4194305\n', 'garbage']) {
      writeFileSync(join(dataDir, 'lock'), stale);
      const s = await open();
      expect(readFileSync(join(dataDir, 'lock'), 'utf8')).toBe(`${process.pid}\n`);
      await s.close();
      server = undefined;
    }
  });
});
