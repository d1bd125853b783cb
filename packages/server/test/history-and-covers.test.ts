import { describe, expect, it } from 'vitest';
import { KEY_A, KEY_B, PREFIX, rawJson, serverForSuite } from './support/server.js';

describe('user info, TTS history and covers', () => {
  const server = serverForSuite({ accountOverrides: { [KEY_B]: { cancelled: true, plan: 'business' } } });

  it('reports plan, status, resetInDays and every benefit counter', async () => {
    const a = await server.call('GET', '/user/info');
    expect(a.body.data).toMatchObject({ plan: 'Pro', status: 'active', resetInDays: 30 });
    expect(Object.keys(a.body.data.benefit).sort()).toEqual(['totalMonthlyChars', 'totalOrderChars', 'totalVoices', 'usedMonthlyChars', 'usedOrderChars', 'usedVoices']);
    const b = await server.call('GET', '/user/info', { key: KEY_B });
    expect(b.body.data).toMatchObject({ plan: 'Business', status: 'cancellation upon expiration' });
  });

  it('counts the seeded TTS characters in usedMonthlyChars', async () => {
    let sum = 0;
    let before: string | undefined;
    for (;;) {
      const page = await server.call('GET', `/tts/list?limit=1000${before ? `&startBeforeTTSId=${before}` : ''}`);
      sum += page.body.data.list.reduce((n: number, item: any) => n + item.useChars, 0);
      if (page.body.data.hasMore === 1) break;
      before = page.body.data.earliestHistoryItemId;
    }
    const info = await server.call('GET', '/user/info');
    expect(info.body.data.benefit.usedMonthlyChars).toBe(sum);
  });

  it('pages through 2,500+ items newest first with the inverted hasMore flag, never looping', async () => {
    const seen = new Set<string>();
    let before = '';
    let pages = 0;
    for (;;) {
      const r = await server.call('GET', `/tts/list?limit=10&startBeforeTTSId=${before}`);
      pages++;
      const { hasMore, earliestHistoryItemId, list } = r.body.data;
      for (const item of list) {
        expect(seen.has(item.id)).toBe(false);
        seen.add(item.id);
        expect(Object.keys(item).sort()).toEqual(['channel', 'id', 'language', 'text', 'title', 'useChars', 'voiceId', 'voiceName']);
      }
      expect(earliestHistoryItemId).toBe(list[list.length - 1].id);
      // Spec: 1 when there is no earlier item, 0 when earlier items remain.
      if (hasMore === 1) break;
      expect(hasMore).toBe(0);
      before = earliestHistoryItemId;
      expect(pages).toBeLessThan(400);
    }
    expect(seen.size).toBe(2600);
    expect(pages).toBe(260);
    expect(seen.has('tts-1-1')).toBe(true);
  });

  it('accepts limit and startBeforeTTSId in a JSON body too', async () => {
    const q = await server.call('GET', '/tts/list?limit=25&startBeforeTTSId=tts-1-100');
    // fetch cannot send a GET body; node:http can (the spec calls these body parameters).
    const b = await rawJson(`${server.url}${PREFIX}/tts/list`, 'GET', { accessKey: KEY_A }, JSON.stringify({ limit: 25, startBeforeTTSId: 'tts-1-100' }));
    expect(b.body.data).toEqual(q.body.data);
    expect(q.body.data.list[0].id).toBe('tts-1-99');
    expect(q.body.data.list).toHaveLength(25);
    const clash = await rawJson(`${server.url}${PREFIX}/tts/list?limit=20`, 'GET', { accessKey: KEY_A }, JSON.stringify({ limit: 30 }));
    expect(clash.body.details.violations[0].field).toBe('limit');
  });

  it('defaults limit to 10 and takes 10..1000 only', async () => {
    expect((await server.call('GET', '/tts/list')).body.data.list).toHaveLength(10);
    expect((await server.call('GET', '/tts/list?limit=1000')).body.data.list).toHaveLength(1000);
    for (const bad of ['9', '1001', 'ten', '10.5']) {
      const r = await server.call('GET', `/tts/list?limit=${bad}`);
      expect(r.status).toBe(400);
      expect(r.body.details.violations).toEqual([{ field: 'limit', rule: 'must be an integer from 10 to 1000' }]);
    }
  });

  it('refuses a startBeforeTTSId of another account like an unknown one', async () => {
    const r = await server.call('GET', '/tts/list?startBeforeTTSId=tts-2-5');
    expect(r.status).toBe(400);
    expect(r.body.details.violations[0].field).toBe('startBeforeTTSId');
    const last = await server.call('GET', '/tts/list?startBeforeTTSId=tts-1-1');
    expect(last.body.data).toEqual({ hasMore: 1, earliestHistoryItemId: '', list: [] });
  });

  it('deletes covers with per-id outcomes', async () => {
    const r = await server.call('DELETE', '/cover', { json: { ids: ['cover-1-0001', 'cover-1-0002', 'cover-2-0001', 'nope', 'cover-1-0001'] } });
    expect(r.body.data).toEqual({ succeedIds: ['cover-1-0001', 'cover-1-0002'], nonExistIds: ['nope'], unMatchIds: ['cover-2-0001'] });
    const again = await server.call('DELETE', '/cover', { json: { ids: ['cover-1-0001'] } });
    expect(again.body.data.nonExistIds).toEqual(['cover-1-0001']);
    const other = await server.call('DELETE', '/cover', { key: KEY_B, json: { ids: ['cover-2-0001', 'cover-1-0003'] } });
    expect(other.body.data).toEqual({ succeedIds: ['cover-2-0001'], nonExistIds: [], unMatchIds: ['cover-1-0003'] });
  });

  it('takes at most 500 ids per call', async () => {
    const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => `cover-1-${String(from + i).padStart(4, '0')}`);
    const at = await server.call('DELETE', '/cover', { json: { ids: ids(500, 10) } });
    expect(at.body.data.succeedIds).toHaveLength(500);
    const past = await server.call('DELETE', '/cover', { json: { ids: ids(501, 10) } });
    expect(past.status).toBe(400);
    expect(past.body.details.violations).toEqual([{ field: 'ids', rule: 'must hold at most 500 ids per call' }]);
    const none = await server.call('DELETE', '/cover', { json: {} });
    expect(none.body.details.violations[0].field).toBe('ids');
    const empty = await server.call('DELETE', '/cover', { json: { ids: [] } });
    expect(empty.status).toBe(400);
    const badItem = await server.call('DELETE', '/cover', { json: { ids: ['a', 3] } });
    expect(badItem.body.details.violations[0].field).toBe('ids[1]');
  });
});

describe('capabilities', () => {
  const server = serverForSuite();

  it('lists models, modes, every request parameter, realtime parameters, download formats and the account', async () => {
    const r = await server.call('GET', '/stt/capabilities', { key: KEY_A });
    const d = r.body.data;
    expect(d.modelId).toBe('svc_stt_v1');
    expect(d.modes).toEqual({ batch: 'AVAILABLE', realtime: 'AVAILABLE' });
    expect(d.models).toContainEqual({ modelId: 'svc_stt_realtime_v1', mode: 'REALTIME', state: 'AVAILABLE' });
    expect(d.downloadFormats).toEqual(['txt', 'json', 'srt', 'segmented_json', 'html', 'docx', 'pdf']);
    const options = Object.keys(d.requestParameters.options);
    for (const name of ['rewriteInstruction', 'includeSoundEvents', 'separateSpeakers', 'maxSpeakerCount', 'speakerMergeSensitivity', 'alignmentLevel', 'inputEncoding', 'samplingTemperature', 'randomSeed', 'separateChannels', 'channelResultMode', 'entityCategories', 'redactCategories', 'redactionStyle', 'removeDisfluencies', 'identifyConversationRoles', 'vocabularyHints', 'processingContentStorage', 'exportFormats', 'exportOptions', 'notifyOnCompletion', 'notifyUrl', 'clientMetadata', 'notificationSigningSecret', 'matchKnownSpeakers']) {
      expect(options).toContain(name);
    }
    for (const name of ['source', 'audioTrackIndex', 'languageHint', 'waitForCompletion', 'waitTimeoutMs']) expect(d.requestParameters).toHaveProperty(name);
    expect(d.requestParameters.options.matchKnownSpeakers.state).toBe('UNAVAILABLE');
    expect(d.requestParameters.options.processingContentStorage.note).toContain('eligibility is not verified');
    expect(Object.keys(d.requestParameters.options.exportOptions.items)).toEqual(['format', 'includeSpeakers', 'includeTimestamps', 'segmentOnSilenceLongerThanS', 'maxSegmentDurationS', 'maxSegmentChars', 'maxCharactersPerLine']);
    expect(d.realtimeParameters.options).toHaveProperty('inputEncoding');
    expect(d.realtimeParameters.options).toHaveProperty('segmentCommitMode');
    expect(d.realtimeParameters.headers['Idempotency-Key'].required).toBe(true);
    expect(d.account).toMatchObject({ plan: 'Pro', planKey: 'pro', rate: { ratePerMinute: '600', rateVersion: '2026-01.v1' } });
    expect(d.account.balances.reservedCharacters).toBe('0');
  });
});
