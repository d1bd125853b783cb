import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunningServer } from '@soundclone/server';
import {
  ApiError, AuthenticationError, InputInvalidError, InsufficientCharactersError, NotFoundError, QuotaExceededError, SoundClone, ValidationError, isSoundCloneError,
} from '@soundclone/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_B, clientFor, rejectionOf, requestsTo, startTestServer } from './support/harness.js';
import { m4a, mp3, mp3FrameSync, wav } from './support/audio.js';

/** Voices, user info and authentication against the reference server over real HTTP. */
describe('voices, user info and auth', () => {
  let server: RunningServer;
  let a: SoundClone;
  let b: SoundClone;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer({ accountOverrides: { [KEY_B]: { totalVoices: 2, totalMonthlyChars: 0, totalOrderChars: 0 } } });
    a = clientFor(server);
    b = clientFor(server, { accessKey: KEY_B });
    dir = await mkdtemp(join(tmpdir(), 'soundclone-voices-'));
  });
  afterAll(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists the voices of the key: system voices and the account own, typed', async () => {
    const voices = await a.voices.list();
    expect(voices.length).toBeGreaterThanOrEqual(5);
    for (const v of voices) {
      expect(typeof v.id).toBe('string');
      expect(typeof v.fileCount).toBe('number');
      expect(typeof v.totalFileSize).toBe('number');
    }
    expect(voices.some((v) => v.type === 'system')).toBe(true);
  });

  it('creates a voice from a Node path, bytes, a Blob and a File, sniffing content not names', async () => {
    const path = join(dir, 'sample.bin');
    await writeFile(path, wav());
    const before = await a.user.info();
    const { id } = await a.voices.create({
      name: 'Mixed sources',
      files: [path, mp3(), new Blob([m4a() as Uint8Array<ArrayBuffer>]), new File([mp3FrameSync() as Uint8Array<ArrayBuffer>], 'named.mp3'), { data: wav(), filename: 'x.dat' }],
    });
    expect(id).toMatch(/^[0-9]+$/);
    const voice = (await a.voices.list()).find((v) => v.id === id);
    expect(voice).toMatchObject({ name: 'Mixed sources', fileCount: 5 });
    const after = await a.user.info();
    expect(after.benefit.usedVoices).toBe(before.benefit.usedVoices + 1);
  });

  it('checks name, count, size and type before sending, all violations at once', async () => {
    const from = server.requests.length;
    const tooBig = new Uint8Array(10 * 1024 * 1024 + 1);
    tooBig.set(wav().subarray(0, 44));
    const error = await rejectionOf(a.voices.create({ name: 'x'.repeat(33), files: [new TextEncoder().encode('hello, not audio'), tooBig] }));
    expect(error).toBeInstanceOf(ValidationError);
    const fields = (error as ValidationError).violations.map((v) => v.field);
    expect(fields).toEqual(['name', 'files[0]', 'files[1]']);
    const tooMany = await rejectionOf(a.voices.create({ name: 'ok', files: Array.from({ length: 26 }, () => mp3()) }));
    expect((tooMany as ValidationError).violations).toEqual([{ field: 'files', rule: 'at most 25 files' }]);
    const none = await rejectionOf(a.voices.create({ name: '', files: [] }));
    expect((none as ValidationError).violations.map((v) => v.field)).toEqual(['name', 'files']);
    const missing = await rejectionOf(a.voices.create({ name: 'ok', files: [join(dir, 'nope.wav')] }));
    expect((missing as ValidationError).violations[0]?.field).toBe('files[0]');
    // Exactly at the limits passes: 32 characters (code points), 25 files.
    const ok = await a.voices.create({ name: '🎤'.repeat(32), files: Array.from({ length: 25 }, () => mp3(64)) });
    expect(ok.id).toMatch(/^[0-9]+$/);
    expect(requestsTo(server, 'POST', '/voices/tts', from)).toHaveLength(1);
  });

  it('saves a designed voice and renames it; the service refuses a design saved twice', async () => {
    const { id } = await a.voices.saveDesign({ designId: 'design-1-01', name: 'Designed' });
    await a.voices.rename(id, 'Renamed');
    expect((await a.voices.list()).find((v) => v.id === id)?.name).toBe('Renamed');
    const again = await rejectionOf(a.voices.saveDesign({ designId: 'design-1-01', name: 'Twice' }));
    expect(again).toBeInstanceOf(InputInvalidError);
    expect((again as InputInvalidError).violations[0]?.field).toBe('designId');
    expect((again as InputInvalidError).status).toBe(400);
    const bad = await rejectionOf(a.voices.rename('not-a-long', ''));
    expect((bad as ValidationError).violations.map((v) => v.field)).toEqual(['id', 'name']);
  });

  it('enforces the voice quota as QuotaExceededError', async () => {
    // KEY_B has totalVoices 2 and starts with its website voice.
    await b.voices.create({ name: 'second', files: [wav()] });
    const error = await rejectionOf(b.voices.create({ name: 'third', files: [wav()] }));
    expect(error).toBeInstanceOf(QuotaExceededError);
    expect(error).toMatchObject({ code: 'QUOTA_EXCEEDED', status: 403 });
    expect((error as ApiError).requestId).toMatch(/^req_/);
  });

  it('reads user info with the benefit counters', async () => {
    const info = await a.user.info();
    expect(info.status).toBe('active');
    expect(info.plan).toBe('Pro');
    expect(info.resetInDays).toBeGreaterThan(0);
    expect(info.benefit.totalVoices).toBe(30);
    expect(info.benefit.usedMonthlyChars).toBeGreaterThan(0);
  });

  it('refuses a missing or unknown key with AuthenticationError (401), keeping request id and message', async () => {
    const unknown = new SoundClone({ accessKey: 'no-such-key', baseUrl: server.url });
    const error = await rejectionOf(unknown.user.info());
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(isSoundCloneError(error, AuthenticationError) && isSoundCloneError(error, ApiError)).toBe(true);
    expect(error).toMatchObject({ name: 'AuthenticationError', code: 'UNAUTHORIZED', status: 401, message: 'unknown accessKey' });
    expect((error as AuthenticationError).requestId).toMatch(/^req_/);
    // Not retried: a 401 will not change.
    const from = server.requests.length;
    await rejectionOf(unknown.voices.list());
    expect(server.requests.length - from).toBe(1);
  });

  it('refuses a missing key too (a fetch that strips the header stands in for a misconfigured proxy)', async () => {
    const stripped = clientFor(server, {
      fetch: (input, init) => {
        const headers = new Headers(init?.headers);
        headers.delete('accessKey');
        return fetch(input, { ...init, headers });
      },
    });
    const error = await rejectionOf(stripped.user.info());
    expect(error).toMatchObject({ name: 'AuthenticationError', status: 401, message: 'missing accessKey header' });
  });

  it('reports an account without Characters as InsufficientCharactersError with the amounts', async () => {
    const { uploadId } = await b.uploads.create(wav(), { contentType: 'audio/wav' });
    const error = await rejectionOf(b.stt.transcriptions.create({ uploadId }));
    expect(error).toBeInstanceOf(InsufficientCharactersError);
    expect(error).toMatchObject({ code: 'INSUFFICIENT_CHARACTERS', status: 402, details: { requiredCharacters: '600', availableCharacters: '0' } });
    expect(await rejectionOf(b.stt.realtime.create())).toBeInstanceOf(InsufficientCharactersError);
  });

  it('keeps accounts apart: another key cannot rename a voice it does not own', async () => {
    const { id } = await a.voices.create({ name: 'Mine', files: [wav()] });
    const error = await rejectionOf(b.voices.rename(id, 'Stolen'));
    expect(error).toBeInstanceOf(NotFoundError);
    expect((await b.voices.list()).some((v) => v.id === id)).toBe(false);
  });

  it('validates client options at construction, every problem at once', () => {
    let caught: unknown;
    try {
      new SoundClone({ accessKey: '', baseUrl: 'ftp://x', timeoutMs: -1, maxRetries: 1.5 });
    } catch (error) {
      caught = error;
    }
    expect((caught as ValidationError).violations.map((v) => v.field)).toEqual(['accessKey', 'baseUrl', 'timeoutMs', 'maxRetries']);
  });
});
