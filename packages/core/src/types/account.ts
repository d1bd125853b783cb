/**
 * Voices, user info, text-to-speech history and AI covers (spec "Resources and their fields").
 * Counts the spec gives as JSON numbers stay `number`.
 */

/** Spec "Voice (item of GET /voices)". Values of type, feature and channel: not shown (string). */
export interface Voice {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly feature: string;
  readonly channel: string;
  readonly fileCount: number;
  readonly totalFileSize: number;
}

/** Spec "Other shapes": the voice id returned by create and save. */
export interface VoiceId {
  readonly id: string;
}

/** Spec "User info". */
export interface UserInfo {
  readonly plan: string;
  /** `active`, or `cancellation upon expiration` when cancelled and not yet expired. */
  readonly status: 'active' | 'cancellation upon expiration' | (string & {});
  readonly resetInDays: number;
  readonly benefit: {
    readonly usedVoices: number;
    readonly totalVoices: number;
    readonly usedMonthlyChars: number;
    readonly totalMonthlyChars: number;
    readonly usedOrderChars: number;
    readonly totalOrderChars: number;
  };
}

/** Spec "Text-to-speech history item". */
export interface TtsHistoryItem {
  readonly id: string;
  readonly title: string;
  readonly text: string;
  readonly useChars: number;
  readonly language: string;
  readonly channel: 'web' | 'api' | (string & {});
  readonly voiceId: string;
  readonly voiceName: string;
}

/** One page of GET /tts/list. */
export interface TtsHistoryPage {
  /** The raw, INVERTED flag (spec: 1 = no earlier item, 0 = earlier items remain). */
  readonly hasMore: number | boolean;
  /** The flag decoded per protocol.ts TTS_HAS_MORE: true when earlier items remain. */
  readonly hasEarlierItems: boolean;
  readonly earliestHistoryItemId: string;
  readonly list: readonly TtsHistoryItem[];
}

export interface TtsListParams {
  /** 10 to 1000 items per call (spec "Limits"); default 10. */
  readonly limit?: number;
  /** List items earlier than this one; omit to start from the most recent. */
  readonly startBeforeTTSId?: string;
}

/** Spec "Delete AI cover result". unMatchIds: exists but owned by another account (ours). */
export interface CoverDeleteResult {
  readonly succeedIds: readonly string[];
  readonly nonExistIds: readonly string[];
  readonly unMatchIds: readonly string[];
}
