import { beforeAll, describe, expect, it } from 'vitest';
import { idem, upload, serverForSuite } from './support/server.js';
import { pcm, speechWav, wav } from './support/wav.js';

/** One case: options (or top-level fields) and the violated fields expected, in order. */
interface Case {
  readonly name: string;
  readonly body?: Record<string, unknown>;
  readonly options?: Record<string, unknown>;
  readonly fields: string[];
  readonly rule?: string;
}

const INVALID: Case[] = [
  { name: 'neither source', body: { uploadId: undefined }, fields: ['uploadId'], rule: 'exactly one of uploadId or mediaUrl' },
  { name: 'both sources', body: { mediaUrl: 'https://example.invalid/a.wav' }, fields: ['uploadId'] },
  { name: 'mediaUrl not http', body: { uploadId: undefined, mediaUrl: 'ftp://x/a.wav' }, fields: ['mediaUrl'] },
  { name: 'unknown top-level field', body: { colour: 'red' }, fields: ['colour'], rule: 'is not a known field' },
  { name: 'audioTrackIndex negative', body: { audioTrackIndex: -1 }, fields: ['audioTrackIndex'] },
  { name: 'languageHint unsupported', body: { languageHint: 'xx' }, fields: ['languageHint'] },
  { name: 'languageHint three letters unlisted', body: { languageHint: 'xyz' }, fields: ['languageHint'] },
  { name: 'languageHint upper case', body: { languageHint: 'FRA' }, fields: ['languageHint'] },
  { name: 'title too long', body: { title: 't'.repeat(257) }, fields: ['title'], rule: 'at most 256' },
  { name: 'modelId realtime', body: { modelId: 'svc_stt_realtime_v1' }, fields: ['modelId'] },
  { name: 'waitForCompletion not boolean', body: { waitForCompletion: 'yes' }, fields: ['waitForCompletion'] },
  { name: 'waitTimeoutMs past max', body: { waitForCompletion: true, waitTimeoutMs: 120_001 }, fields: ['waitTimeoutMs'], rule: 'from 0 to 120000' },
  { name: 'waitTimeoutMs without wait', body: { waitTimeoutMs: 10 }, fields: ['waitTimeoutMs'], rule: 'requires waitForCompletion true' },
  { name: 'options not an object', body: { options: [] }, fields: ['options'] },
  { name: 'unknown option refused, not dropped', options: { speedUp: true }, fields: ['options.speedUp'], rule: 'is not a known field' },
  { name: 'rewriteInstruction 2001 chars', options: { rewriteInstruction: 'r'.repeat(2001) }, fields: ['options.rewriteInstruction'], rule: 'at most 2000' },
  { name: 'includeSoundEvents not boolean', options: { includeSoundEvents: 1 }, fields: ['options.includeSoundEvents'] },
  { name: 'maxSpeakerCount 0', options: { maxSpeakerCount: 0 }, fields: ['options.maxSpeakerCount'], rule: 'from 1 to 32' },
  { name: 'maxSpeakerCount 33', options: { maxSpeakerCount: 33 }, fields: ['options.maxSpeakerCount'] },
  { name: 'maxSpeakerCount 1.5', options: { maxSpeakerCount: 1.5 }, fields: ['options.maxSpeakerCount'] },
  { name: 'speakerMergeSensitivity 0.09', options: { speakerMergeSensitivity: 0.09 }, fields: ['options.speakerMergeSensitivity'], rule: 'from 0.1 to 0.4' },
  { name: 'speakerMergeSensitivity 0.41', options: { speakerMergeSensitivity: 0.41 }, fields: ['options.speakerMergeSensitivity'] },
  { name: 'speakerMergeSensitivity with maxSpeakerCount', options: { speakerMergeSensitivity: 0.2, maxSpeakerCount: 2 }, fields: ['options.speakerMergeSensitivity'], rule: 'maxSpeakerCount' },
  { name: 'speakerMergeSensitivity without separation', options: { speakerMergeSensitivity: 0.2, separateSpeakers: false }, fields: ['options.speakerMergeSensitivity'], rule: 'requires speaker separation' },
  { name: 'identifyConversationRoles without separation', options: { identifyConversationRoles: true, separateSpeakers: false }, fields: ['options.identifyConversationRoles'] },
  { name: 'alignmentLevel unknown', options: { alignmentLevel: 'phoneme' }, fields: ['options.alignmentLevel'], rule: 'none, word, character' },
  { name: 'inputEncoding unknown', options: { inputEncoding: 'mp3' }, fields: ['options.inputEncoding'] },
  { name: 'samplingTemperature -0.1', options: { samplingTemperature: -0.1 }, fields: ['options.samplingTemperature'], rule: 'from 0 to 2' },
  { name: 'samplingTemperature 2.01', options: { samplingTemperature: 2.01 }, fields: ['options.samplingTemperature'] },
  { name: 'randomSeed -1', options: { randomSeed: -1 }, fields: ['options.randomSeed'] },
  { name: 'randomSeed 1.5', options: { randomSeed: 1.5 }, fields: ['options.randomSeed'] },
  { name: 'channelResultMode without separateChannels', options: { channelResultMode: 'combined' }, fields: ['options.channelResultMode'], rule: 'requires separateChannels' },
  { name: 'channelResultMode unknown', options: { separateChannels: true, channelResultMode: 'mixed' }, fields: ['options.channelResultMode'] },
  { name: 'entityCategories 33', options: { entityCategories: Array.from({ length: 33 }, (_, i) => `c${i}`) }, fields: ['options.entityCategories'], rule: 'at most 32' },
  { name: 'entityCategories non-string', options: { entityCategories: ['pii', 7] }, fields: ['options.entityCategories[1]'] },
  { name: 'redactCategories 33', options: { entityCategories: ['pii'], redactCategories: Array.from({ length: 33 }, () => 'pii') }, fields: ['options.redactCategories'] },
  { name: 'redactCategories not a subset', options: { entityCategories: ['pii'], redactCategories: ['phi'] }, fields: ['options.redactCategories[0]'], rule: 'entityCategories' },
  { name: 'redactionStyle without redactCategories', options: { redactionStyle: 'mask' }, fields: ['options.redactionStyle'], rule: 'requires redactCategories' },
  { name: 'redactionStyle unknown', options: { entityCategories: ['pii'], redactCategories: ['pii'], redactionStyle: 'blur' }, fields: ['options.redactionStyle'] },
  { name: 'vocabularyHints 1001', options: { vocabularyHints: Array.from({ length: 1001 }, () => 'w') }, fields: ['options.vocabularyHints'], rule: 'at most 1000' },
  { name: 'vocabularyHint 129 chars', options: { vocabularyHints: ['ok', 'h'.repeat(129)] }, fields: ['options.vocabularyHints[1]'], rule: 'at most 128' },
  { name: 'processingContentStorage not boolean', options: { processingContentStorage: 'true' }, fields: ['options.processingContentStorage'] },
  { name: 'exportFormats unknown', options: { exportFormats: ['txt', 'mp4'] }, fields: ['options.exportFormats[1]'] },
  { name: 'exportFormats repeated', options: { exportFormats: ['txt', 'txt'] }, fields: ['options.exportFormats[1]'] },
  { name: 'exportOptions format missing', options: { exportOptions: [{ includeSpeakers: false }] }, fields: ['options.exportOptions[0].format'], rule: 'is required' },
  { name: 'exportOptions repeated format', options: { exportOptions: [{ format: 'srt' }, { format: 'srt' }] }, fields: ['options.exportOptions[1].format'] },
  { name: 'exportOptions unknown control', options: { exportOptions: [{ format: 'srt', fontSize: 3 }] }, fields: ['options.exportOptions[0].fontSize'] },
  { name: 'segmentOnSilenceLongerThanS 0', options: { exportOptions: [{ format: 'txt', segmentOnSilenceLongerThanS: 0 }] }, fields: ['options.exportOptions[0].segmentOnSilenceLongerThanS'], rule: 'greater than 0 and at most 3600' },
  { name: 'segmentOnSilenceLongerThanS 3600.5', options: { exportOptions: [{ format: 'txt', segmentOnSilenceLongerThanS: 3600.5 }] }, fields: ['options.exportOptions[0].segmentOnSilenceLongerThanS'] },
  { name: 'maxSegmentDurationS 0', options: { exportOptions: [{ format: 'txt', maxSegmentDurationS: 0 }] }, fields: ['options.exportOptions[0].maxSegmentDurationS'] },
  { name: 'maxSegmentDurationS 3601', options: { exportOptions: [{ format: 'txt', maxSegmentDurationS: 3601 }] }, fields: ['options.exportOptions[0].maxSegmentDurationS'] },
  { name: 'maxSegmentChars 0', options: { exportOptions: [{ format: 'txt', maxSegmentChars: 0 }] }, fields: ['options.exportOptions[0].maxSegmentChars'], rule: 'from 1 to 100000' },
  { name: 'maxSegmentChars 100001', options: { exportOptions: [{ format: 'txt', maxSegmentChars: 100_001 }] }, fields: ['options.exportOptions[0].maxSegmentChars'] },
  { name: 'maxCharactersPerLine 0', options: { exportOptions: [{ format: 'srt', maxCharactersPerLine: 0 }] }, fields: ['options.exportOptions[0].maxCharactersPerLine'], rule: 'from 1 to 16384' },
  { name: 'maxCharactersPerLine 16385', options: { exportOptions: [{ format: 'srt', maxCharactersPerLine: 16_385 }] }, fields: ['options.exportOptions[0].maxCharactersPerLine'] },
  { name: 'includeTimestamps not boolean', options: { exportOptions: [{ format: 'txt', includeTimestamps: 'no' }] }, fields: ['options.exportOptions[0].includeTimestamps'] },
  { name: 'notifyOnCompletion true without notifyUrl', options: { notifyOnCompletion: true }, fields: ['options.notifyOnCompletion'], rule: 'requires notifyUrl' },
  { name: 'notifyUrl not http', options: { notifyUrl: 'mailto:a@b' }, fields: ['options.notifyUrl'] },
  { name: 'notificationSigningSecret without notifyUrl', options: { notificationSigningSecret: 'abc' }, fields: ['options.notificationSigningSecret'] },
  { name: 'clientMetadata three levels', options: { clientMetadata: { a: { b: { c: 1 } } } }, fields: ['options.clientMetadata'], rule: 'at most 2 levels deep' },
  { name: 'clientMetadata over 16 KB', options: { clientMetadata: { a: 'x'.repeat(16 * 1024) } }, fields: ['options.clientMetadata'], rule: 'at most 16384 bytes' },
  { name: 'clientMetadata not an object', options: { clientMetadata: 'meta' }, fields: ['options.clientMetadata'] },
  // Combination rules 1-5.
  { name: 'rule 1: rewrite + entities', options: { rewriteInstruction: 'tidy', entityCategories: ['pii'] }, fields: ['options.rewriteInstruction'], rule: 'rule 1' },
  { name: 'rule 1: rewrite + redaction', options: { rewriteInstruction: 'tidy', entityCategories: ['pii'], redactCategories: ['pii'] }, fields: ['options.rewriteInstruction'] },
  { name: 'rule 1: rewrite + separateChannels', options: { rewriteInstruction: 'tidy', separateChannels: true }, fields: ['options.rewriteInstruction'], rule: 'separateChannels (rule 1)' },
  { name: 'rule 2: separateChannels + separateSpeakers true', options: { separateChannels: true, separateSpeakers: true }, fields: ['options.separateSpeakers'], rule: 'rule 2' },
  { name: 'rule 2: separateChannels + maxSpeakerCount', options: { separateChannels: true, maxSpeakerCount: 2 }, fields: ['options.maxSpeakerCount'], rule: 'rule 2' },
  { name: 'rule 2: separateChannels + speakerMergeSensitivity', options: { separateChannels: true, speakerMergeSensitivity: 0.2 }, fields: ['options.speakerMergeSensitivity'], rule: 'rule 2' },
  { name: 'rule 2: separateChannels + identifyConversationRoles', options: { separateChannels: true, identifyConversationRoles: true }, fields: ['options.identifyConversationRoles'], rule: 'rule 2' },
  { name: 'rule 2: separateChannels + pcm_s16le_16', options: { separateChannels: true, inputEncoding: 'pcm_s16le_16' }, fields: ['options.inputEncoding'], rule: 'rule 2' },
  { name: 'rule 4: combined without alignment', options: { separateChannels: true, channelResultMode: 'combined', alignmentLevel: 'none' }, fields: ['options.channelResultMode'], rule: 'rule 4' },
  { name: 'rule 4: combined + entities', options: { separateChannels: true, channelResultMode: 'combined', entityCategories: ['pii'] }, fields: ['options.channelResultMode'], rule: 'rule 4' },
  { name: 'rule 5: matchKnownSpeakers', options: { matchKnownSpeakers: true }, fields: ['options.matchKnownSpeakers'], rule: 'rule 5' },
  { name: 'rule 5: matchKnownSpeakers false is refused too', options: { matchKnownSpeakers: false }, fields: ['options.matchKnownSpeakers'] },
];

const VALID_BOUNDARIES: Array<Record<string, unknown>> = [
  { maxSpeakerCount: 1 },
  { maxSpeakerCount: 32 },
  { speakerMergeSensitivity: 0.1 },
  { speakerMergeSensitivity: 0.4 },
  { samplingTemperature: 0, randomSeed: 0 },
  { samplingTemperature: 2 },
  { rewriteInstruction: 'r'.repeat(2000) },
  { entityCategories: Array.from({ length: 32 }, () => 'pii'), redactCategories: Array.from({ length: 32 }, () => 'pii'), redactionStyle: 'mask' },
  { vocabularyHints: Array.from({ length: 1000 }, () => 'h'.repeat(128)) },
  { clientMetadata: { a: { b: 1 }, c: [1, 2] } },
  { separateChannels: true, channelResultMode: 'combined', alignmentLevel: 'character' },
  { identifyConversationRoles: true, includeSoundEvents: true, removeDisfluencies: true, processingContentStorage: true },
  { exportFormats: ['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf'] },
  {
    exportOptions: [
      { format: 'txt', segmentOnSilenceLongerThanS: 3600, maxSegmentDurationS: 0.001, maxSegmentChars: 1, maxCharactersPerLine: 1 },
      { format: 'srt', maxSegmentChars: 100_000, maxCharactersPerLine: 16_384, includeSpeakers: false, includeTimestamps: true },
    ],
  },
  { notifyUrl: 'https://hooks.example.invalid/x', notifyOnCompletion: false, notificationSigningSecret: 's', clientMetadata: { k: 'v' } },
];

describe('POST /stt/transcriptions validation', () => {
  const server = serverForSuite({ taskTiming: { queueMs: 60_000, processingMs: 0, reconcilingMs: 0 } });
  let uploadId: string;
  beforeAll(async () => {
    uploadId = await upload(server, speechWav());
  });

  const create = (body: Record<string, unknown>, key = idem()) =>
    server.call('POST', '/stt/transcriptions', { json: body, headers: { 'Idempotency-Key': key } });

  it.each(INVALID)('refuses $name with INPUT_INVALID naming the field', async (c) => {
    const body: Record<string, unknown> = { uploadId, ...c.body };
    if (c.options !== undefined) body['options'] = c.options;
    for (const k of Object.keys(body)) if (body[k] === undefined) delete body[k];
    const r = await create(body);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe(-1);
    expect(r.body.errorCode).toBe('INPUT_INVALID');
    expect(r.body.details.violations.map((v: { field: string }) => v.field)).toEqual(c.fields);
    if (c.rule !== undefined) expect(r.body.details.violations[0].rule).toContain(c.rule);
    expect(r.body.message).toContain(c.fields[0]);
  });

  it.each(VALID_BOUNDARIES)('accepts boundary options %#', async (options) => {
    const r = await create({ uploadId, options });
    expect(r.body.errorCode).toBeUndefined();
    expect(r.body.data.status).toBe('QUEUED');
  });

  it('accepts the top-level limits at their boundaries', async () => {
    const r = await create({ uploadId, title: 't'.repeat(256), languageHint: 'auto', modelId: 'svc_stt_v1', audioTrackIndex: 0, waitForCompletion: true, waitTimeoutMs: 0 });
    expect(r.body.code).toBe(1);
    const max = await create({ uploadId, waitForCompletion: true, waitTimeoutMs: 1 });
    expect(max.body.data.status).toBe('QUEUED');
    const meta = { a: 'x'.repeat(16 * 1024 - 8) }; // {"a":"…"} is exactly 16384 bytes
    expect(Buffer.byteLength(JSON.stringify(meta))).toBe(16 * 1024);
    expect((await create({ uploadId, options: { clientMetadata: meta } })).body.code).toBe(1);
  });

  it.each(['fr', 'fra', 'en', 'eng', 'de', 'deu', 'zh', 'zho', 'auto'])('accepts languageHint %s in either ISO 639 form and echoes it as sent', async (languageHint) => {
    const r = await create({ uploadId, languageHint });
    expect(r.body.errorCode).toBeUndefined();
    expect(r.body.data.languageHint).toBe(languageHint);
  });

  it.each([
    ['http://10.1.2.3/hook', 'private'],
    ['http://[::1]/', 'loopback'],
    ['http://169.254.169.254/', 'cloud-metadata'],
    ['http://127.0.0.1:9/hook', 'loopback'],
    ['http://[::ffff:192.168.0.1]/', 'private'],
    ['http://2130706433/', 'loopback'],
  ])('refuses notifyUrl %s at submit with details.reason DESTINATION_NOT_ALLOWED', async (notifyUrl, refusal) => {
    const r = await create({ uploadId, options: { notifyUrl } });
    expect(r.status).toBe(400);
    expect(r.body.errorCode).toBe('INPUT_INVALID');
    expect(r.body.details).toMatchObject({ reason: 'DESTINATION_NOT_ALLOWED', refusal });
    expect(r.body.details.violations).toEqual([{ field: 'options.notifyUrl', rule: `must be a public URL; its host is a ${refusal} address (DESTINATION_NOT_ALLOWED)` }]);
  });

  it('accepts a notifyUrl with a host name or a public address (judged when the webhook connects)', async () => {
    for (const notifyUrl of ['http://hooks.example.invalid/x', 'http://localhost:9/x', 'http://93.184.215.14/x']) {
      const r = await create({ uploadId, options: { notifyUrl, notifyOnCompletion: false } });
      expect(r.body.errorCode).toBeUndefined();
    }
  });

  it('reports every violation at once', async () => {
    const r = await create({ uploadId, title: 5, options: { maxSpeakerCount: 99, alignmentLevel: 'x', matchKnownSpeakers: true, foo: 1 } });
    expect(r.body.details.violations.map((v: any) => v.field).sort()).toEqual(
      ['options.alignmentLevel', 'options.foo', 'options.matchKnownSpeakers', 'options.maxSpeakerCount', 'title'].sort(),
    );
  });

  it('requires the Idempotency-Key header', async () => {
    const r = await server.call('POST', '/stt/transcriptions', { json: { uploadId } });
    expect(r.status).toBe(400);
    expect(r.body.details.violations[0].field).toBe('Idempotency-Key');
    const long = await create({ uploadId }, 'k'.repeat(256));
    expect(long.body.details.violations[0].field).toBe('Idempotency-Key');
  });

  it('answers an unknown or foreign uploadId with 404', async () => {
    const r = await create({ uploadId: 'up_missing' });
    expect(r.status).toBe(404);
    const foreign = await server.call('POST', '/stt/transcriptions', { key: 'key-b', json: { uploadId }, headers: { 'Idempotency-Key': idem() } });
    expect(foreign.status).toBe(404);
  });

  it('checks audioTrackIndex against the upload tracks', async () => {
    expect((await create({ uploadId, audioTrackIndex: 0 })).body.code).toBe(1);
    const r = await create({ uploadId, audioTrackIndex: 1 });
    expect(r.body.details.violations[0]).toMatchObject({ field: 'audioTrackIndex' });
  });

  it('rule 3: separateChannels accepts five channels and refuses six', async () => {
    const ch = pcm([{ tone: 300, ms: 200 }]);
    const five = await upload(server, wav([ch, ch, ch, ch, ch]));
    const six = await upload(server, wav([ch, ch, ch, ch, ch, ch]));
    expect((await create({ uploadId: five, options: { separateChannels: true } })).body.code).toBe(1);
    const r = await create({ uploadId: six, options: { separateChannels: true } });
    expect(r.body.details.violations[0].field).toBe('options.separateChannels');
    expect(r.body.details.violations[0].rule).toContain('rule 3');
    // Without separateChannels the six channels are mixed down: accepted.
    expect((await create({ uploadId: six })).body.code).toBe(1);
  });

  it('matches inputEncoding to the uploaded content', async () => {
    const raw = await upload(server, Buffer.alloc(3200), undefined, 'audio/L16; rate=16000');
    expect((await create({ uploadId: raw, options: { inputEncoding: 'pcm_s16le_16' } })).body.code).toBe(1);
    expect((await create({ uploadId: raw })).body.details.violations[0].field).toBe('options.inputEncoding');
    expect((await create({ uploadId, options: { inputEncoding: 'pcm_s16le_16' } })).body.details.violations[0].field).toBe('options.inputEncoding');
  });
});
