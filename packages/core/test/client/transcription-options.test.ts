import { describe, expect, it } from 'vitest';
import { checkCreateTranscription } from '../../src/client/stt/transcription-options.js';
import type { CreateTranscriptionParams, TranscriptionOptions } from '../../src/types/transcription.js';

/** Client-side validation of POST /stt/transcriptions: every limit at and just past its boundary, every rule. */
const fields = (params: CreateTranscriptionParams): string[] => checkCreateTranscription(params).violations.map((v) => v.field);
const withOptions = (options: Record<string, unknown>): string[] => fields({ uploadId: 'up_1', options: options as TranscriptionOptions });

describe('source and top-level fields', () => {
  it('requires exactly one of uploadId or mediaUrl', () => {
    expect(fields({ uploadId: 'up_1' })).toEqual([]);
    expect(fields({ mediaUrl: 'https://example.com/a.wav' })).toEqual([]);
    expect(fields({})).toEqual(['uploadId']);
    expect(fields({ uploadId: 'up_1', mediaUrl: 'https://example.com/a.wav' })).toEqual(['uploadId']);
  });

  it('accepts only absolute http(s) media URLs up to 2048 characters', () => {
    const base = 'https://example.com/';
    expect(fields({ mediaUrl: base + 'a'.repeat(2048 - base.length) })).toEqual([]);
    expect(fields({ mediaUrl: base + 'a'.repeat(2049 - base.length) })).toEqual(['mediaUrl']);
    for (const bad of ['ftp://example.com/a', '/relative.wav', 'not a url', 'file:///etc/passwd']) expect(fields({ mediaUrl: bad })).toEqual(['mediaUrl']);
  });

  it('checks audioTrackIndex, title and the wait budget', () => {
    expect(fields({ uploadId: 'u', audioTrackIndex: 0 })).toEqual([]);
    expect(fields({ uploadId: 'u', audioTrackIndex: -1 })).toEqual(['audioTrackIndex']);
    expect(fields({ uploadId: 'u', audioTrackIndex: 1.5 })).toEqual(['audioTrackIndex']);
    expect(fields({ uploadId: 'u', title: 't'.repeat(256) })).toEqual([]);
    expect(fields({ uploadId: 'u', title: 't'.repeat(257) })).toEqual(['title']);
    expect(fields({ uploadId: 'u', waitForCompletion: true, waitTimeoutMs: 0 })).toEqual([]);
    expect(fields({ uploadId: 'u', waitForCompletion: true, waitTimeoutMs: 120_000 })).toEqual([]);
    expect(fields({ uploadId: 'u', waitForCompletion: true, waitTimeoutMs: 120_001 })).toEqual(['waitTimeoutMs']);
    expect(fields({ uploadId: 'u', waitTimeoutMs: 1000 })).toEqual(['waitTimeoutMs']);
    expect(fields({ uploadId: 'u', waitForCompletion: 'yes' as unknown as boolean })).toEqual(['waitForCompletion']);
  });

  it('refuses options that are not an object', () => {
    expect(fields({ uploadId: 'u', options: [] as unknown as TranscriptionOptions })).toEqual(['options']);
  });
});

describe('options: each limit at and just past its boundary', () => {
  const cases: Array<[string, unknown, unknown]> = [
    ['maxSpeakerCount', 1, 0],
    ['maxSpeakerCount', 32, 33],
    ['maxSpeakerCount', 2, 2.5],
    ['speakerMergeSensitivity', 0.1, 0.09],
    ['speakerMergeSensitivity', 0.4, 0.41],
    ['samplingTemperature', 0, -0.01],
    ['samplingTemperature', 2, 2.01],
    ['randomSeed', 0, -1],
    ['randomSeed', Number.MAX_SAFE_INTEGER, 1.5],
    ['rewriteInstruction', 'r'.repeat(2000), 'r'.repeat(2001)],
    ['rewriteInstruction', '😀'.repeat(2000), '😀'.repeat(2001)],
    ['entityCategories', Array.from({ length: 32 }, (_, i) => `c${i}`), Array.from({ length: 33 }, (_, i) => `c${i}`)],
    ['vocabularyHints', Array.from({ length: 1000 }, () => 'w'), Array.from({ length: 1001 }, () => 'w')],
    ['vocabularyHints', ['h'.repeat(128)], ['h'.repeat(129)]],
    ['alignmentLevel', 'character', 'phoneme'],
    ['inputEncoding', 'pcm_s16le_16', 'mp3'],
    ['channelResultMode', 'separate', 'merged'],
    ['includeSoundEvents', true, 'true'],
    ['removeDisfluencies', false, 0],
    ['processingContentStorage', true, null],
    ['exportFormats', ['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf'], ['mp3']],
    ['notifyUrl', 'https://hooks.example.com/x', 'mailto:a@b.c'],
    ['notificationSigningSecret', 's'.repeat(1024), 's'.repeat(1025)],
  ];

  for (const [field, ok, bad] of cases) {
    it(`${field}: ${JSON.stringify(ok).slice(0, 24)} passes, ${JSON.stringify(bad).slice(0, 24)} does not`, () => {
      expect(withOptions({ [field]: ok })).toEqual([]);
      const got = withOptions({ [field]: bad });
      expect(got.length).toBe(1);
      expect(got[0]?.startsWith(`options.${field}`)).toBe(true);
    });
  }

  it('redactCategories: at most 32 and a subset of entityCategories', () => {
    const cats = Array.from({ length: 33 }, (_, i) => `c${i}`);
    expect(withOptions({ entityCategories: cats.slice(0, 32), redactCategories: cats.slice(0, 32) })).toEqual([]);
    expect(withOptions({ entityCategories: cats.slice(0, 32), redactCategories: cats })).toEqual(['options.redactCategories', 'options.redactCategories[32]']);
    expect(withOptions({ entityCategories: ['pii'], redactCategories: ['pci'] })).toEqual(['options.redactCategories[0]']);
  });

  it('clientMetadata: two levels deep and 16 KB', () => {
    expect(withOptions({ clientMetadata: { a: { b: 1 } } })).toEqual([]);
    expect(withOptions({ clientMetadata: { a: { b: { c: 1 } } } })).toEqual(['options.clientMetadata']);
    expect(withOptions({ clientMetadata: { a: [[1]] } })).toEqual(['options.clientMetadata']);
    const room = 16 * 1024 - JSON.stringify({ k: '' }).length;
    expect(withOptions({ clientMetadata: { k: 'x'.repeat(room) } })).toEqual([]);
    expect(withOptions({ clientMetadata: { k: 'x'.repeat(room + 1) } })).toEqual(['options.clientMetadata']);
    // Bytes, not characters: a two-byte character counts twice.
    expect(withOptions({ clientMetadata: { k: 'é'.repeat(Math.ceil(room / 2) + 1) } })).toEqual(['options.clientMetadata']);
    expect(withOptions({ clientMetadata: 'text' })).toEqual(['options.clientMetadata']);
  });

  it('exportOptions entries: format required, seconds in (0, 3600], chars and line widths in range', () => {
    const entry = (e: Record<string, unknown>): string[] => withOptions({ exportOptions: [{ format: 'srt', ...e }] });
    expect(entry({})).toEqual([]);
    expect(withOptions({ exportOptions: [{}] })).toEqual(['options.exportOptions[0].format']);
    expect(withOptions({ exportOptions: [{ format: 'wav' }] })).toEqual(['options.exportOptions[0].format']);
    for (const name of ['segmentOnSilenceLongerThanS', 'maxSegmentDurationS']) {
      expect(entry({ [name]: 0.001 })).toEqual([]);
      expect(entry({ [name]: 3600 })).toEqual([]);
      expect(entry({ [name]: 0 })).toEqual([`options.exportOptions[0].${name}`]);
      expect(entry({ [name]: 3600.5 })).toEqual([`options.exportOptions[0].${name}`]);
    }
    expect(entry({ maxSegmentChars: 1 })).toEqual([]);
    expect(entry({ maxSegmentChars: 100_000 })).toEqual([]);
    expect(entry({ maxSegmentChars: 0 })).toEqual(['options.exportOptions[0].maxSegmentChars']);
    expect(entry({ maxSegmentChars: 100_001 })).toEqual(['options.exportOptions[0].maxSegmentChars']);
    expect(entry({ maxCharactersPerLine: 16_384 })).toEqual([]);
    expect(entry({ maxCharactersPerLine: 16_385 })).toEqual(['options.exportOptions[0].maxCharactersPerLine']);
    expect(entry({ includeSpeakers: 'no', includeTimestamps: 1 })).toEqual(['options.exportOptions[0].includeSpeakers', 'options.exportOptions[0].includeTimestamps']);
    expect(withOptions({ exportOptions: 'srt' })).toEqual(['options.exportOptions']);
  });
});

describe('options: field dependencies', () => {
  it('speakerMergeSensitivity requires speaker separation and no maxSpeakerCount', () => {
    expect(withOptions({ speakerMergeSensitivity: 0.2 })).toEqual([]);
    expect(withOptions({ speakerMergeSensitivity: 0.2, separateSpeakers: false })).toEqual(['options.speakerMergeSensitivity']);
    expect(withOptions({ speakerMergeSensitivity: 0.2, maxSpeakerCount: 3 })).toEqual(['options.speakerMergeSensitivity']);
  });

  it('identifyConversationRoles requires speaker separation', () => {
    expect(withOptions({ identifyConversationRoles: true })).toEqual([]);
    expect(withOptions({ identifyConversationRoles: true, separateSpeakers: false })).toEqual(['options.identifyConversationRoles']);
  });

  it('redactionStyle requires redactCategories; notifyOnCompletion true requires notifyUrl', () => {
    expect(withOptions({ entityCategories: ['pii'], redactCategories: ['pii'], redactionStyle: 'mask' })).toEqual([]);
    expect(withOptions({ redactionStyle: 'mask' })).toEqual(['options.redactionStyle']);
    expect(withOptions({ notifyOnCompletion: true, notifyUrl: 'https://h.example.com' })).toEqual([]);
    expect(withOptions({ notifyOnCompletion: false })).toEqual([]);
    expect(withOptions({ notifyOnCompletion: true })).toEqual(['options.notifyOnCompletion']);
  });
});

describe('options: combination rules', () => {
  it('rule 1: rewriteInstruction excludes entity detection, redaction and separateChannels', () => {
    expect(withOptions({ rewriteInstruction: 'tidy' })).toEqual([]);
    expect(withOptions({ rewriteInstruction: 'tidy', entityCategories: ['pii'] })).toEqual(['options.rewriteInstruction']);
    expect(withOptions({ rewriteInstruction: 'tidy', entityCategories: ['pii'], redactCategories: ['pii'] })).toEqual(['options.rewriteInstruction']);
    expect(withOptions({ rewriteInstruction: 'tidy', separateChannels: true })).toEqual(['options.rewriteInstruction']);
    expect(checkCreateTranscription({ uploadId: 'u', options: { rewriteInstruction: 'x', separateChannels: true } }).violations[0]?.rule).toContain('rule 1');
  });

  it('rule 2: separateChannels excludes speaker separation, maxSpeakerCount, speakerMergeSensitivity, roles and pcm input', () => {
    expect(withOptions({ separateChannels: true })).toEqual([]);
    expect(withOptions({ separateChannels: true, separateSpeakers: false })).toEqual([]);
    expect(withOptions({ separateChannels: true, separateSpeakers: true })).toEqual(['options.separateSpeakers']);
    expect(withOptions({ separateChannels: true, maxSpeakerCount: 2 })).toEqual(['options.maxSpeakerCount']);
    expect(withOptions({ separateChannels: true, speakerMergeSensitivity: 0.2 })).toEqual(['options.speakerMergeSensitivity']);
    expect(withOptions({ separateChannels: true, identifyConversationRoles: true })).toEqual(['options.identifyConversationRoles']);
    expect(withOptions({ separateChannels: true, inputEncoding: 'pcm_s16le_16' })).toEqual(['options.inputEncoding']);
    expect(withOptions({ separateChannels: false, inputEncoding: 'pcm_s16le_16', maxSpeakerCount: 2 })).toEqual([]);
  });

  it('rule 4: combined channel results need alignment and exclude entities and redaction', () => {
    expect(withOptions({ separateChannels: true, channelResultMode: 'combined' })).toEqual([]);
    expect(withOptions({ separateChannels: true, channelResultMode: 'combined', alignmentLevel: 'none' })).toEqual(['options.channelResultMode']);
    expect(withOptions({ separateChannels: true, channelResultMode: 'combined', entityCategories: ['pii'] })).toEqual(['options.channelResultMode']);
    expect(withOptions({ separateChannels: true, channelResultMode: 'separate', alignmentLevel: 'none', entityCategories: ['pii'] })).toEqual([]);
  });

  it('rule 5: matchKnownSpeakers must not be requested, whatever its value', () => {
    expect(withOptions({ matchKnownSpeakers: false })).toEqual(['options.matchKnownSpeakers']);
    expect(withOptions({ matchKnownSpeakers: true })).toEqual(['options.matchKnownSpeakers']);
  });

  it('rules 3 and 6 are left to the service; unknown option names pass through', () => {
    expect(withOptions({ separateChannels: true, entityCategories: ['made_up'] })).toEqual([]);
    expect(withOptions({ someFutureOption: 1 })).toEqual([]);
  });

  it('reports every violation at once', () => {
    const got = fields({
      options: { maxSpeakerCount: 40, samplingTemperature: 3, rewriteInstruction: 'x', entityCategories: ['pii'], separateChannels: true, matchKnownSpeakers: 1 } as TranscriptionOptions,
    });
    expect(got).toEqual([
      'uploadId', 'options.maxSpeakerCount', 'options.samplingTemperature', 'options.rewriteInstruction', 'options.rewriteInstruction',
      'options.maxSpeakerCount', 'options.matchKnownSpeakers',
    ]);
  });
});

describe('languageHint and notifyUrl, checked as the service checks them', () => {
  it('accepts "auto" and both ISO 639 forms of each listed language, nothing else', () => {
    for (const hint of ['auto', 'fr', 'fra', 'en', 'eng', 'zh', 'zho']) expect(fields({ uploadId: 'u', languageHint: hint })).toEqual([]);
    for (const hint of ['xx', 'xyz', 'FRA', 'fr-FR', '', 7]) expect(fields({ uploadId: 'u', languageHint: hint as string })).toEqual(['languageHint']);
  });

  it('refuses a notifyUrl whose host is a literal refused address; host names pass', () => {
    for (const url of ['http://10.1.2.3/hook', 'http://[::1]/', 'http://169.254.169.254/', 'http://127.1/', 'http://[fe80::1]/', 'http://0.0.0.0/']) {
      expect(withOptions({ notifyUrl: url })).toEqual(['options.notifyUrl']);
    }
    const [violation] = checkCreateTranscription({ uploadId: 'u', options: { notifyUrl: 'http://[::1]/' } }).violations;
    expect(violation?.rule).toBe('must be a public URL; its host is a loopback address (DESTINATION_NOT_ALLOWED)');
    for (const url of ['https://hooks.example.com/x', 'http://localhost/x', 'http://8.8.8.8/x', 'http://[2001:4860::8888]/x']) expect(withOptions({ notifyUrl: url })).toEqual([]);
    // A literal refused mediaUrl is left to the service, which answers MEDIA_FETCH_FAILED with the same reason.
    expect(fields({ mediaUrl: 'http://10.1.2.3/a.wav' })).toEqual([]);
  });
});
