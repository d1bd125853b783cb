import { ApiError, Violations } from '../../errors.js';
import { LIMITS } from '@soundclone/core/internal';
import { DecimalIdSequence } from '../../util/ids.js';
import type { Account } from './accounts.js';
import { DISCARD_CHANGES, type ChangeSink } from '../state-changes.js';

/**
 * Voices (spec "Voice"). Values of type, feature and channel are ours ("not shown"):
 *   type     system (shared by every account) | clone (made from files) | design (saved design)
 *   feature  tts
 *   channel  system | web | api  (where the voice was made)
 * usedVoices counts clone and design voices, web and api alike (spec "benefit": "through website or API").
 */
export interface Voice {
  readonly id: string;
  readonly ownerId: string | null;
  name: string;
  readonly type: 'system' | 'clone' | 'design';
  readonly feature: 'tts';
  readonly channel: 'system' | 'web' | 'api';
  readonly fileCount: number;
  readonly totalFileSize: number;
}

const SYSTEM_VOICES = ['Aria', 'Basil', 'Clementine', 'Dorian'];
const DESIGNS_PER_ACCOUNT = 10;

export class Voices {
  private readonly ids = new DecimalIdSequence(100_001n);
  private readonly voices: Voice[] = [];
  /** designId -> owning account id (spec "POST /voices/design/save"; see designIdsFor). */
  private readonly designs = new Map<string, string>();

  constructor(
    accounts: readonly Account[],
    private readonly changes: ChangeSink = DISCARD_CHANGES,
  ) {
    for (const name of SYSTEM_VOICES) {
      this.voices.push({ id: this.ids.take(), ownerId: null, name, type: 'system', feature: 'tts', channel: 'system', fileCount: 0, totalFileSize: 0 });
    }
    for (const account of accounts) {
      // Every account starts with one voice cloned on the website, so usedVoices starts at 1.
      this.voices.push({ id: this.ids.take(), ownerId: account.id, name: 'My website voice', type: 'clone', feature: 'tts', channel: 'web', fileCount: 3, totalFileSize: 1_572_864 });
      for (const designId of Voices.designIdsFor(account)) this.designs.set(designId, account.id);
    }
  }

  /**
   * Seeded design ids: the design-generate step is not part of this service, so each account owns
   * `design-<n>-01` .. `design-<n>-10` where n is its 1-based key position. Each can be saved once.
   */
  static designIdsFor(account: Account): string[] {
    return Array.from({ length: DESIGNS_PER_ACCOUNT }, (_, i) => `design-${account.index + 1}-${String(i + 1).padStart(2, '0')}`);
  }

  /** Kept state: created and renamed voices replace their seeded or earlier selves; saved designs are used up. */
  restore(voices: readonly Voice[], savedDesignIds: readonly string[]): void {
    for (const voice of voices) {
      const index = this.voices.findIndex((v) => v.id === voice.id);
      if (index >= 0) this.voices[index] = voice;
      else this.voices.push(voice);
      this.ids.advancePast(voice.id);
    }
    for (const designId of savedDesignIds) this.designs.delete(designId);
  }

  list(account: Account): Voice[] {
    return this.voices.filter((v) => v.ownerId === null || v.ownerId === account.id);
  }

  usedVoices(account: Account): number {
    return this.voices.filter((v) => v.ownerId === account.id).length;
  }

  private checkQuota(account: Account): void {
    const used = this.usedVoices(account);
    if (used >= account.totalVoices) {
      throw new ApiError('QUOTA_EXCEEDED', `voice quota reached: ${used} of ${account.totalVoices} custom voices`, { usedVoices: used, totalVoices: account.totalVoices });
    }
  }

  createClone(account: Account, name: string, files: ReadonlyArray<{ size: number }>): Voice {
    this.checkQuota(account);
    const voice: Voice = {
      id: this.ids.take(), ownerId: account.id, name, type: 'clone', feature: 'tts', channel: 'api',
      fileCount: files.length, totalFileSize: files.reduce((sum, f) => sum + f.size, 0),
    };
    this.voices.push(voice);
    this.changes({ kind: 'voice', voice });
    return voice;
  }

  saveDesign(account: Account, body: Record<string, unknown>): Voice {
    const v = new Violations();
    const designId = body['designId'];
    if (typeof designId !== 'string' || designId === '') v.add('designId', 'is required and must be a non-empty string');
    checkName(v, body['name'], 'name');
    v.throwIfAny();
    // Another account's design id is reported exactly like an unknown one: existence never leaks.
    if (this.designs.get(designId as string) !== account.id) throw ApiError.invalidField('designId', 'is not a design of this account or was already saved');
    this.checkQuota(account);
    this.designs.delete(designId as string);
    const voice: Voice = { id: this.ids.take(), ownerId: account.id, name: body['name'] as string, type: 'design', feature: 'tts', channel: 'api', fileCount: 0, totalFileSize: 0 };
    this.voices.push(voice);
    this.changes({ kind: 'voice', voice, savedDesignId: designId as string });
    return voice;
  }

  rename(account: Account, id: string, body: Record<string, unknown>): void {
    const v = new Violations();
    // Spec: path id is a Long.
    if (!/^[0-9]{1,19}$/.test(id)) v.add('id', 'must be a decimal voice id (Long)');
    checkName(v, body['name'], 'name');
    v.throwIfAny();
    const voice = this.voices.find((x) => x.id === id && x.ownerId === account.id);
    if (voice === undefined) throw ApiError.notFound('voice');
    voice.name = body['name'] as string;
    this.changes({ kind: 'voice', voice });
  }
}

/** Spec "Limits": voice name at most 32 characters (counted as Unicode code points), required. */
export function checkName(v: Violations, name: unknown, field: string): void {
  if (typeof name !== 'string' || name.trim() === '') {
    v.add(field, 'is required and must be a non-empty string');
  } else if ([...name].length > LIMITS.voiceNameMaxChars) {
    v.add(field, `must be at most ${LIMITS.voiceNameMaxChars} characters`);
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
