import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { RunningServer } from '@soundclone/server';
import {
  IdempotencyConflictError, InputInvalidError, MediaFetchError, NotFoundError, SoundClone, ValidationError, WaitTimeoutError,
  isTerminalStatus, type HistoryItem, type TranscriptionTask,
} from '@soundclone/core';
import { watchTranscription } from '@soundclone/core/rx';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_B, clientFor, rejectionOf, requestsTo, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/** Batch transcriptions end to end: uploads, create, idempotency, History, wait and watch. */
describe('transcriptions', () => {
  let server: RunningServer;
  let slow: RunningServer;
  let media: Server;
  let mediaOrigin: string;
  let a: SoundClone;
  let b: SoundClone;
  let uploadId: string;

  beforeAll(async () => {
    media = createServer((req, res) => {
      if (req.url === '/ok.wav') res.writeHead(200, { 'Content-Type': 'audio/wav' }).end(wav());
      else res.writeHead(404).end('no');
    });
    await new Promise<void>((resolve) => media.listen(0, '127.0.0.1', () => resolve()));
    const port = (media.address() as AddressInfo).port;
    mediaOrigin = `http://127.0.0.1:${port}`;
    server = await startTestServer({ allowMediaHosts: [`127.0.0.1:${port}`] });
    // Holds tasks in PROCESSING long enough to observe waits, reservations and status changes.
    slow = await startTestServer({ taskTiming: { queueMs: 100, processingMs: 1200, reconcilingMs: 100 } });
    a = clientFor(server);
    b = clientFor(server, { accessKey: KEY_B });
    uploadId = (await a.uploads.create(wav(), { contentType: 'audio/wav', filename: 'speech.wav' })).uploadId;
  });
  afterAll(async () => {
    await Promise.all([server.close(), slow.close(), new Promise<void>((r) => media.close(() => r()))]);
  });

  it('uploads media and reports its tracks with decimal fields as bigint', async () => {
    const upload = await a.uploads.create(new Blob([wav() as Uint8Array<ArrayBuffer>], { type: 'audio/wav' }), { filename: 'blob.wav' });
    expect(upload.uploadId).toMatch(/^up_/);
    expect(upload.filename).toBe('blob.wav');
    expect(typeof upload.sizeBytes).toBe('bigint');
    expect(upload.media.durationMs).toBe(2600n);
    expect(upload.media.audioTracks).toEqual([{ index: 0, codec: 'pcm', channels: 1, sampleRate: 16000, durationMs: 2600n }]);
    const refused = await rejectionOf(a.uploads.create(new TextEncoder().encode('not audio'), { contentType: 'text/plain' }));
    expect(refused).toMatchObject({ code: 'UNSUPPORTED_TYPE', status: 415 });
    const dir = await mkdtemp(join(tmpdir(), 'soundclone-upload-'));
    try {
      await writeFile(join(dir, 'from-disk.wav'), wav());
      const fromPath = await a.uploads.create(join(dir, 'from-disk.wav'), { contentType: 'audio/wav' });
      expect(fromPath.filename).toBe('from-disk.wav');
      const missing = await rejectionOf(a.uploads.create(join(dir, 'missing.wav')));
      expect(missing).toMatchObject({ name: 'ValidationError', violations: [{ field: 'source' }] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('creates, waits and reads a completed task with typed billing', async () => {
    const created = await a.stt.transcriptions.create({ uploadId, title: 'First', options: { alignmentLevel: 'word' } });
    expect(created.transcriptionId).toMatch(/^tr_/);
    expect(created.requestId).toMatch(/^req_/);
    expect(created.replayed).toBe(false);
    expect(created.billing.state).toBe('RESERVED');
    expect(created.billing.reservedCharacters).toBe(600n);
    const done = await a.stt.transcriptions.wait(created.transcriptionId, { pollIntervalMs: 20 });
    expect(done.status).toBe('COMPLETED');
    const { billing } = done;
    expect(billing.reservedCharacters).toBe(billing.settledCharacters + billing.releasedCharacters);
    expect(billing.billableCharacters).toBe(30n); // 2.6 s -> 3 s at 600/min
    expect(done.audioDurationMs).toBe(2600n);
    expect(done.transcript?.segments.length).toBeGreaterThan(0);
    expect(done.error).toBeUndefined();
  });

  it('waitForCompletion returns the terminal task in the same request', async () => {
    const done = await a.stt.transcriptions.create({ uploadId, waitForCompletion: true, waitTimeoutMs: 10_000 });
    expect(done.status).toBe('COMPLETED');
  });

  it('replays the same key and body to the same task, and refuses the same key with another body', async () => {
    const idempotencyKey = `replay-${Date.now()}`;
    const first = await a.stt.transcriptions.create({ uploadId, title: 'Idem' }, { idempotencyKey });
    const second = await a.stt.transcriptions.create({ uploadId, title: 'Idem' }, { idempotencyKey });
    expect(second.transcriptionId).toBe(first.transcriptionId);
    expect(second.replayed).toBe(true);
    expect(second.idempotencyKey).toBe(idempotencyKey);
    const conflict = await rejectionOf(a.stt.transcriptions.create({ uploadId, title: 'Other' }, { idempotencyKey }));
    expect(conflict).toBeInstanceOf(IdempotencyConflictError);
    expect(conflict).toMatchObject({ code: 'IDEMPOTENCY_CONFLICT', status: 409 });
  });

  it('concurrent creates with one key make one task and one reservation', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const before = (await s.stt.capabilities()).account.balances?.reservedCharacters ?? -1n;
    const idempotencyKey = 'concurrent-key-1';
    const results = await Promise.all(Array.from({ length: 8 }, () => s.stt.transcriptions.create({ uploadId: upload.uploadId }, { idempotencyKey })));
    const ids = new Set(results.map((r) => r.transcriptionId));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r.replayed)).toHaveLength(1);
    const after = (await s.stt.capabilities()).account.balances?.reservedCharacters;
    expect(after).toBe(before + (results[0]?.billing.reservedCharacters ?? 0n));
    const history: HistoryItem[] = [];
    for await (const item of s.stt.transcriptions.list()) history.push(item);
    expect(history.filter((h) => ids.has(h.transcriptionId))).toHaveLength(1);
    const usedBefore = (await s.user.info()).benefit.usedMonthlyChars;
    const done = await s.stt.transcriptions.wait([...ids][0] as string, { pollIntervalMs: 50 });
    expect((await s.user.info()).benefit.usedMonthlyChars - usedBefore).toBe(Number(done.billing.billableCharacters));
    expect((await s.stt.capabilities()).account.balances?.reservedCharacters).toBe(before);
  });

  it('wait() with a budget gives WaitTimeoutError while the task keeps running, and later completes', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const started = Date.now();
    const error = await rejectionOf(s.stt.transcriptions.wait(created.transcriptionId, { timeoutMs: 250, pollIntervalMs: 50 }));
    expect(Date.now() - started).toBeLessThan(1200); // the task needs about 1400 ms
    expect(error).toBeInstanceOf(WaitTimeoutError);
    const timeout = error as WaitTimeoutError<TranscriptionTask>;
    expect(timeout.code).toBe('WAIT_TIMEOUT');
    expect(timeout.task && isTerminalStatus(timeout.task.status)).toBe(false);
    expect(timeout.task?.error).toBeUndefined();
    const done = await s.stt.transcriptions.wait(created.transcriptionId, { pollIntervalMs: 50, timeoutMs: 10_000 });
    expect(done.status).toBe('COMPLETED');
  });

  it('wait() stops at once when the caller aborts', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('user left')), 100);
    const error = await rejectionOf(s.stt.transcriptions.wait(created.transcriptionId, { signal: controller.signal, pollIntervalMs: 30 }));
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORTED' });
  });

  it('watchTranscription() (rx) emits each distinct status once and completes at the terminal one', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const statuses = await new Promise<string[]>((resolve, reject) => {
      const out: string[] = [];
      watchTranscription(s.stt.transcriptions, created.transcriptionId, { pollIntervalMs: 20, maxPollIntervalMs: 40 }).subscribe({
        next: (t) => out.push(t.status),
        error: reject,
        complete: () => resolve(out),
      });
    });
    expect(statuses.at(-1)).toBe('COMPLETED');
    expect(new Set(statuses).size).toBe(statuses.length);
    expect(statuses).toContain('PROCESSING');
  });

  it('unsubscribing from watchTranscription() (rx) stops polling', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const seen: string[] = [];
    const subscription = watchTranscription(s.stt.transcriptions, created.transcriptionId, { pollIntervalMs: 20 }).subscribe((t) => seen.push(t.status));
    await new Promise((r) => setTimeout(r, 150));
    subscription.unsubscribe();
    // A read already on the wire may still be logged; anything after this pause would be new polling.
    await new Promise((r) => setTimeout(r, 50));
    // A poll already on the wire when the signal fired may still reach the server (through a balancer,
    // well after the abort): count from once that one has landed. Polling every 20 ms would send ~15 more.
    await new Promise((r) => setTimeout(r, 150));
    const from = slow.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(requestsTo(slow, 'GET', created.transcriptionId, from)).toHaveLength(0);
    expect(seen.length).toBeGreaterThan(0);
  });

  it('watch() yields each distinct status once and ends at the terminal one', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const statuses: string[] = [];
    for await (const task of s.stt.transcriptions.watch(created.transcriptionId, { pollIntervalMs: 20, maxPollIntervalMs: 40 })) statuses.push(task.status);
    expect(statuses.at(-1)).toBe('COMPLETED');
    expect(new Set(statuses).size).toBe(statuses.length);
    expect(statuses).toContain('PROCESSING');
  });

  it('leaving a watch() loop stops polling', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const seen: string[] = [];
    for await (const task of s.stt.transcriptions.watch(created.transcriptionId, { pollIntervalMs: 20 })) {
      seen.push(task.status);
      break;
    }
    // A poll already on the wire when the signal fired may still reach the server (through a balancer,
    // well after the abort): count from once that one has landed. Polling every 20 ms would send ~15 more.
    await new Promise((r) => setTimeout(r, 150));
    const from = slow.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(requestsTo(slow, 'GET', created.transcriptionId, from)).toHaveLength(0);
    expect(seen).toHaveLength(1);
    expect(isTerminalStatus(seen[0] as string)).toBe(false);
  });

  it('aborting watch() stops polling and ends the loop with AbortError', async () => {
    const s = clientFor(slow);
    const upload = await s.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await s.stt.transcriptions.create({ uploadId: upload.uploadId });
    const controller = new AbortController();
    const seen: string[] = [];
    const looping = (async () => {
      for await (const task of s.stt.transcriptions.watch(created.transcriptionId, { pollIntervalMs: 20, signal: controller.signal })) seen.push(task.status);
    })();
    await new Promise((r) => setTimeout(r, 150));
    controller.abort(new Error('user left'));
    const error = await rejectionOf(looping);
    expect(error).toMatchObject({ name: 'AbortError', code: 'ABORTED' });
    // A poll already on the wire when the signal fired may still reach the server (through a balancer,
    // well after the abort): count from once that one has landed. Polling every 20 ms would send ~15 more.
    await new Promise((r) => setTimeout(r, 150));
    const from = slow.requests.length;
    await new Promise((r) => setTimeout(r, 300));
    expect(requestsTo(slow, 'GET', created.transcriptionId, from)).toHaveLength(0);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.some((status) => isTerminalStatus(status))).toBe(false);
    // An id that cannot be valid is refused before anything is sent.
    expect(() => s.stt.transcriptions.watch('')).toThrow(ValidationError);
  });

  it('a run-time rejected entity category ends FAILED with a typed error object, not a throw', async () => {
    const created = await a.stt.transcriptions.create({ uploadId, options: { entityCategories: ['not_a_category'] } });
    const task = await a.stt.transcriptions.wait(created.transcriptionId, { pollIntervalMs: 20 });
    expect(task.status).toBe('FAILED');
    expect(task.error).toMatchObject({ errorCode: 'INPUT_INVALID', retryable: false, action: 'FIX_INPUT' });
    expect(task.billing.state).toBe('RELEASED');
    expect(task.billing.billableCharacters).toBe(0n);
  });

  it('validates on the client before sending: every violation at once, nothing sent', async () => {
    const from = server.requests.length;
    const error = await rejectionOf(a.stt.transcriptions.create({
      uploadId,
      mediaUrl: 'https://example.com/a.wav',
      options: { maxSpeakerCount: 33, rewriteInstruction: 'x', entityCategories: ['pii'], matchKnownSpeakers: true },
    }));
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as ValidationError).violations.map((v) => v.field)).toEqual([
      'uploadId', 'options.maxSpeakerCount', 'options.rewriteInstruction', 'options.matchKnownSpeakers',
    ]);
    expect(server.requests.length).toBe(from);
  });

  it('the server stays the authority: its INPUT_INVALID becomes InputInvalidError with violations', async () => {
    // audioTrackIndex 1 passes the client (it cannot see the tracks) and is refused by the server.
    const error = await rejectionOf(a.stt.transcriptions.create({ uploadId, audioTrackIndex: 1 }));
    expect(error).toBeInstanceOf(InputInvalidError);
    expect((error as InputInvalidError).violations).toEqual([{ field: 'audioTrackIndex', rule: 'must be an index of media.audioTracks (0 to 0)' }]);
    expect((error as InputInvalidError).status).toBe(400);
  });

  it('transcribes a mediaUrl and reports media failures with reason and sourceStatus', async () => {
    const ok = await a.stt.transcriptions.create({ mediaUrl: `${mediaOrigin}/ok.wav`, waitForCompletion: true, waitTimeoutMs: 10_000 });
    expect(ok.status).toBe('COMPLETED');
    const missing = await rejectionOf(a.stt.transcriptions.create({ mediaUrl: `${mediaOrigin}/missing.wav` }));
    expect(missing).toBeInstanceOf(MediaFetchError);
    expect(missing).toMatchObject({ code: 'MEDIA_FETCH_FAILED', reason: 'SOURCE_REFUSED', sourceStatus: 404, status: 422 });
    // A loopback port that is not allowed: refused by policy before any connection (loopback only).
    const refused = await rejectionOf(a.stt.transcriptions.create({ mediaUrl: 'http://127.0.0.1:9/x.wav' }));
    expect(refused).toMatchObject({ name: 'MediaFetchError', reason: 'DESTINATION_NOT_ALLOWED' });
    expect((refused as MediaFetchError).sourceStatus).toBeUndefined();
  });

  it('lists History page by page, awaitable and iterable, and hides other accounts', async () => {
    const first = await a.stt.transcriptions.list({ pageSize: 2 });
    expect(first.page).toBe(1);
    expect(first.items).toHaveLength(2);
    expect(first.totalPage).toBe(Math.ceil(first.total / 2));
    const all: HistoryItem[] = [];
    for await (const item of a.stt.transcriptions.list({ pageSize: 2 })) all.push(item);
    expect(all).toHaveLength(first.total);
    expect(typeof all[0]?.characters).toBe('bigint');
    const other = await b.stt.transcriptions.list();
    expect(other.total).toBe(0);
    const hidden = await rejectionOf(b.stt.transcriptions.get(all[0]?.transcriptionId as string));
    expect(hidden).toBeInstanceOf(NotFoundError);
  });

  it('encodes path parameters so an id cannot address another endpoint', async () => {
    const error = await rejectionOf(a.stt.transcriptions.get('../../user/info'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(requestsTo(server, 'GET', /%2F|user\/info$/).at(-1)?.path).toContain('%2F');
  });

  it('reads capabilities with typed account balances', async () => {
    const caps = await a.stt.capabilities();
    expect(caps.modelId).toBe('svc_stt_v1');
    expect(caps.downloadFormats).toEqual(['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf']);
    expect(caps.account.rate?.ratePerMinute).toBe(600n);
    expect(typeof caps.account.balances?.availableCharacters).toBe('bigint');
    expect(caps.models.map((m) => m.mode).sort()).toEqual(['BATCH', 'REALTIME']);
  });
});
