import type { RunningServer } from '@soundclone/server';
import { ApiError, SoundClone, isSoundCloneError } from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientFor, rejectionOf, startTestServer } from './support/harness.js';
import { wav } from './support/audio.js';

/** The SDK against the reference server: storage quota in capabilities, uploads.delete, the typed refusal. */
describe('uploads and the storage quota', () => {
  const file = wav();
  // Room for two uploads of the file, not three.
  const quota = file.length * 2 + 100;
  let server: RunningServer;
  let client: SoundClone;

  beforeAll(async () => {
    server = await startTestServer({ uploadQuotaBytes: quota });
    client = clientFor(server);
  });
  afterAll(() => server.close());

  it('reports held bytes as bigints, refuses past the quota with STORAGE_QUOTA_EXCEEDED and frees room on delete', async () => {
    expect((await client.stt.capabilities()).account.storage).toEqual({ usedBytes: 0n, quotaBytes: BigInt(quota) });
    const first = await client.uploads.create(file, { contentType: 'audio/wav' });
    const second = await client.uploads.create(file, { contentType: 'audio/wav' });
    expect((await client.stt.capabilities()).account.storage).toEqual({ usedBytes: BigInt(file.length * 2), quotaBytes: BigInt(quota) });

    const refused = await rejectionOf(client.uploads.create(file, { contentType: 'audio/wav' }));
    expect(isSoundCloneError(refused, ApiError)).toBe(true);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: 'STORAGE_QUOTA_EXCEEDED', status: 413, details: { quotaBytes: String(quota), usedBytes: String(file.length * 2) } });

    const deleted = await client.uploads.delete(first.uploadId);
    expect(deleted).toEqual({ uploadId: first.uploadId, storage: { usedBytes: BigInt(file.length), quotaBytes: BigInt(quota) } });
    // The deleted one is gone for transcription too; the other still transcribes.
    expect(await rejectionOf(client.stt.transcriptions.create({ uploadId: first.uploadId }))).toMatchObject({ code: 'NOT_FOUND' });
    const task = await client.stt.transcriptions.create({ uploadId: second.uploadId, waitForCompletion: true });
    expect(task.status).toBe('COMPLETED');
    expect((await client.uploads.create(file, { contentType: 'audio/wav' })).uploadId).toMatch(/^up_/);
  });

  it('refuses a malformed upload with UNSUPPORTED_TYPE naming the problem', async () => {
    const bytes = Uint8Array.from([0x1a, 0x45, 0xdf, 0xa3, 0x80, 0x18, 0x53, 0x80, 0x67, 0x80]);
    const refused = await rejectionOf(client.uploads.create(bytes, { contentType: 'audio/x-matroska' }));
    expect(refused).toMatchObject({ code: 'UNSUPPORTED_TYPE', status: 415, details: { problem: 'NO_AUDIO' } });
  });
});
