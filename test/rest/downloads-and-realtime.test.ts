import mammoth from 'mammoth';
import { PDFParse } from 'pdf-parse';
import type { RunningServer } from '@soundclone/server';
import { ApiError, NotFoundError, SoundClone, ValidationError } from '@soundclone/core';
import { protocol } from '@soundclone/core/internal';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_B, clientFor, rejectionOf, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/** Transcript downloads in every format, and the real-time session REST calls. */
describe('downloads', () => {
  let server: RunningServer;
  let client: SoundClone;
  let transcriptionId: string;

  beforeAll(async () => {
    server = await startTestServer();
    client = clientFor(server);
    const upload = await client.uploads.create(wav(), { contentType: 'audio/wav' });
    const created = await client.stt.transcriptions.create({
      uploadId: upload.uploadId,
      title: 'Downloads',
      options: { exportFormats: ['pdf', 'srt'], exportOptions: [{ format: 'txt', includeTimestamps: false, maxCharactersPerLine: 20 }] },
    });
    transcriptionId = (await client.stt.transcriptions.wait(created.transcriptionId, { pollIntervalMs: 20 })).transcriptionId;
  });
  afterAll(() => server.close());

  it('returns text for txt, srt and html', async () => {
    const txt = await client.downloads.get(transcriptionId, 'txt');
    expect(typeof txt).toBe('string');
    expect(txt.length).toBeGreaterThan(0);
    expect(txt.split('\n').every((line) => line.length <= 20)).toBe(true);
    const srt = await client.downloads.get(transcriptionId, 'srt');
    expect(srt).toMatch(/^1\r?\n\d\d:\d\d:\d\d,\d{3} --> \d\d:\d\d:\d\d,\d{3}/);
    const html = await client.downloads.get(transcriptionId, 'html');
    expect(html.toLowerCase()).toContain('<html');
  });

  it('returns the parsed public view for json and the segments for segmented_json', async () => {
    const json = await client.downloads.get(transcriptionId, 'json');
    const task = await client.stt.transcriptions.get(transcriptionId);
    expect(json).toEqual(task);
    expect(typeof json.billing.billableCharacters).toBe('bigint');
    const segmented = await client.downloads.get(transcriptionId, 'segmented_json');
    expect(segmented.transcriptionId).toBe(transcriptionId);
    expect(segmented.segments.length).toBe(task.transcript?.segments.length);
  });

  it('returns bytes for docx and pdf that real parsers open, holding every segment', async () => {
    const task = await client.stt.transcriptions.get(transcriptionId);
    const segments = task.transcript?.segments ?? [];
    expect(segments.length).toBeGreaterThan(0);
    const docx = await client.downloads.get(transcriptionId, 'docx');
    expect(docx).toBeInstanceOf(Uint8Array);
    const { value: docxText } = await mammoth.extractRawText({ buffer: Buffer.from(docx) });
    for (const s of segments) expect(docxText).toContain(s.text);
    const pdf = await client.downloads.get(transcriptionId, 'pdf');
    const parser = new PDFParse({ data: pdf });
    try {
      const { text } = await parser.getText();
      expect(text).toContain('Downloads');
      for (const s of segments) expect(text).toContain(s.text);
    } finally {
      await parser.destroy();
    }
  });

  it('covers every format the protocol lists', async () => {
    for (const format of protocol.DOWNLOAD_FORMATS) expect(await client.downloads.get(transcriptionId, format)).toBeTruthy();
  });

  it('refuses an unknown format on the client, a task of another account and a task not ready', async () => {
    const bad = await rejectionOf(client.downloads.get(transcriptionId, 'mp3' as 'txt'));
    expect(bad).toBeInstanceOf(ValidationError);
    const other = clientFor(server, { accessKey: KEY_B });
    expect(await rejectionOf(other.downloads.get(transcriptionId, 'txt'))).toBeInstanceOf(NotFoundError);
    const upload = await client.uploads.create(wav(), { contentType: 'audio/wav' });
    const fresh = await client.stt.transcriptions.create({ uploadId: upload.uploadId });
    const notReady = await rejectionOf(client.downloads.get(fresh.transcriptionId, 'txt'));
    expect(notReady).toBeInstanceOf(ApiError);
    expect(notReady).toMatchObject({ code: 'TRANSCRIPT_NOT_READY', status: 409 });
  });
});

describe('realtime sessions over REST', () => {
  let server: RunningServer;
  let client: SoundClone;

  beforeAll(async () => {
    server = await startTestServer();
    client = clientFor(server);
  });
  afterAll(() => server.close());

  // On a cluster the replay, the read, the pause and the finishes each land on any node.
  it('creates with an Idempotency-Key, reads, pauses and finishes once; the task joins History', async () => {
    const idempotencyKey = 'rt-session-1';
    const session = await client.stt.realtime.create({ title: 'Live', options: { segmentCommitMode: 'manual' } }, { idempotencyKey });
    expect(session.sessionId).toMatch(/^rs_/);
    expect(session.socket.url).toMatch(/^ws:\/\//);
    expect(session.accepting).toBe(true);
    expect(session.usage.receivedSamples).toBe(0n);
    const replay = await client.stt.realtime.create({ title: 'Live', options: { segmentCommitMode: 'manual' } }, { idempotencyKey });
    expect(replay.sessionId).toBe(session.sessionId);
    expect(replay.replayed).toBe(true);

    const read = await client.stt.realtime.get(session.sessionId);
    expect(read.status).toBe('ACTIVE');
    const paused = await client.stt.realtime.pause(session.sessionId, 0n);
    expect(paused.status).toBe('PAUSED');
    expect(paused.accepting).toBe(false);

    const finished = await client.stt.realtime.finish(session.sessionId, '0');
    expect(finished.status).toBe('COMPLETED');
    expect(finished.usage.billableCharacters).toBe(0n);
    const again = await client.stt.realtime.finish(session.sessionId, 0);
    expect(again.transcriptionId).toBe(finished.transcriptionId);
    expect(again.usage.billableCharacters).toBe(finished.usage.billableCharacters);

    const task = await client.stt.transcriptions.get(session.transcriptionId);
    expect(task.modelId).toBe('svc_stt_realtime_v1');
    expect(task.status).toBe('COMPLETED');
    const history = await client.stt.transcriptions.list();
    expect(history.items.find((h) => h.transcriptionId === session.transcriptionId)?.modelId).toBe('svc_stt_realtime_v1');
  });

  it('marks a transport gap when the captured count exceeds what arrived (a huge bigint stays exact)', async () => {
    const session = await client.stt.realtime.create();
    const captured = 2n ** 60n + 7n;
    const finished = await client.stt.realtime.finish(session.sessionId, captured);
    expect(finished.usage.capturedSamples).toBe(captured);
    expect(finished.status).toBe('PARTIAL');
    expect(finished.notices.some((n) => n.code === 'TRANSPORT_GAP')).toBe(true);
  });

  it('refuses a pause after finish, a bad count, and another account reading the session', async () => {
    const session = await client.stt.realtime.create();
    await client.stt.realtime.finish(session.sessionId, 0);
    const closed = await rejectionOf(client.stt.realtime.pause(session.sessionId, 0));
    expect(closed).toMatchObject({ code: 'SESSION_CLOSED', status: 409 });
    const bad = await rejectionOf(client.stt.realtime.pause(session.sessionId, -1));
    expect((bad as ValidationError).violations[0]?.field).toBe('capturedSamples');
    const other = clientFor(server, { accessKey: KEY_B });
    expect(await rejectionOf(other.stt.realtime.get(session.sessionId))).toBeInstanceOf(NotFoundError);
    expect(await rejectionOf(client.stt.realtime.finish('rs_missing', 0))).toBeInstanceOf(NotFoundError);
  });
});
