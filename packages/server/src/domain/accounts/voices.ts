import { ApiError, Violations } from '../../errors.js';
import { LIMITS } from '@soundclone/core/internal';
import { DecimalIdSequence } from '../../util/ids.js';
import type { Account } from './accounts.js';
import { isText, NOT_TEXT } from '../validate.js';
import { isRefusal, type QuotaRefusal, type SeedInput, type Store, type VoiceRow } from '../../store/store.js';

/**
 * Voices (spec "Voice"). Values of type, feature and channel are ours ("not shown"):
 *   type     system (shared by every account) | clone (made from files) | design (saved design)
 *   feature  tts
 *   channel  system | web | api  (where the voice was made)
 * usedVoices counts clone and design voices, web and api alike (spec "benefit": "through website or API").
 */
export type Voice = VoiceRow;

const SYSTEM_VOICES = ['Aria', 'Basil', 'Clementine', 'Dorian'];
const DESIGNS_PER_ACCOUNT = 10;

export class Voices {
  constructor(private readonly store: Store) {}

  /**
   * What a start seeds (Store.seed; kept rows win): the system voices, then one voice cloned on the
   * website per account (so usedVoices starts at 1), ids from 100001 in that order, and each account's
   * design ids.
   */
  static seedFor(accounts: readonly Account[]): Pick<SeedInput, 'voices' | 'designs'> {
    const ids = new DecimalIdSequence(100_001n);
    const voices: VoiceRow[] = SYSTEM_VOICES.map((name) => ({ id: ids.take(), ownerId: null, name, type: 'system', feature: 'tts', channel: 'system', fileCount: 0, totalFileSize: 0 }));
    const designs: Array<{ designId: string; accountId: string }> = [];
    for (const account of accounts) {
      voices.push({ id: ids.take(), ownerId: account.id, name: 'My website voice', type: 'clone', feature: 'tts', channel: 'web', fileCount: 3, totalFileSize: 1_572_864 });
      for (const designId of Voices.designIdsFor(account)) designs.push({ designId, accountId: account.id });
    }
    return { voices, designs };
  }

  /**
   * Seeded design ids: the design-generate step is not part of this service, so each account owns
   * `design-<n>-01` .. `design-<n>-10` where n is its 1-based key position. Each can be saved once.
   */
  static designIdsFor(account: Account): string[] {
    return Array.from({ length: DESIGNS_PER_ACCOUNT }, (_, i) => `design-${account.index + 1}-${String(i + 1).padStart(2, '0')}`);
  }

  list(account: Account): Promise<readonly Voice[]> {
    return this.store.voices.listFor(account.id);
  }

  usedVoices(account: Account): Promise<number> {
    return this.store.voices.countOwned(account.id);
  }

  async createClone(account: Account, name: string, files: ReadonlyArray<{ size: number }>): Promise<Voice> {
    const created = await this.store.voices.createClone(account.id, account.totalVoices, {
      name, type: 'clone', feature: 'tts', channel: 'api', fileCount: files.length, totalFileSize: files.reduce((sum, f) => sum + f.size, 0),
    });
    if (isRefusal(created)) throw quotaExceeded(created);
    return created;
  }

  async saveDesign(account: Account, body: Record<string, unknown>): Promise<Voice> {
    const v = new Violations();
    const designId = body['designId'];
    if (typeof designId !== 'string' || designId === '') v.add('designId', 'is required and must be a non-empty string');
    checkName(v, body['name'], 'name');
    v.throwIfAny();
    const saved = await this.store.voices.saveDesign(account.id, account.totalVoices, designId as string, body['name'] as string);
    // Another account's design id is reported exactly like an unknown one: existence never leaks.
    if (isRefusal(saved)) {
      if (saved.refused === 'quota') throw quotaExceeded(saved);
      throw ApiError.invalidField('designId', 'is not a design of this account or was already saved');
    }
    return saved;
  }

  async rename(account: Account, id: string, body: Record<string, unknown>): Promise<void> {
    const v = new Violations();
    // Spec: path id is a Long.
    if (!/^[0-9]{1,19}$/.test(id)) v.add('id', 'must be a decimal voice id (Long)');
    checkName(v, body['name'], 'name');
    v.throwIfAny();
    const renamed = await this.store.voices.rename(account.id, id, body['name'] as string);
    if (renamed === undefined) throw ApiError.notFound('voice');
  }
}

function quotaExceeded(q: QuotaRefusal): ApiError {
  return new ApiError('QUOTA_EXCEEDED', `voice quota reached: ${q.used} of ${q.limit} custom voices`, { usedVoices: q.used, totalVoices: q.limit });
}

/** Spec "Limits": voice name at most 32 characters (counted as Unicode code points), required. */
export function checkName(v: Violations, name: unknown, field: string): void {
  if (typeof name !== 'string' || name.trim() === '') {
    v.add(field, 'is required and must be a non-empty string');
  } else if ([...name].length > LIMITS.voiceNameMaxChars) {
    v.add(field, `must be at most ${LIMITS.voiceNameMaxChars} characters`);
  } else if (!isText(name)) {
    v.add(field, NOT_TEXT);
  }
}

export function voiceView(voice: Voice): Record<string, unknown> {
  return {
    id: voice.id,
    name: voice.name,
    type: voice.type,
    feature: voice.feature,
    channel: voice.channel,
    fileCount: voice.fileCount,
    totalFileSize: voice.totalFileSize,
  };
}
