/**
 * Uploads, downloads and capabilities. The uploads and download endpoints are ours (spec: "not shown",
 * docs/protocol.md); capabilities' account block beyond plan, rate and balances is ours too.
 */

export interface AudioTrack {
  readonly index: number;
  readonly codec: string;
  readonly channels: number;
  readonly sampleRate: number;
  readonly durationMs: bigint;
}

/** POST /uploads response. `uploadId` goes into transcriptions.create. */
export interface Upload {
  readonly uploadId: string;
  readonly filename: string;
  readonly contentType: string;
  readonly sizeBytes: bigint;
  readonly createdAt: string;
  readonly media: {
    readonly container: string;
    readonly durationMs: bigint;
    /** What audioTrackIndex refers to (spec "audioTrackIndex"). */
    readonly audioTracks: readonly AudioTrack[];
  };
}

/** The segmented_json download (ours). */
export interface SegmentedTranscript {
  readonly transcriptionId: string;
  readonly languageCode: string | null;
  readonly segments: ReadonlyArray<{
    readonly index: number;
    readonly speakerId?: string | null;
    readonly channelIndex: number;
    readonly startMs?: number | null;
    readonly endMs?: number | null;
    readonly text: string;
  }>;
}

/** Spec "Capabilities". requestParameters and realtimeParameters are descriptive documents. */
export interface Capabilities {
  readonly modelId: string;
  readonly modes: Readonly<Record<'batch' | 'realtime', string>>;
  readonly models: ReadonlyArray<{ readonly modelId: string; readonly mode: 'BATCH' | 'REALTIME' | (string & {}); readonly state: string }>;
  readonly requestParameters: Readonly<Record<string, unknown>>;
  readonly realtimeParameters: Readonly<Record<string, unknown>>;
  readonly downloadFormats: readonly string[];
  readonly account: CapabilitiesAccount;
  /**
   * Ours: the connection limits the service enforces (docs/protocol.md "Connection limits" and
   * "Memory and limits"), when it states them: `http` timeouts and unread-answer bounds, `socket`
   * outbound cap (`maxBufferedBytes`) and `slowConsumerGraceMs`.
   */
  readonly limits?: CapabilitiesLimits;
}

/** Numbers by name, as the service states them (values in ms or bytes, named accordingly). */
export interface CapabilitiesLimits {
  readonly http?: Readonly<Record<string, number>>;
  readonly socket?: Readonly<Record<string, number>>;
}

/** Media bytes an account holds against its storage quota (ours, docs/protocol.md "Uploads"). */
export interface StorageUsage {
  readonly usedBytes: bigint;
  readonly quotaBytes: bigint;
}

/** DELETE /uploads/{uploadId} response. */
export interface DeletedUpload {
  readonly uploadId: string;
  readonly storage: StorageUsage;
}

/** Plan, rate, balances and storage; the rest of the block passes through as `extra`. */
export interface CapabilitiesAccount {
  readonly plan: string;
  /** Bytes of uploads (and of fetched media while its task runs) held, and the quota. */
  readonly storage?: StorageUsage;
  readonly rate?: { readonly ratePerMinute: bigint; readonly rateVersion: string };
  readonly balances?: {
    readonly availableCharacters?: bigint;
    readonly reservedCharacters?: bigint;
    readonly monthlyCharacters?: { readonly total: bigint; readonly used: bigint };
    readonly orderCharacters?: { readonly total: bigint; readonly used: bigint };
  };
  readonly extra: Readonly<Record<string, unknown>>;
}
