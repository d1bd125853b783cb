import type { DownloadFormat, MediaFailureReason, TASK_STATUSES, TERMINAL_STATUSES } from '../protocol.js';

/**
 * Batch transcription tasks and the shared History (spec "Transcription task", "History list item").
 * Decimal-string counts and durations are `bigint` (util/decimal.ts explains why).
 */
/**
 * A batch transcription task's status (spec "States and transitions").
 * @useDeclaredType
 */
export type TaskStatus = (typeof TASK_STATUSES)[number];
/**
 * A status a task does not leave (isTerminalStatus()).
 * @useDeclaredType
 */
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

/** Spec "billing fields". state values are ours: RESERVED, SETTLED, RELEASED, ACCRUING. */
export interface Billing {
  readonly state: 'RESERVED' | 'SETTLED' | 'RELEASED' | 'ACCRUING' | (string & {});
  readonly planKey: string;
  readonly rateVersion: string;
  readonly ratePerMinute: bigint;
  readonly reservedCharacters: bigint;
  readonly settledCharacters: bigint;
  readonly releasedCharacters: bigint;
  /** What the task actually charges. */
  readonly billableCharacters: bigint;
  readonly billableDurationMs: bigint;
}

/** Spec "error fields": a FAILED task's error, as data (it is not thrown). */
export interface TaskError {
  readonly errorCode: string;
  readonly message: string;
  readonly retryable: boolean;
  /** Ours: FIX_INPUT, RETRY or CONTACT_SUPPORT. */
  readonly action: string;
  readonly requestId: string;
}

/** Element shapes the spec leaves "not shown" follow the reference service (docs/protocol.md). */
export interface Token {
  readonly text: string;
  readonly type: 'word' | 'sound_event' | (string & {});
  readonly startMs: number | null;
  readonly endMs: number | null;
  readonly confidence: number;
}

export interface CharacterAlignment {
  readonly char: string;
  readonly startMs: number;
  readonly endMs: number;
}

export interface Segment {
  readonly id: string;
  readonly speakerId: string | null;
  readonly channelIndex: number;
  readonly startMs: number | null;
  readonly endMs: number | null;
  readonly text: string;
  readonly timingStatus: string;
  readonly tokens: readonly Token[];
  readonly characterAlignments: readonly CharacterAlignment[];
}

export interface Transcript {
  readonly text: string;
  readonly languageCode: string | null;
  readonly languageConfidence: number | null;
  readonly speakers: ReadonlyArray<{ readonly speakerId: string; readonly label?: string; readonly role?: string | null }>;
  readonly segments: readonly Segment[];
  readonly channelResults: ReadonlyArray<{ readonly channelIndex: number; readonly text: string; readonly languageCode: string | null; readonly languageConfidence?: number | null }>;
  readonly entities: ReadonlyArray<Readonly<Record<string, unknown>>>;
  readonly revisionStatus: 'NOT_REQUESTED' | 'APPLIED' | 'EMPTY' | 'FAILED' | (string & {});
  readonly revisedText: string | null;
  readonly revisionErrorCode: string | null;
}

/** Ours: ISO-8601 timestamps ("the shape of timestamps in History items: not shown"). */
export interface Timestamps {
  readonly createdAt?: string;
  readonly updatedAt?: string;
  readonly completedAt?: string | null;
}

/** Spec "Transcription task" (GET /stt/transcriptions/{id}). */
export interface TranscriptionTask {
  readonly transcriptionId: string;
  readonly status: TaskStatus | (string & {});
  readonly modelId: string;
  readonly title?: string;
  readonly languageHint: string;
  readonly detectedLanguage: string | null;
  readonly audioDurationMs: bigint;
  readonly transcript: Transcript | null;
  readonly billing: Billing;
  /** Present only when status is FAILED. */
  readonly error?: TaskError;
  /** Echoed options.clientMetadata (ours: the task view carries it too). */
  readonly clientMetadata?: unknown;
  readonly timestamps?: Timestamps;
}

/** POST /stt/transcriptions response: the task plus the request's correlation id. */
export interface CreatedTranscription extends TranscriptionTask {
  readonly requestId: string;
  /** True when the service answered from the idempotency record (same key, same body). */
  readonly replayed: boolean;
  /** The key that was sent (generated once per call unless given). */
  readonly idempotencyKey: string;
}

/** Spec "History list item". */
export interface HistoryItem {
  readonly transcriptionId: string;
  readonly modelId: string;
  readonly title: string;
  readonly status: TaskStatus | (string & {});
  readonly audioDurationMs: bigint;
  readonly detectedLanguage: string | null;
  readonly characters: bigint;
  readonly timestamps: Timestamps;
}

/** GET /stt/transcriptions response. */
export interface HistoryPage {
  readonly page: number;
  readonly pageSize: number;
  readonly total: number;
  readonly totalPage: number;
  readonly items: readonly HistoryItem[];
}

export interface HistoryListParams {
  /** Starts at 1 (default 1). */
  readonly page?: number;
  /** Default 20; at most 100 (ours). */
  readonly pageSize?: number;
}

/** Spec "exportOptions entry". */
export interface ExportOptionsEntry {
  readonly format: DownloadFormat;
  readonly includeSpeakers?: boolean;
  readonly includeTimestamps?: boolean;
  readonly segmentOnSilenceLongerThanS?: number;
  readonly maxSegmentDurationS?: number;
  readonly maxSegmentChars?: number;
  readonly maxCharactersPerLine?: number;
}

/** Spec "options fields". Other names exist (read capabilities); they pass through unchecked. */
export interface TranscriptionOptions {
  readonly rewriteInstruction?: string;
  readonly includeSoundEvents?: boolean;
  readonly separateSpeakers?: boolean;
  readonly maxSpeakerCount?: number;
  readonly speakerMergeSensitivity?: number;
  readonly alignmentLevel?: 'none' | 'word' | 'character';
  readonly inputEncoding?: 'other' | 'pcm_s16le_16';
  readonly samplingTemperature?: number;
  readonly randomSeed?: number;
  readonly separateChannels?: boolean;
  readonly channelResultMode?: 'separate' | 'combined';
  readonly entityCategories?: readonly string[];
  readonly redactCategories?: readonly string[];
  readonly redactionStyle?: 'redact' | 'replace' | 'mask';
  readonly removeDisfluencies?: boolean;
  readonly identifyConversationRoles?: boolean;
  readonly vocabularyHints?: readonly string[];
  readonly processingContentStorage?: boolean;
  readonly exportFormats?: readonly DownloadFormat[];
  readonly exportOptions?: readonly ExportOptionsEntry[];
  readonly notifyOnCompletion?: boolean;
  readonly notifyUrl?: string;
  readonly clientMetadata?: Readonly<Record<string, unknown>>;
  /** Write-only HMAC secret for the completion webhook; never returned. */
  readonly notificationSigningSecret?: string;
  readonly [other: string]: unknown;
}

/** Spec "POST /stt/transcriptions" body. Exactly one of uploadId or mediaUrl. */
export interface CreateTranscriptionParams {
  readonly uploadId?: string;
  readonly mediaUrl?: string;
  readonly audioTrackIndex?: number;
  readonly languageHint?: string;
  readonly title?: string;
  readonly modelId?: string;
  readonly options?: TranscriptionOptions;
  readonly waitForCompletion?: boolean;
  readonly waitTimeoutMs?: number;
}

export type { MediaFailureReason };
