import { describe, expect, it } from 'vitest';
import { KEY_B, serverForSuite } from './support/server.js';
import { speechWav } from './support/wav.js';

const MB10 = 10 * 1024 * 1024;
const WAV = speechWav();
const MP3 = Buffer.concat([Buffer.from('ID3\x04\x00\x00\x00\x00\x00\x00', 'latin1'), Buffer.alloc(100)]);
const MP3_FRAME = Buffer.concat([Buffer.from([0xff, 0xfb, 0x90, 0x64]), Buffer.alloc(100)]);
const M4A = Buffer.concat([Buffer.from([0, 0, 0, 0x20]), Buffer.from('ftypM4A ', 'latin1'), Buffer.alloc(100)]);
const TEXT = Buffer.from('this is not audio at all, whatever its name says');

function form(name: string | undefined, files: Array<{ bytes: Buffer; filename: string }>): FormData {
  const f = new FormData();
  if (name !== undefined) f.append('name', name);
  for (const file of files) f.append('files', new Blob([new Uint8Array(file.bytes)]), file.filename);
  return f;
}

function sized(size: number): Buffer {
  const b = Buffer.alloc(size);
  WAV.copy(b, 0, 0, 44);
  return b;
}

describe('voices', () => {
  const server = serverForSuite({ accountOverrides: { [KEY_B]: { totalVoices: 2 } } });

  it('lists system voices and the account own voices with every field', async () => {
    const r = await server.call('GET', '/voices');
    expect(r.body.data.length).toBe(5);
    for (const v of r.body.data) {
      expect(Object.keys(v).sort()).toEqual(['channel', 'feature', 'fileCount', 'id', 'name', 'totalFileSize', 'type']);
      expect(typeof v.fileCount).toBe('number');
    }
  });

  it('creates a voice from wav, mp3 and m4a files checked by content', async () => {
    const r = await server.call('POST', '/voices/tts', {
      body: form('x'.repeat(32), [
        { bytes: WAV, filename: 'a.txt' },
        { bytes: MP3, filename: 'b.bin' },
        { bytes: MP3_FRAME, filename: 'c' },
        { bytes: M4A, filename: 'd.m4a' },
      ]),
    });
    expect(r.status).toBe(200);
    expect(r.body.data.id).toMatch(/^[0-9]+$/);
    const list = await server.call('GET', '/voices');
    const voice = list.body.data.find((v: any) => v.id === r.body.data.id);
    expect(voice).toMatchObject({ name: 'x'.repeat(32), type: 'clone', channel: 'api', fileCount: 4 });
    expect(voice.totalFileSize).toBe(WAV.length + MP3.length + MP3_FRAME.length + M4A.length);
  });

  it('refuses a name past 32 characters, a missing name and a missing file, all at once', async () => {
    const r = await server.call('POST', '/voices/tts', { body: form('y'.repeat(33), []) });
    expect(r.status).toBe(400);
    expect(r.body.errorCode).toBe('INPUT_INVALID');
    const fields = r.body.details.violations.map((v: any) => v.field);
    expect(fields).toEqual(['name', 'files']);
    const noName = await server.call('POST', '/voices/tts', { body: form(undefined, [{ bytes: WAV, filename: 'a.wav' }]) });
    expect(noName.body.details.violations[0]).toMatchObject({ field: 'name' });
  });

  it('refuses content that is not mp3, wav or m4a even when named .wav', async () => {
    const r = await server.call('POST', '/voices/tts', { body: form('n', [{ bytes: WAV, filename: 'ok.wav' }, { bytes: TEXT, filename: 'fake.wav' }]) });
    expect(r.status).toBe(400);
    expect(r.body.details.violations).toEqual([{ field: 'files[1]', rule: 'must be mp3, wav or m4a (checked by content, not by name)' }]);
  });

  it('accepts a file of exactly 10 MB and refuses one byte more', async () => {
    const at = await server.call('POST', '/voices/tts', { body: form('big', [{ bytes: sized(MB10), filename: 'a.wav' }]) });
    expect(at.body.code).toBe(1);
    const past = await server.call('POST', '/voices/tts', { body: form('big', [{ bytes: sized(MB10 + 1), filename: 'a.wav' }]) });
    expect(past.status).toBe(400);
    expect(past.body.details.violations[0].field).toBe('files[0]');
    expect(past.body.details.violations[0].rule).toContain('at most 10485760 bytes');
  });

  it('accepts 25 files and refuses 26', async () => {
    const files = (n: number) => Array.from({ length: n }, (_, i) => ({ bytes: WAV.subarray(0, 200), filename: `${i}.wav` }));
    const at = await server.call('POST', '/voices/tts', { body: form('many', files(25)) });
    expect(at.body.code).toBe(1);
    const past = await server.call('POST', '/voices/tts', { body: form('many', files(26)) });
    expect(past.status).toBe(400);
    expect(past.body.details.violations).toContainEqual({ field: 'files', rule: 'at most 25 files' });
  });

  it('refuses a non-multipart body', async () => {
    const r = await server.call('POST', '/voices/tts', { json: { name: 'x' } });
    expect(r.status).toBe(400);
    expect(r.body.details.violations[0].field).toBe('body');
  });

  it('enforces the totalVoices quota for clones and designs, visible in user info', async () => {
    const info = await server.call('GET', '/user/info', { key: KEY_B });
    expect(info.body.data.benefit).toMatchObject({ usedVoices: 1, totalVoices: 2 });
    const first = await server.call('POST', '/voices/tts', { key: KEY_B, body: form('one', [{ bytes: WAV, filename: 'a.wav' }]) });
    expect(first.body.code).toBe(1);
    const second = await server.call('POST', '/voices/tts', { key: KEY_B, body: form('two', [{ bytes: WAV, filename: 'a.wav' }]) });
    expect(second.status).toBe(403);
    expect(second.body.errorCode).toBe('QUOTA_EXCEEDED');
    const design = await server.call('POST', '/voices/design/save', { key: KEY_B, json: { designId: 'design-2-01', name: 'd' } });
    expect(design.body.errorCode).toBe('QUOTA_EXCEEDED');
    const after = await server.call('GET', '/user/info', { key: KEY_B });
    expect(after.body.data.benefit.usedVoices).toBe(2);
  });

  it('saves a seeded design once; unknown, foreign and reused design ids are refused', async () => {
    const saved = await server.call('POST', '/voices/design/save', { json: { designId: 'design-1-03', name: 'Designed' } });
    expect(saved.body.data.id).toMatch(/^[0-9]+$/);
    const again = await server.call('POST', '/voices/design/save', { json: { designId: 'design-1-03', name: 'Designed' } });
    expect(again.body.errorCode).toBe('INPUT_INVALID');
    const foreign = await server.call('POST', '/voices/design/save', { json: { designId: 'design-2-05', name: 'x' } });
    expect(foreign.body.details.violations[0].field).toBe('designId');
    const invalid = await server.call('POST', '/voices/design/save', { json: { name: 'z'.repeat(33) } });
    expect(invalid.body.details.violations.map((v: any) => v.field)).toEqual(['designId', 'name']);
  });

  it('renames an own voice; another account cannot, and a non-Long id is refused', async () => {
    const list = await server.call('GET', '/voices');
    const own = list.body.data.find((v: any) => v.type === 'clone');
    const ok = await server.call('PUT', `/voices/rename/${own.id}`, { json: { name: 'Renamed' } });
    expect(ok.body).toEqual({ code: 1, message: 'success' });
    const after = await server.call('GET', '/voices');
    expect(after.body.data.find((v: any) => v.id === own.id).name).toBe('Renamed');
    const foreign = await server.call('PUT', `/voices/rename/${own.id}`, { key: KEY_B, json: { name: 'Mine' } });
    expect(foreign.status).toBe(404);
    const system = list.body.data.find((v: any) => v.type === 'system');
    expect((await server.call('PUT', `/voices/rename/${system.id}`, { json: { name: 'x' } })).status).toBe(404);
    const bad = await server.call('PUT', '/voices/rename/abc', { json: { name: '' } });
    expect(bad.body.details.violations.map((v: any) => v.field)).toEqual(['id', 'name']);
    const long = await server.call('PUT', `/voices/rename/${own.id}`, { json: { name: 'q'.repeat(33) } });
    expect(long.status).toBe(400);
  });
});
