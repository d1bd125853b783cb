import { beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, transcribe, upload, serverForSuite } from './support/server.js';
import { pcm, wav, type Piece } from './support/wav.js';

// The EnergyRecognizer is deterministic: a 400 Hz, 300 ms burst is the name "bob"; 440 Hz for 500 ms is
// the disfluency "uh"; a burst of 1.5 s or more is a sound event when includeSoundEvents is on.
const BOB: Piece = { tone: 400, ms: 300 };
const UH: Piece = { tone: 440, ms: 500 };
const LONG: Piece = { tone: 300, ms: 1600 };

describe('transcript content and options', () => {
  const server = serverForSuite();
  let speech: string;
  beforeAll(async () => {
    speech = await upload(server, wav([pcm([{ silence: 100 }, { tone: 220, ms: 300 }, { silence: 100 }, BOB, { silence: 100 }, UH, { silence: 600 }, { tone: 900, ms: 300 }, { silence: 100 }, LONG, { silence: 200 }])]));
  });

  it('is deterministic: the same audio gives the same words', async () => {
    const a = await transcribe(server, { uploadId: speech });
    const b = await transcribe(server, { uploadId: await upload(server, wav([pcm([{ silence: 100 }, { tone: 220, ms: 300 }, { silence: 100 }, BOB, { silence: 100 }, UH, { silence: 600 }, { tone: 900, ms: 300 }, { silence: 100 }, LONG, { silence: 200 }])])) });
    expect(b.transcript.text).toBe(a.transcript.text);
    const words = a.transcript.segments.flatMap((s: any) => s.tokens.map((t: any) => t.text));
    expect(words).toContain('bob');
    expect(words).toContain('uh');
    expect(a.transcript.text).toBe(a.transcript.segments.map((s: any) => s.text).join(' '));
  });

  it('detects name entities and redacts them in each style', async () => {
    const found = await transcribe(server, { uploadId: speech, options: { entityCategories: ['name'] } });
    expect(found.transcript.entities).toEqual([expect.objectContaining({ category: 'name', text: 'bob', redacted: false, segmentId: 'seg_0001' })]);
    const styles: Record<string, string> = { redact: '[REDACTED]', replace: '[NAME]', mask: '***' };
    for (const [style, shown] of Object.entries(styles)) {
      const r = await transcribe(server, { uploadId: speech, options: { entityCategories: ['pii'], redactCategories: ['pii'], redactionStyle: style } });
      expect(r.transcript.text).toContain(shown);
      expect(r.transcript.text).not.toContain('bob');
      expect(r.transcript.entities[0]).toMatchObject({ text: shown, redacted: true });
    }
    const none = await transcribe(server, { uploadId: speech, options: { entityCategories: ['pci'] } });
    expect(none.transcript.entities).toEqual([]);
  });

  it('applies a rewrite (APPLIED) and reports EMPTY for silence', async () => {
    const r = await transcribe(server, { uploadId: speech, options: { rewriteInstruction: 'Tidy it' } });
    expect(r.transcript.revisionStatus).toBe('APPLIED');
    expect(r.transcript.revisedText).toBe(r.transcript.text.charAt(0).toUpperCase() + r.transcript.text.slice(1) + '.');
    const silent = await upload(server, wav([pcm([{ silence: 1000 }])]));
    const empty = await transcribe(server, { uploadId: silent, options: { rewriteInstruction: 'Tidy it' } });
    expect(empty.status).toBe('COMPLETED');
    expect(empty.transcript).toMatchObject({ text: '', segments: [], revisionStatus: 'EMPTY', languageCode: null });
    expect(empty.detectedLanguage).toBeNull();
    const plain = await transcribe(server, { uploadId: speech });
    expect(plain.transcript).toMatchObject({ revisionStatus: 'NOT_REQUESTED', revisedText: null, revisionErrorCode: null });
  });

  it('removes disfluencies and reports sound events', async () => {
    const r = await transcribe(server, { uploadId: speech, options: { removeDisfluencies: true, includeSoundEvents: true } });
    const tokens = r.transcript.segments.flatMap((s: any) => s.tokens);
    expect(tokens.map((t: any) => t.text)).not.toContain('uh');
    expect(tokens.find((t: any) => t.type === 'sound_event')).toMatchObject({ text: '[sound]' });
  });

  it('separates speakers by default, not at all when off, and at most maxSpeakerCount', async () => {
    const r = await transcribe(server, { uploadId: speech, options: { identifyConversationRoles: true } });
    expect(r.transcript.speakers.map((s: any) => s.speakerId)).toEqual(['speaker_1', 'speaker_2']);
    expect(r.transcript.speakers.map((s: any) => s.role)).toEqual(['agent', 'customer']);
    const off = await transcribe(server, { uploadId: speech, options: { separateSpeakers: false } });
    expect(off.transcript.speakers).toEqual([]);
    expect(off.transcript.segments.every((s: any) => s.speakerId === null)).toBe(true);
    const one = await transcribe(server, { uploadId: speech, options: { maxSpeakerCount: 1 } });
    expect(one.transcript.speakers.map((s: any) => s.speakerId)).toEqual(['speaker_1']);
  });

  it('aligns characters when asked', async () => {
    const r = await transcribe(server, { uploadId: speech, options: { alignmentLevel: 'character' } });
    const seg = r.transcript.segments[0];
    expect(seg.characterAlignments.map((c: any) => c.char).join('')).toBe(seg.tokens.map((t: any) => t.text).join(''));
    expect(seg.characterAlignments[0].startMs).toBe(seg.startMs);
  });

  it('transcribes channels separately or combined', async () => {
    const left = pcm([{ tone: 220, ms: 300 }, { silence: 1500 }, { tone: 900, ms: 300 }, { silence: 500 }]);
    const right = pcm([{ silence: 800 }, BOB, { silence: 1500 }]);
    const stereo = await upload(server, wav([left, right]));
    const sep = await transcribe(server, { uploadId: stereo, options: { separateChannels: true } });
    expect(sep.transcript.channelResults.map((c: any) => c.channelIndex)).toEqual([0, 1]);
    expect(sep.transcript.channelResults[1]).toMatchObject({ text: 'bob', languageCode: 'eng' });
    expect(sep.transcript.segments.map((s: any) => s.channelIndex)).toEqual([0, 0, 1]);
    expect(sep.transcript.speakers).toEqual([]);
    const comb = await transcribe(server, { uploadId: stereo, options: { separateChannels: true, channelResultMode: 'combined' } });
    expect(comb.transcript.segments.map((s: any) => s.channelIndex)).toEqual([0, 1, 0]);
    const mixed = await transcribe(server, { uploadId: stereo });
    expect(mixed.transcript.channelResults).toEqual([]);
  });

  it('echoes languageHint and never copies it into the detected language', async () => {
    const r = await transcribe(server, { uploadId: speech, languageHint: 'fr' });
    expect(r.languageHint).toBe('fr');
    expect(r.detectedLanguage).toBe('eng');
  });

  it('decodes other rates and channel counts, and raw PCM16 with inputEncoding pcm_s16le_16', async () => {
    const at48k = await upload(server, wav([pcm([BOB, { silence: 300 }], 48_000), pcm([BOB, { silence: 300 }], 48_000)], 48_000));
    const r = await transcribe(server, { uploadId: at48k });
    expect(r.audioDurationMs).toBe('600');
    expect(r.transcript.segments).toHaveLength(1);
    const samples = pcm([{ silence: 100 }, BOB, { silence: 300 }]);
    const raw = Buffer.alloc(samples.length * 2);
    samples.forEach((v, i) => raw.writeInt16LE(Math.round(v * 32767), i * 2));
    const rawId = await upload(server, raw, KEY_A, 'audio/L16;rate=16000;channels=1');
    const fromRaw = await transcribe(server, { uploadId: rawId, options: { inputEncoding: 'pcm_s16le_16' } });
    expect(fromRaw.transcript.text).toBe('bob');
  });
});

describe('uploads', () => {
  const server = serverForSuite();

  it('describes the decoded media with its audio tracks', async () => {
    const r = await server.call('POST', '/uploads?filename=a.wav', { body: new Uint8Array(wav([pcm([BOB], 22_050), pcm([BOB], 22_050)], 22_050)), headers: { 'Content-Type': 'audio/wav' } });
    expect(r.status).toBe(200);
    expect(r.body.data).toMatchObject({
      uploadId: expect.stringMatching(/^up_/),
      filename: 'a.wav',
      contentType: 'audio/wav',
      media: { container: 'wav', durationMs: '300', audioTracks: [{ index: 0, codec: 'pcm', channels: 2, sampleRate: 22_050, durationMs: '300' }] },
    });
    expect(r.body.data.sizeBytes).toMatch(/^[0-9]+$/);
  });

  it('refuses what it cannot decode with UNSUPPORTED_TYPE (415)', async () => {
    const cases: Array<[Buffer, string]> = [
      [Buffer.from('plain text, not audio'), 'audio/wav'],
      [Buffer.concat([Buffer.from('ID3\x04\x00', 'latin1'), Buffer.alloc(200)]), 'audio/mpeg'],
      [Buffer.from('RIFF\x10\x00\x00\x00WAVEjunk', 'latin1'), 'audio/wav'],
      [Buffer.alloc(3), 'audio/L16'],
    ];
    for (const [bytes, type] of cases) {
      const r = await server.call('POST', '/uploads', { body: new Uint8Array(bytes), headers: { 'Content-Type': type } });
      expect(r.status).toBe(415);
      expect(r.body.errorCode).toBe('UNSUPPORTED_TYPE');
    }
  });

  it('accepts 100 MiB and refuses one byte more with PAYLOAD_TOO_LARGE', async () => {
    const limit = 100 * 1024 * 1024;
    const at = await server.call('POST', '/uploads', { body: new Uint8Array(limit), headers: { 'Content-Type': 'audio/L16' } });
    expect(at.body.data.media.durationMs).toBe(String(limit / 2 / 16));
    const past = await server.call('POST', '/uploads', { body: new Uint8Array(limit + 2), headers: { 'Content-Type': 'audio/L16' } });
    expect(past.status).toBe(413);
    expect(past.body.errorCode).toBe('PAYLOAD_TOO_LARGE');
  });
});
