import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idem, start, upload, transcribe, type TestServer } from '../support/server.js';
import { pcm, wav } from '../support/wav.js';

/**
 * audioTrackIndex end to end (spec POST /stt/transcriptions: "required when the source has more than
 * one audio track; use the index from the upload's media.audioTracks"), with a two-track Matroska file
 * made by mkvmerge from two WAVs: a 400 Hz word and a silent track.
 */
let server: TestServer;
let dir: string;
let uploadId: string;
let media: any;

beforeAll(async () => {
  server = await start();
  dir = mkdtempSync(join(tmpdir(), 'tracks-'));
  writeFileSync(join(dir, 'voice.wav'), wav([pcm([{ silence: 200 }, { tone: 400, ms: 300 }, { silence: 300 }])], 48_000));
  writeFileSync(join(dir, 'quiet.wav'), wav([pcm([{ silence: 800 }]), pcm([{ silence: 800 }])], 16_000));
  execFileSync('mkvmerge', ['-q', '-o', join(dir, 'two.mka'), join(dir, 'voice.wav'), join(dir, 'quiet.wav')]);
  const bytes = readFileSync(join(dir, 'two.mka'));
  uploadId = await upload(server, bytes, undefined, 'audio/x-matroska');
  media = (await server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: { 'Content-Type': 'audio/x-matroska' } })).body.data.media;
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = (body: Record<string, unknown>) =>
  server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': idem() } });

describe('multi-track sources', () => {
  it('list every audio track of the upload', () => {
    expect(media.container).toBe('matroska');
    expect(media.audioTracks.map((t: any) => [t.index, t.channels, t.sampleRate])).toEqual([[0, 1, 48_000], [1, 2, 16_000]]);
  });

  it('refuse a create without audioTrackIndex, naming the field, and one past the last track', async () => {
    const missing = await create({ uploadId });
    expect(missing.status).toBe(400);
    expect(missing.body.details.violations).toEqual([expect.objectContaining({ field: 'audioTrackIndex', rule: expect.stringContaining('required') })]);
    const past = await create({ uploadId, audioTrackIndex: 2 });
    expect(past.body.details.violations[0]).toMatchObject({ field: 'audioTrackIndex' });
  });

  it('transcribe the selected track only', async () => {
    const voice = await transcribe(server, { uploadId, audioTrackIndex: 0 });
    const quiet = await transcribe(server, { uploadId, audioTrackIndex: 1 });
    const text = async (id: string) => (await server.call('GET', `/stt/transcriptions/${id}`)).body.data.transcript.text as string;
    // The same audio uploaded on its own as a WAV reads the same.
    const alone = await transcribe(server, { uploadId: await upload(server, readFileSync(join(dir, 'voice.wav'))) });
    const expected = await text(alone.transcriptionId);
    expect(expected.length).toBeGreaterThan(0);
    expect(await text(voice.transcriptionId)).toBe(expected);
    expect(await text(quiet.transcriptionId)).toBe('');
  });
});
