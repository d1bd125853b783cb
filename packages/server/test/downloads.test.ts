import mammoth from 'mammoth';
import { PDFParse } from 'pdf-parse';
import { beforeAll, describe, expect, it } from 'vitest';
import { KEY_A, KEY_B, PREFIX, idem, start, transcribe, upload, type TestServer, serverForSuite } from './support/server.js';
import { pcm, wav, type Piece } from './support/wav.js';

/** Six bursts: two close groups of three, 1.5 s apart, then one far burst after 3 s. */
const PIECES: Piece[] = [
  { silence: 100 }, { tone: 220, ms: 300 }, { silence: 100 }, { tone: 330, ms: 300 }, { silence: 100 }, { tone: 250, ms: 300 },
  { silence: 1500 }, { tone: 660, ms: 300 }, { silence: 100 }, { tone: 880, ms: 300 }, { silence: 3000 }, { tone: 700, ms: 400 }, { silence: 200 },
];

async function get(server: TestServer, id: string, format: string, key = KEY_A): Promise<Response> {
  return fetch(`${server.url}${PREFIX}/stt/transcriptions/${id}/download/${format}`, { headers: { accessKey: key } });
}

async function text(server: TestServer, id: string, format: string): Promise<string> {
  const r = await get(server, id, format);
  expect(r.status).toBe(200);
  return r.text();
}

describe('transcript downloads', () => {
  const server = serverForSuite();
  let uploadId: string;
  let plain: any;
  beforeAll(async () => {
    uploadId = await upload(server, wav([pcm(PIECES)]));
    plain = await transcribe(server, { uploadId, title: 'Plain <Title> & co', options: { exportFormats: ['txt', 'srt', 'pdf'] } });
  });

  it('pre-generates exportFormats at completion and serves every format later', async () => {
    const exports = server.services.tasks.exportsOf(plain.transcriptionId);
    expect([...exports.keys()].sort()).toEqual(['pdf', 'srt', 'txt']);
    const types: Record<string, string> = {
      txt: 'text/plain', json: 'application/json', srt: 'application/x-subrip', segmented_json: 'application/json', html: 'text/html',
      docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', pdf: 'application/pdf',
    };
    for (const [format, type] of Object.entries(types)) {
      const r = await get(server, plain.transcriptionId, format);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain(type);
      expect(r.headers.get('content-disposition')).toContain(plain.transcriptionId);
      expect((await r.arrayBuffer()).byteLength).toBeGreaterThan(0);
    }
  });

  it('txt shows a header with timestamps and speaker per segment', async () => {
    const body = await text(server, plain.transcriptionId, 'txt');
    const segments = plain.transcript.segments;
    expect(segments).toHaveLength(3);
    const blocks = body.trim().split('\n\n');
    expect(blocks).toHaveLength(3);
    expect(blocks[0]).toMatch(/^\[00:00:00\.100 - 00:00:01\.200\] speaker_\d:\n/);
    expect(blocks[0]!.split('\n')[1]).toBe(segments[0].text);
  });

  it('json is the public transcription view without an envelope', async () => {
    const body = JSON.parse(await text(server, plain.transcriptionId, 'json'));
    const view = (await server.call('GET', `/stt/transcriptions/${plain.transcriptionId}`)).body.data;
    expect(body).toEqual(view);
    expect(body.code).toBeUndefined();
  });

  it('srt has numbered timed cues with speakers', async () => {
    const body = await text(server, plain.transcriptionId, 'srt');
    const cues = body.trim().split('\n\n');
    expect(cues).toHaveLength(3);
    expect(cues[0]).toMatch(/^1\n00:00:00,100 --> 00:00:01,200\nspeaker_\d: \S+/);
  });

  it('segmented_json and html carry every segment; html escapes', async () => {
    const seg = JSON.parse(await text(server, plain.transcriptionId, 'segmented_json'));
    expect(seg.transcriptionId).toBe(plain.transcriptionId);
    expect(seg.segments.map((s: any) => s.text)).toEqual(plain.transcript.segments.map((s: any) => s.text));
    expect(seg.segments[0]).toMatchObject({ index: 0, channelIndex: 0, startMs: 100, endMs: 1200 });
    const html = await text(server, plain.transcriptionId, 'html');
    expect(html).toContain('<title>Plain &lt;Title&gt; &amp; co</title>');
    expect(html.match(/<p class="segment">/g)).toHaveLength(3);
  });

  it('docx opens in a real parser with the title and every segment', async () => {
    const r = await get(server, plain.transcriptionId, 'docx');
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(await r.arrayBuffer()) });
    expect(value).toContain('Plain <Title> & co');
    for (const s of plain.transcript.segments) expect(value).toContain(s.text);
    expect(value).toContain('[00:00:00.100 - 00:00:01.200]');
  });

  it('pdf opens in a real parser with the title and every segment', async () => {
    const r = await get(server, plain.transcriptionId, 'pdf');
    const bytes = new Uint8Array(await r.arrayBuffer());
    expect(Buffer.from(bytes.subarray(0, 5)).toString('latin1')).toBe('%PDF-');
    const parser = new PDFParse({ data: bytes });
    try {
      const result = await parser.getText();
      expect(result.text).toContain('Plain <Title> & co');
      for (const s of plain.transcript.segments) expect(result.text).toContain(s.text);
    } finally {
      await parser.destroy();
    }
  });

  it('honours includeSpeakers and includeTimestamps off', async () => {
    const data = await transcribe(server, { uploadId, options: { exportOptions: [{ format: 'txt', includeSpeakers: false, includeTimestamps: false }, { format: 'srt', includeTimestamps: false }, { format: 'segmented_json', includeSpeakers: false, includeTimestamps: false }] } });
    const txt = await text(server, data.transcriptionId, 'txt');
    expect(txt).toBe(data.transcript.segments.map((s: any) => s.text).join('\n\n') + '\n');
    expect(await text(server, data.transcriptionId, 'srt')).toBe('');
    const seg = JSON.parse(await text(server, data.transcriptionId, 'segmented_json'));
    expect(Object.keys(seg.segments[0]).sort()).toEqual(['channelIndex', 'index', 'text']);
  });

  it('alignmentLevel none gives an empty srt and untimed segments', async () => {
    const data = await transcribe(server, { uploadId, options: { alignmentLevel: 'none' } });
    expect(data.transcript.segments[0]).toMatchObject({ startMs: null, endMs: null, timingStatus: 'NOT_REQUESTED' });
    expect(await text(server, data.transcriptionId, 'srt')).toBe('');
    const txt = await text(server, data.transcriptionId, 'txt');
    expect(txt).not.toContain('[00:');
  });

  it('re-segments on silence, maximum duration and maximum characters', async () => {
    const data = await transcribe(server, {
      uploadId,
      options: {
        separateSpeakers: false,
        exportOptions: [
          { format: 'segmented_json', segmentOnSilenceLongerThanS: 2 },
          { format: 'txt', maxSegmentDurationS: 0.5, includeTimestamps: false },
          { format: 'srt', maxSegmentChars: 1 },
        ],
      },
    });
    const words = data.transcript.segments.flatMap((s: any) => s.tokens.map((t: any) => t.text));
    expect(words).toHaveLength(6);
    // Silences over 2 s split: the 1.5 s gap merges, the 3 s gap splits.
    const seg = JSON.parse(await text(server, data.transcriptionId, 'segmented_json'));
    expect(seg.segments.map((s: any) => s.text)).toEqual([words.slice(0, 5).join(' '), words[5]]);
    // At most 0.5 s per segment: one 300-400 ms word each.
    const txt = (await text(server, data.transcriptionId, 'txt')).trim().split('\n\n');
    expect(txt).toEqual(words);
    // One character max: every word alone (a word is never cut).
    const srt = (await text(server, data.transcriptionId, 'srt')).trim().split('\n\n');
    expect(srt).toHaveLength(6);
  });

  it('maxSegmentChars counts the separators it inserts', async () => {
    const data = await transcribe(server, { uploadId, options: { separateSpeakers: false, exportOptions: [{ format: 'txt', includeTimestamps: false, maxSegmentChars: 0 + 1 }] } });
    const words: string[] = data.transcript.segments.flatMap((s: any) => s.tokens.map((t: any) => t.text));
    const twoWords = words[0]!.length + 1 + words[1]!.length;
    const fits = await transcribe(server, { uploadId, options: { separateSpeakers: false, exportOptions: [{ format: 'txt', includeTimestamps: false, maxSegmentChars: twoWords }] } });
    const first = (await text(server, fits.transcriptionId, 'txt')).split('\n\n')[0];
    expect(first).toBe(`${words[0]} ${words[1]}`);
    const short = await transcribe(server, { uploadId, options: { separateSpeakers: false, exportOptions: [{ format: 'txt', includeTimestamps: false, maxSegmentChars: twoWords - 1 }] } });
    expect((await text(server, short.transcriptionId, 'txt')).split('\n\n')[0]).toBe(words[0]);
  });

  it('wraps srt and txt lines at word boundaries', async () => {
    const data = await transcribe(server, { uploadId, options: { separateSpeakers: false, exportOptions: [{ format: 'txt', includeTimestamps: false, maxCharactersPerLine: 12 }, { format: 'srt', maxCharactersPerLine: 1 }] } });
    const txt = await text(server, data.transcriptionId, 'txt');
    for (const line of txt.split('\n')) {
      if (line.includes(' ')) expect(line.length).toBeLessThanOrEqual(12);
    }
    expect(txt.split('\n').join(' ').replace(/\s+/g, ' ').trim()).toBe(data.transcript.segments.map((s: any) => s.text).join(' '));
    const srt = await text(server, data.transcriptionId, 'srt');
    const firstCue = srt.split('\n\n')[0]!.split('\n');
    expect(firstCue.slice(2)).toEqual(data.transcript.segments[0].tokens.map((t: any) => t.text));
  });

  it('refuses downloads of unfinished, foreign and unknown-format requests', async () => {
    const slow = await start({ taskTiming: { queueMs: 60_000, processingMs: 0, reconcilingMs: 0 } });
    try {
      const up = await upload(slow as TestServer, wav([pcm(PIECES)]));
      const r = await (slow as TestServer).call('POST', '/stt/transcriptions', { json: { uploadId: up }, headers: { 'Idempotency-Key': idem() } });
      const res = await get(slow as TestServer, r.body.data.transcriptionId, 'txt');
      expect(res.status).toBe(409);
      expect((await res.json()).errorCode).toBe('TRANSCRIPT_NOT_READY');
    } finally {
      await slow.close();
    }
    expect((await get(server, plain.transcriptionId, 'mp3')).status).toBe(400);
    expect((await get(server, plain.transcriptionId, 'txt', KEY_B)).status).toBe(404);
  });
});
