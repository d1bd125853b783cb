import { describe, expect, it } from 'vitest';
import { WebVTTParser } from 'webvtt-parser';
import SrtParser from 'srt-parser-2';
import { CaptionEngine, SegmentedWebVtt, SrtWriter, WebVttWriter, CaptionError, isSoundCloneError, type CueChange } from '@soundclone/core';
import { line } from './support.js';

/** A scripted session: partials, lines with pending supplements, alignment, a revision, a rotation. */
function session(): CueChange[] {
  const e = new CaptionEngine({ stableUpdates: 0 });
  const out: CueChange[] = [];
  const texts = [
    'it was the best of times it was the worst of times',
    'it was the age of wisdom <it was> the age of foolishness & more',
    'we had everything before us',
    'we had nothing before us',
  ];
  let t = 500;
  texts.forEach((text, i) => {
    out.push(...e.partial({ epoch: i < 2 ? 1 : 2, text: text.split(' ').slice(0, 3).join(' ') }, t));
    const l = { ...line(`line_${String(i + 1)}`, text, t, t + 3000, { pendingSupplements: ['alignment'] }), epoch: i < 2 ? 1 : 2 };
    out.push(...e.line(l));
    if (i !== 1) out.push(...e.lineUpdated({ ...l, pendingSupplements: [], words: text.split(' ').map((w, k) => ({ text: w, startMs: t + k * 200, endMs: t + k * 200 + 150 })) }));
    t += 3500;
  });
  out.push(...e.lineUpdated({ ...line('line_4', 'we had nothing before us', 11_000, 14_000), epoch: 2, revisedText: 'We had nothing before us.' }));
  out.push(...e.end());
  return out;
}

describe('caption writers', () => {
  it('WebVTT and SRT are valid after every append (W3C parser, srt-parser-2) and agree on count, text and times', () => {
    let vtt = '';
    let srt = '';
    const vttWriter = new WebVttWriter((chunk) => {
      vtt += chunk;
      expect(new WebVTTParser().parse(vtt).errors).toEqual([]);
    });
    const srtWriter = new SrtWriter((chunk) => {
      srt += chunk;
      expect(new SrtParser().fromSrt(srt).length).toBe(srtWriter.written);
    });
    const changes = session();
    let heldBack = false;
    for (const c of changes) {
      vttWriter.write(c);
      srtWriter.write(c);
      // line_2 never got its alignment: nothing after it may be written before end().
      if (c.kind === 'final' && c.cue.lineId === 'line_3') heldBack = !vtt.includes('everything');
    }
    expect(heldBack).toBe(true);
    vttWriter.end();
    srtWriter.end();
    const v = new WebVTTParser().parse(vtt);
    expect(v.errors).toEqual([]);
    const s = new SrtParser().fromSrt(srt);
    expect(v.cues.length).toBeGreaterThanOrEqual(4);
    expect(s.length).toBe(v.cues.length);
    const words = (t: string): string => t.replace(/\s+/gu, ' ').trim();
    v.cues.forEach((cue, i) => {
      const other = s[i];
      expect(other).toBeDefined();
      expect(other?.startSeconds).toBeCloseTo(cue.startTime, 3);
      expect(other?.endSeconds).toBeCloseTo(cue.endTime, 3);
      const decoded = cue.text.replace(/&lt;/gu, '<').replace(/&gt;/gu, '>').replace(/&amp;/gu, '&');
      expect(words(decoded)).toBe(words(other?.text ?? ''));
      if (i > 0) expect(cue.startTime).toBeGreaterThanOrEqual(v.cues[i - 1]?.endTime ?? 0);
    });
    const all = s.map((c) => words(c.text)).join(' ');
    expect(all).toContain('<it was> the age of foolishness & more');
    expect(all.endsWith('We had nothing before us.')).toBe(true);
    expect(() => vttWriter.write(changes[0] as CueChange)).toThrow(/after the writer ended/u);
  });

  it('segmented WebVTT: every segment parses, the playlist lists them in order and ends, cues across a boundary are in both', () => {
    const segments: Array<{ name: string; text: string }> = [];
    const playlists: string[] = [];
    const out = new SegmentedWebVtt({ segmentMs: 4000, segment: (f) => segments.push(f), playlist: (p) => playlists.push(p) });
    for (const c of session()) out.write(c);
    out.end();
    expect(segments.length).toBeGreaterThanOrEqual(3);
    const last = playlists.at(-1) ?? '';
    expect(last.startsWith('#EXTM3U\n')).toBe(true);
    expect(last.trimEnd().endsWith('#EXT-X-ENDLIST')).toBe(true);
    expect(playlists.slice(0, -1).every((p) => !p.includes('ENDLIST'))).toBe(true);
    expect([...last.matchAll(/^captions_\d{5}\.vtt$/gmu)].map((m) => m[0])).toEqual(segments.map((s) => s.name));
    const ids = new Set<string>();
    segments.forEach((seg, k) => {
      const parsed = new WebVTTParser().parse(seg.text);
      // HLS puts X-TIMESTAMP-MAP in the header; the W3C validator flags any header line, and only that.
      expect(parsed.errors.map((e) => `${String(e.line)}: ${e.message}`)).toEqual(['2: No blank line after the signature.']);
      for (const cue of parsed.cues) {
        expect(cue.startTime).toBeLessThan((k + 1) * 4);
        expect(cue.endTime).toBeGreaterThan(k * 4);
        ids.add(cue.id);
      }
    });
    expect(ids.size).toBeGreaterThanOrEqual(4);
    expect(segments.some((seg, k) => k > 0 && seg.text.split('\n').some((l) => segments[k - 1]?.text.split('\n').includes(l) === true && /^cue_/u.test(l)))).toBe(true);
    expect(() => new SegmentedWebVtt({ segmentMs: 10, segment: () => undefined, playlist: () => undefined })).toThrow(expect.objectContaining({ code: 'CAPTIONS_INVALID_OPTION' }) as Error);
    expect(isSoundCloneError(new Error('x'), CaptionError)).toBe(false);
  });
});

describe('caption writers: speakers', () => {
  it('a line that names its speaker gives cues with it: a WebVTT voice span the W3C parser accepts, plain text in SRT', () => {
    const e = new CaptionEngine();
    let vtt = '';
    let srt = '';
    const v = new WebVttWriter((c) => (vtt += c));
    const s = new SrtWriter((c) => (srt += c));
    for (const c of e.line(line('l1', 'hello <there>', 0, 1000, { speakerId: 'speaker_1' }))) {
      expect(c.cue.speaker).toBe('speaker_1');
      v.write(c);
      s.write(c);
    }
    const parsed = new WebVTTParser().parse(vtt);
    expect(parsed.errors).toEqual([]);
    expect(parsed.cues.map((c) => c.text)).toEqual(['<v speaker_1>hello &lt;there&gt;']);
    expect(new SrtParser().fromSrt(srt).map((c) => c.text)).toEqual(['hello <there>']);
  });
});
