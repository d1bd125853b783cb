import type { CoverDeleteResult, TtsHistoryItem, TtsHistoryPage, UserInfo, Voice, VoiceId } from '../types/account.js';
import { ResponseFormatError } from '../errors/client-errors.js';
import { TTS_HAS_MORE } from '../protocol.js';
import { list, number, object, string, stringArray } from '../util/read.js';

/** Response parsers for voices, user info, TTS history and covers (spec "Resources and their fields"). */
export function parseVoice(value: unknown, path: string): Voice {
  const v = object(value, path);
  return {
    id: string(v['id'], `${path}.id`),
    name: string(v['name'], `${path}.name`),
    type: string(v['type'], `${path}.type`),
    feature: string(v['feature'], `${path}.feature`),
    channel: string(v['channel'], `${path}.channel`),
    fileCount: number(v['fileCount'], `${path}.fileCount`),
    totalFileSize: number(v['totalFileSize'], `${path}.totalFileSize`),
  };
}

export function parseVoiceId(value: unknown, path = 'data'): VoiceId {
  return { id: string(object(value, path)['id'], `${path}.id`) };
}

export function parseUserInfo(value: unknown, path = 'data'): UserInfo {
  const u = object(value, path);
  const b = object(u['benefit'], `${path}.benefit`);
  const n = (name: string): number => number(b[name], `${path}.benefit.${name}`);
  return {
    plan: string(u['plan'], `${path}.plan`),
    status: string(u['status'], `${path}.status`),
    resetInDays: number(u['resetInDays'], `${path}.resetInDays`),
    benefit: {
      usedVoices: n('usedVoices'),
      totalVoices: n('totalVoices'),
      usedMonthlyChars: n('usedMonthlyChars'),
      totalMonthlyChars: n('totalMonthlyChars'),
      usedOrderChars: n('usedOrderChars'),
      totalOrderChars: n('totalOrderChars'),
    },
  };
}

function parseTtsItem(value: unknown, path: string): TtsHistoryItem {
  const t = object(value, path);
  return {
    id: string(t['id'], `${path}.id`),
    title: string(t['title'], `${path}.title`),
    text: string(t['text'], `${path}.text`),
    useChars: number(t['useChars'], `${path}.useChars`),
    language: string(t['language'], `${path}.language`),
    channel: string(t['channel'], `${path}.channel`),
    voiceId: string(t['voiceId'], `${path}.voiceId`),
    voiceName: string(t['voiceName'], `${path}.voiceName`),
  };
}

/**
 * Spec "GET /tts/list": hasMore is "boolean-like", documented as 1 when there is NO earlier item and 0
 * when earlier items remain. Decoded once here (protocol.ts TTS_HAS_MORE); true/false are read as 1/0.
 * Any other value is a format error rather than a guess that could loop forever.
 */
export function decodeTtsHasMore(raw: unknown, path: string): boolean {
  const flag = raw === true ? 1 : raw === false ? 0 : raw;
  if (flag === TTS_HAS_MORE.noEarlierItems) return false;
  if (flag === TTS_HAS_MORE.earlierItemsRemain) return true;
  throw ResponseFormatError.malformed(path, `${TTS_HAS_MORE.noEarlierItems} or ${TTS_HAS_MORE.earlierItemsRemain}`, raw);
}

export function parseTtsPage(value: unknown, path = 'data'): TtsHistoryPage {
  const p = object(value, path);
  const raw = p['hasMore'];
  return {
    hasMore: raw as number | boolean,
    hasEarlierItems: decodeTtsHasMore(raw, `${path}.hasMore`),
    earliestHistoryItemId: typeof p['earliestHistoryItemId'] === 'string' ? p['earliestHistoryItemId'] : '',
    list: list(p['list'], `${path}.list`, parseTtsItem),
  };
}

export function parseCoverResult(value: unknown, path = 'data'): CoverDeleteResult {
  const r = object(value, path);
  return {
    succeedIds: stringArray(r['succeedIds'] ?? [], `${path}.succeedIds`),
    nonExistIds: stringArray(r['nonExistIds'] ?? [], `${path}.nonExistIds`),
    unMatchIds: stringArray(r['unMatchIds'] ?? [], `${path}.unMatchIds`),
  };
}
