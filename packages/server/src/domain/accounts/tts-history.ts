import { ApiError, Violations } from '../../errors.js';
import { LIMITS, TTS_HAS_MORE, mulberry32 } from '@soundclone/core/internal';
import { WORDS } from '../../recognition/words.js';
import type { Account } from './accounts.js';

/**
 * Text-to-speech history (spec "GET /tts/list"). Generation is not part of this service, so each
 * account gets `seedCount` deterministic items (same key position, same items, every run), newest first.
 * Ids are `tts-<n>-<seq>` with n the 1-based key position and seq 1 for the oldest.
 */
export interface TtsItem {
  readonly id: string;
  readonly title: string;
  readonly text: string;
  readonly useChars: number;
  readonly language: string;
  readonly channel: 'web' | 'api';
  readonly voiceId: string;
  readonly voiceName: string;
}

const LANGUAGES = ['en', 'es', 'fr', 'de', 'ja'];
const SYSTEM_VOICE_REFS = [
  { id: '100001', name: 'Aria' },
  { id: '100002', name: 'Basil' },
  { id: '100003', name: 'Clementine' },
  { id: '100004', name: 'Dorian' },
];

export class TtsHistory {
  /** Oldest first, per account id. */
  private readonly items = new Map<string, TtsItem[]>();

  constructor(accounts: readonly Account[], seedCount: number) {
    for (const account of accounts) {
      const random = mulberry32(0x5eed + account.index);
      const list: TtsItem[] = [];
      for (let seq = 1; seq <= seedCount; seq++) {
        const words = Array.from({ length: 4 + Math.floor(random() * 24) }, () => WORDS[Math.floor(random() * WORDS.length)] as string);
        const text = words.join(' ');
        const voice = SYSTEM_VOICE_REFS[Math.floor(random() * SYSTEM_VOICE_REFS.length)] as { id: string; name: string };
        list.push({
          id: `tts-${account.index + 1}-${seq}`,
          title: words.slice(0, 3).join(' '),
          text,
          useChars: [...text].length,
          language: LANGUAGES[Math.floor(random() * LANGUAGES.length)] as string,
          channel: random() < 0.5 ? 'web' : 'api',
          voiceId: voice.id,
          voiceName: voice.name,
        });
      }
      this.items.set(account.id, list);
    }
  }

  /** Characters used by the seeded items, counted in the user's monthly usage. */
  usedChars(account: Account): number {
    return (this.items.get(account.id) ?? []).reduce((sum, item) => sum + item.useChars, 0);
  }

  /**
   * One page, newest first. hasMore is INVERTED as the spec documents it: 1 when there is no earlier
   * item, 0 when earlier items remain. earliestHistoryItemId is the last (oldest) id of the page, "" if
   * the page is empty.
   */
  list(account: Account, params: { limit?: unknown; startBeforeTTSId?: unknown }): Record<string, unknown> {
    const v = new Violations();
    const limit = parseLimit(params.limit, v);
    const before = params.startBeforeTTSId;
    if (before !== undefined && typeof before !== 'string') v.add('startBeforeTTSId', 'must be a string');
    v.throwIfAny();
    const all = this.items.get(account.id) ?? [];
    let end = all.length; // exclusive index into the oldest-first list
    if (typeof before === 'string' && before !== '') {
      const index = all.findIndex((item) => item.id === before);
      // Another account's id is reported like an unknown one.
      if (index < 0) throw ApiError.invalidField('startBeforeTTSId', 'is not an item of this account');
      end = index;
    }
    const start = Math.max(0, end - limit);
    const page = all.slice(start, end).reverse();
    return {
      hasMore: start === 0 ? TTS_HAS_MORE.noEarlierItems : TTS_HAS_MORE.earlierItemsRemain,
      earliestHistoryItemId: page.length > 0 ? (page[page.length - 1] as TtsItem).id : '',
      list: page,
    };
  }
}

function parseLimit(raw: unknown, v: Violations): number {
  if (raw === undefined || raw === '') return LIMITS.ttsListLimitDefault;
  const n = typeof raw === 'string' && /^-?[0-9]+$/.test(raw) ? Number(raw) : raw;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < LIMITS.ttsListLimitMin || n > LIMITS.ttsListLimitMax) {
    v.add('limit', `must be an integer from ${LIMITS.ttsListLimitMin} to ${LIMITS.ttsListLimitMax}`);
    return LIMITS.ttsListLimitDefault;
  }
  return n;
}
