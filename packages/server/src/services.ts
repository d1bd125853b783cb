import type { Accounts } from './domain/accounts/accounts.js';
import type { SessionOwners } from './nodes/session-owners.js';
import type { Takeover } from './live/takeover.js';
import type { Covers } from './domain/accounts/covers.js';
import type { RealtimeSessions } from './realtime/session/sessions.js';
import type { Tasks } from './domain/transcriptions/tasks.js';
import type { TranscriptionService } from './domain/transcriptions/service.js';
import type { TtsHistory } from './domain/accounts/tts-history.js';
import type { Uploads } from './domain/transcriptions/uploads.js';
import type { Voices } from './domain/accounts/voices.js';
import type { Store } from './store/store.js';
import type { Clock } from './util/clock.js';
import type { WebhookDispatcher } from './webhooks/delivery.js';

/** The limits a client should know, as configured for this server. */
export interface ConnectionLimits {
  readonly http: { readonly headersTimeoutMs: number; readonly requestTimeoutMs: number; readonly keepAliveTimeoutMs: number; readonly responseStallMs: number; readonly responseStallBytes: number };
  readonly socket: { readonly maxBufferedBytes: number; readonly slowConsumerGraceMs: number; readonly partialSkipBufferedBytes: number; readonly maxConsecutiveErrors: number };
}

/** The domain services of one running service over its store, handed to every route module. */
export interface Services {
  readonly clock: Clock;
  /** Everything the service keeps (store/store.ts): ledgers, voices, deleted covers, tasks, Idempotency-Keys. */
  readonly store: Store;
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
  /** This node's id in the store's node registry (Store.nodes). */
  readonly nodeId: string;
  /** Where the realtime sessions this node does not hold live (forwarding). */
  readonly owners: SessionOwners;
  /** With the live state (Redis): takes a session over from the node that owned it. */
  readonly takeover?: Takeover;
  /** The base URL clients reach the service at (ServerOptions.publicUrl, else the listen URL), for URLs the service hands out (socket URL). */
  baseUrl: string;
}
