import type { Accounts } from './domain/accounts.js';
import type { Covers } from './domain/covers.js';
import type { RealtimeSessions } from './domain/realtime-sessions.js';
import type { Tasks } from './domain/tasks.js';
import type { TranscriptionService } from './domain/transcription-service.js';
import type { TtsHistory } from './domain/tts-history.js';
import type { Uploads } from './domain/uploads.js';
import type { Voices } from './domain/voices.js';
import type { Clock } from './util/clock.js';
import type { WebhookDispatcher } from './webhooks/delivery.js';

/** The limits a client should know, as configured for this server. */
export interface ConnectionLimits {
  readonly http: { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number; readonly keepAliveTimeoutMs: number; readonly responseStallMs: number; readonly responseStallBytes: number };
  readonly socket: { readonly maxBufferedBytes: number; readonly slowConsumerGraceMs: number; readonly partialSkipBufferedBytes: number; readonly maxConsecutiveErrors: number };
}

/** The in-memory state of one running service, handed to every route module. */
export interface Services {
  readonly clock: Clock;
  readonly accounts: Accounts;
  readonly voices: Voices;
  readonly tts: TtsHistory;
  readonly covers: Covers;
  readonly uploads: Uploads;
  readonly tasks: Tasks;
  readonly transcriptions: TranscriptionService;
  readonly realtime: RealtimeSessions;
  readonly webhooks: WebhookDispatcher;
  /** Connection limits in force (capabilities `limits`, docs/protocol.md "Connection limits"). */
  readonly limits: ConnectionLimits;
  /** The base URL, for URLs the service hands out (socket URL). */
  baseUrl: string;
}
