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
  /** The base URL, for URLs the service hands out (socket URL). */
  baseUrl: string;
}
