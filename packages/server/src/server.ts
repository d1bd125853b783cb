import { randomBytes } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { API_PREFIX, REALTIME, SOCKET_DEFAULTS } from '@soundclone/core/internal';
import { ACCOUNT_LIMITS, BATCH_LEASES, HTTP_LIMITS, LIVE_STATE, NODE_ADMISSION, NODES, SERVER_LIMITS, WEBHOOK_DELIVERY } from './protocol.js';
import { answerHealth, isHealthCheck } from './nodes/health.js';
import { NodeMembership, type MembershipTiming } from './nodes/membership.js';
import { SessionOwners } from './nodes/session-owners.js';
import { upgradeElsewhere } from './nodes/socket-elsewhere.js';
import { checkRedisUrl, LiveStateError } from './live/live-error.js';
import type { LiveStore, LiveTiming } from './live/live-store.js';
import { Takeover } from './live/takeover.js';
import { Accounts, initialLedger, type AccountOverrides } from './domain/accounts/accounts.js';
import { Covers } from './domain/accounts/covers.js';
import { TtsHistory } from './domain/accounts/tts-history.js';
import { Voices } from './domain/accounts/voices.js';
import { Tasks } from './domain/transcriptions/tasks.js';
import { DEFAULT_TIMING, TranscriptionRunner, type TaskTiming } from './domain/transcriptions/runner.js';
import { BatchWorker, type LeaseTiming } from './domain/transcriptions/batch-worker.js';
import { TranscriptionService } from './domain/transcriptions/service.js';
import { Uploads } from './domain/transcriptions/uploads.js';
import { Faults } from './http/faults.js';
import { answerClientError, refuseBlankLinePreamble } from './http/parser-refusals.js';
import { RequestPipeline, type RequestLogEntry } from './http/pipeline.js';
import { Router } from './http/router.js';
import type { SupplementPolicy } from './realtime/session/audio.js';
import type { AudioObserver } from './realtime/session/audio-observer.js';
import { RealtimeSessions, type RealtimeLimits, type RealtimeTiming } from './realtime/session/sessions.js';
import type { SocketConfig, SocketLogEntry } from './realtime/socket/config.js';
import { SocketServer } from './realtime/socket/server.js';
import type { GuardOptions } from './media/guarded-fetch.js';
import type { PocketSphinxOptions } from './recognition/pocketsphinx/pocketsphinx-recognizer.js';
import type { Recognizer } from './recognition/recognizer.js';
import { chooseRecognizer, type RecognizerChoice } from './recognition/select.js';
import { accountRoutes } from './routes/account-routes.js';
import { sttRoutes } from './routes/stt-routes.js';
import type { Services } from './services.js';
import { JournalStore, type StateReport } from './store/journal/journal-store.js';
import { MemoryStore } from './store/memory-store.js';
import { normalizePublicUrl } from './public-url.js';
import type { Store } from './store/store.js';
import { sleep, systemClock, withTimers, type Clock, type TimedClock } from './util/clock.js';
import { WebhookDispatcher } from './webhooks/delivery.js';

export interface ServerOptions {
  /** 0 picks a free port. */
  readonly port?: number;
  readonly host?: string;
  /** One account per key. */
  readonly accessKeys: readonly string[];
  readonly accountOverrides?: Readonly<Record<string, AccountOverrides>>;
  /**
   * TEST-ONLY: "host:port" destinations that mediaUrl and notifyUrl may reach although the address
   * policy refuses them (e.g. "127.0.0.1:9999"). Exactly that host and port; redirects elsewhere are
   * checked as usual. Off by default.
   */
  readonly allowMediaHosts?: readonly string[];
  /**
   * The speech recognizer: a Recognizer object, or by name. Default `deterministic` (the
   * EnergyRecognizer: same audio, same made-up words, which tests assert exactly); `auto` uses
   * PocketSphinx when installed (the CLI's default); `pocketsphinx` insists, and startServer rejects
   * with RecognizerError RECOGNIZER_UNAVAILABLE when it cannot run.
   */
  readonly recognizer?: Recognizer | RecognizerChoice;
  /**
   * Realtime sessions one account may have open (not finished, recovery window not passed) at once; past it creation is
   * 429 RATE_LIMITED, reason ACCOUNT_SESSION_LIMIT. Default ACCOUNT_LIMITS.defaultMaxOpenSessions (8).
   */
  readonly maxRealtimeSessionsPerAccount?: number;
  /**
   * Realtime sessions this node keeps live at once, every account's (not finished, recovery window not
   * passed); past it creation is 503 SERVICE_UNAVAILABLE, reason NODE_FULL, Retry-After 1: a retry
   * through the balancer reaches another node. Default NODE_ADMISSION.defaultMaxLiveSessions (1,000).
   */
  readonly maxRealtimeSessionsPerNode?: number;
  /**
   * PocketSphinx settings (model directory, decoder arguments, pool size, per-account share of it
   * `maxDecodersPerAccount`, partial interval).
   */
  readonly pocketsphinx?: PocketSphinxOptions;
  /**
   * The service's time (default the system clock). With `setTimer` too, the recovery window, the end
   * of abandoned sessions, rotations on a schedule, supplement waits and batch task phases follow it
   * (the testing kit's virtual time); without, `now` alone is replaced and timers stay real.
   * Heartbeats, network timeouts, node heartbeats and leases always keep real time (util/clock.ts).
   */
  readonly clock?: Clock;
  /** Batch phase durations (ms); hold a task non-terminal with a long processingMs. */
  readonly taskTiming?: Partial<TaskTiming>;
  /**
   * With databaseUrl: how long a batch task's lease holds, how often the node extends the leases of
   * its tasks and looks for tasks to take over (ms; defaults protocol.ts BATCH_LEASES, docs/protocol.md
   * "Batch leases"). Tests shorten them.
   */
  readonly batchLeases?: Partial<LeaseTiming>;
  /**
   * Realtime: supplementWaitMs (the longest a finish waits for pending supplements; default and most
   * SERVER_LIMITS.finishSupplementWaitMs, the spec's 8 s), recoveryWindowMs (default protocol.ts REALTIME.recoveryWindowMs), and
   * the rotation schedule rotateEveryMs / rotateEverySamples (off by default), and the per-socket
   * lifetime socketLifetimeMs (off by default; docs/protocol.md "Socket lifetime"), and abandonAfterMs
   * (a session with no socket and no finish this long after its recovery window passed is finished by
   * the service, PARTIAL; default ABANDONED_SESSIONS.afterWindowMs, five minutes; docs/protocol.md
   * "Abandoned sessions").
   */
  readonly realtimeTiming?: Partial<Omit<RealtimeTiming, 'retainAudioMaxSamples'>>;
  /** HTTP connection limits: timeouts and unread-response bounds (defaults: protocol.ts HTTP_LIMITS). */
  readonly http?: Partial<HttpLimits>;
  /** Realtime socket settings (defaults: protocol.ts SOCKET_DEFAULTS). */
  readonly socket?: Partial<SocketConfig>;
  /**
   * TEST-ONLY: keep up to this many received samples per realtime session and serve them raw at
   * GET /stt/realtime/sessions/{id}/audio, so tests can check stored audio bit for bit. Off by default.
   */
  readonly retainRealtimeAudioSamples?: number;
  /**
   * Test hook: which realtime supplements arrive at once, after a delay, or are withheld
   * (faults.socket rules take precedence).
   */
  readonly supplementPolicy?: SupplementPolicy;
  /**
   * Told synchronously after each audio frame a realtime session on this node accepts, with the
   * session's id and its received samples (realtime/session/audio-observer.ts): where a test acts at
   * an exact point of a stream. Skip frames are not audio and are not reported.
   */
  readonly onAudio?: AudioObserver;
  /** Delays before webhook retries (ms); the number of entries is the number of retries. */
  readonly webhookRetryDelaysMs?: readonly number[];
  /** Host-name resolver for mediaUrl and notifyUrl (tests point names at chosen addresses). */
  readonly resolveHost?: GuardOptions['resolve'];
  readonly mediaFetchTimeoutMs?: number;
  /**
   * Bytes of media one account may hold at once: its uploads until deleted, plus media fetched from a
   * mediaUrl while its task runs (default SERVER_LIMITS.uploadQuotaBytesDefault, 512 MiB). Past it: 413
   * STORAGE_QUOTA_EXCEEDED. Tests set it small.
   */
  readonly uploadQuotaBytes?: number;
  /** Seeded data sizes per account. */
  readonly ttsHistorySeedCount?: number;
  readonly coverSeedCount?: number;
  /**
   * Keep the state across restarts in this directory (created if missing): accounts' character
   * ledgers and periods, voices, saved designs, deleted covers, transcriptions with their transcripts
   * and billing, transcription Idempotency-Keys (docs/protocol.md "Local state"). One process at a time: startServer rejects with
   * StateStoreError STATE_LOCKED while another holds it, STATE_CORRUPT for a damaged journal. Without
   * it, everything lives in memory and is gone at close.
   */
  readonly dataDir?: string;
  /**
   * TEST-ONLY: keep everything in this store instead of the in-memory engine, e.g. a real engine
   * wrapped to answer late or fail as a database engine can. startServer seeds it and closes it at
   * close(). Not together with dataDir. @hidden The store interface is the service's own, not a
   * published one.
   */
  readonly store?: Store;
  /**
   * The address clients reach this service at, when that is not its listen address (a load balancer
   * or proxy in front): the realtime socket URLs it hands out are built on it. An absolute http(s)
   * URL (a path is kept, trailing slashes dropped; no query, fragment or credentials), else startServer
   * throws a TypeError. Default: the listen address, `RunningServer.url`.
   */
  readonly publicUrl?: string;
  /**
   * Keep the state in PostgreSQL instead (`postgres://user:password@host:port/database`): the same as
   * dataDir keeps, plus an append-only ledger of every change of an account's Characters; several
   * servers can share one database (docs/protocol.md "PostgreSQL engine"). Migrations are applied at
   * start. startServer rejects with StoreError STORE_UNAVAILABLE when the database cannot be reached,
   * STORE_SCHEMA_MISMATCH when a newer server migrated it. While the database is unreachable, requests
   * that need it answer 503 SERVICE_UNAVAILABLE with Retry-After. Not with dataDir.
   */
  readonly databaseUrl?: string;
  /**
   * Where the other nodes sharing the database reach this one, when that is not its listen address
   * (`http://host:port`, the default); recorded in the store's node registry and used to forward
   * requests about the realtime sessions this node holds (docs/protocol.md "Several nodes").
   */
  readonly internalUrl?: string;
  /** This node's id in the registry (default: random per start, `node_…`). */
  readonly nodeId?: string;
  /**
   * Node heartbeat and sweeper timing (ms): heartbeatMs (default NODES.heartbeatMs), staleAfterMs (a
   * node silent this long is dead and its realtime sessions are failed; NODES.staleAfterMs),
   * sweepEveryMs (NODES.sweepEveryMs). Tests make them short.
   */
  readonly nodeTiming?: Partial<MembershipTiming>;
  /**
   * Keep the live state of realtime sessions in Redis (`redis://host:port`; needs databaseUrl): each
   * session is leased to one node, and what it received and committed is made durable there before it
   * is acknowledged, so when its node dies another node takes it over and the client resumes there
   * with nothing lost (docs/protocol.md "Several nodes"). startServer rejects with LiveStateError
   * REDIS_NEEDS_DATABASE without databaseUrl, REDIS_UNAVAILABLE when Redis does not answer.
   */
  readonly redisUrl?: string;
  /** With redisUrl: the lease timing (ms; defaults protocol.ts LIVE_STATE). Tests make them short. */
  readonly liveTiming?: Partial<LiveTiming>;
}

export interface DrainOptions {
  /** How long GET /health answers 503 while the node still serves, before it closes (default NODES.drainGraceMs). */
  readonly graceMs?: number;
}

export type HttpLimits = { readonly [K in keyof typeof HTTP_LIMITS]: number };

export type { RequestLogEntry };

export interface RunningServer {
  /** Base URL without the API prefix, e.g. http://127.0.0.1:PORT: where this node listens. */
  readonly url: string;
  /** The base URL the service hands out to clients: ServerOptions.publicUrl, normalized, or `url`. */
  readonly publicUrl: string;
  readonly port: number;
  readonly faults: Faults;
  /** The last 1,000 requests, oldest first. */
  readonly requests: readonly RequestLogEntry[];
  /** The realtime socket endpoint: open sockets now and the last 1,000 socket events. */
  readonly sockets: { readonly size: number; readonly log: readonly SocketLogEntry[] };
  /**
   * The domain objects and their store (tests inspect ledgers, sessions, webhook deliveries). @hidden The service's
   * own domain objects, not an interface: they change with the service.
   */
  readonly services: Services;
  /** The recognizer in use, and why `auto` fell back to the deterministic one (when it did). */
  readonly recognizer: { readonly id: string; readonly notice?: string };
  /** With a dataDir: where the state is kept and what the start found there. */
  readonly state?: StateReport;
  /** This node in the store's registry: its id, where the other nodes reach it, and whether it drains. */
  readonly node: { readonly id: string; readonly internalUrl: string; readonly draining: boolean };
  /**
   * Leaves gracefully (SIGTERM): GET /health answers 503 at once and the registry says draining, new
   * realtime sessions are refused (503 NODE_DRAINING), batch work is handed back; after `graceMs`
   * (the balancer has taken the node out) live sockets get close 4503 and the server closes as close()
   * does. Resolves when closed.
   */
  drain(options?: DrainOptions): Promise<void>;
  /** Stops at once: sockets get 4503, the HTTP server and the store close. Idempotent. */
  close(): Promise<void>;
}

/**
 * Batch work this node holds goes back to the queue on a drain, when the transcription service can
 * hand it back (a `drain()` of its own); otherwise it simply stops with the process.
 */
/** maxRealtimeSessionsPerAccount, checked, or its default. */
function openSessionLimit(value: number | undefined): number {
  if (value === undefined) return ACCOUNT_LIMITS.defaultMaxOpenSessions;
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`maxRealtimeSessionsPerAccount must be a whole number of at least 1 (got ${value})`);
  return value;
}

/** maxRealtimeSessionsPerNode, checked, or its default. */
function liveSessionLimit(value: number | undefined): number {
  if (value === undefined) return NODE_ADMISSION.defaultMaxLiveSessions;
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`maxRealtimeSessionsPerNode must be a whole number of at least 1 (got ${value})`);
  return value;
}

/** Starts the reference service. Resolves once it listens. */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  if (options.accessKeys.length === 0) throw new TypeError('startServer needs at least one access key');
  const maxOpenSessionsPerAccount = openSessionLimit(options.maxRealtimeSessionsPerAccount);
  const maxLiveSessionsPerNode = liveSessionLimit(options.maxRealtimeSessionsPerNode);
  const abandonAfterMs = options.realtimeTiming?.abandonAfterMs;
  if (abandonAfterMs !== undefined && (!Number.isSafeInteger(abandonAfterMs) || abandonAfterMs < 0)) {
    throw new TypeError(`realtimeTiming.abandonAfterMs must be a whole number of milliseconds, at least 0 (got ${abandonAfterMs})`);
  }
  const supplementWaitMs = options.realtimeTiming?.supplementWaitMs;
  if (supplementWaitMs !== undefined && (!Number.isSafeInteger(supplementWaitMs) || supplementWaitMs < 0 || supplementWaitMs > SERVER_LIMITS.finishSupplementWaitMs)) {
    throw new TypeError(`realtimeTiming.supplementWaitMs must be a whole number of milliseconds in [0, ${SERVER_LIMITS.finishSupplementWaitMs}], the spec's longest finish wait (got ${supplementWaitMs})`);
  }
  const publicUrl = options.publicUrl === undefined ? undefined : normalizePublicUrl(options.publicUrl);
  const lifetimeMs = options.realtimeTiming?.socketLifetimeMs;
  // Timers take at most 2^31 - 1 ms; below 4 ms the notice (a quarter) would round to nothing.
  if (lifetimeMs !== undefined && (!Number.isSafeInteger(lifetimeMs) || lifetimeMs < 4 || lifetimeMs > 2_147_483_647)) {
    throw new TypeError(`realtimeTiming.socketLifetimeMs must be a whole number of milliseconds in [4, 2147483647] (got ${lifetimeMs})`);
  }
  if (options.dataDir !== undefined && options.databaseUrl !== undefined) {
    throw new TypeError('startServer takes dataDir or databaseUrl, not both: the state is kept in one place');
  }
  if (options.redisUrl !== undefined) {
    checkRedisUrl(options.redisUrl);
    if (options.databaseUrl === undefined) {
      throw new LiveStateError('REDIS_NEEDS_DATABASE', 'startServer takes redisUrl only with databaseUrl: Redis holds what a realtime session is doing now, the database what it did and what it costs');
    }
  }
  const clock = withTimers(options.clock ?? systemClock);
  // First, before anything that costs (a recognizer): a locked or damaged directory, or a database that
  // cannot be reached, is refused at once.
  if (options.store !== undefined && options.dataDir !== undefined) throw new TypeError('startServer takes a store or a dataDir, not both');
  const journal = options.dataDir !== undefined ? JournalStore.open(options.dataDir) : undefined;
  // node-postgres is loaded only by a server that uses it.
  const nodeId = options.nodeId ?? `node_${randomBytes(6).toString('hex')}`;
  const internalUrl = options.internalUrl === undefined ? undefined : normalizePublicUrl(options.internalUrl, 'internalUrl');
  const store: Store = journal ?? options.store ?? (options.databaseUrl !== undefined ? await (await import('./store/pg/pg-store.js')).PgStore.open(options.databaseUrl, { nodeId }) : new MemoryStore());
  let live: LiveStore | undefined;
  try {
    // ioredis is loaded only by a server that uses it.
    if (options.redisUrl !== undefined) {
      const timing: LiveTiming = {
        leaseTtlMs: options.liveTiming?.leaseTtlMs ?? LIVE_STATE.leaseTtlMs,
        renewEveryMs: options.liveTiming?.renewEveryMs ?? LIVE_STATE.renewEveryMs,
        lostAfterMs: options.liveTiming?.lostAfterMs ?? LIVE_STATE.lostAfterMs,
      };
      live = await (await import('./live/live-store.js')).LiveStore.open(options.redisUrl, nodeId, timing);
    }
    return await start(options, clock, store, journal, { maxOpenSessionsPerAccount, maxLiveSessionsPerNode }, publicUrl, { id: nodeId, internalUrl, live });
  } catch (error) {
    await live?.close();
    await store.close();
    throw error;
  }
}

async function start(
  options: ServerOptions, clock: TimedClock, store: Store, journal: JournalStore | undefined, realtimeLimits: RealtimeLimits, publicUrl: string | undefined,
  node: { readonly id: string; readonly internalUrl: string | undefined; readonly live: LiveStore | undefined },
): Promise<RunningServer> {
  const lifetime = new AbortController();
  // Every sleeping task and waiting request listens to the lifetime signal; there is no leak to warn of.
  setMaxListeners(0, lifetime.signal);
  const accounts = new Accounts(options.accessKeys, options.accountOverrides ?? {});
  const tts = new TtsHistory(accounts.all, options.ttsHistorySeedCount ?? 2600);
  // Seeded TTS items count as this period's usage (initialLedger); a kept ledger wins over the seeded one.
  const now = clock.now();
  await store.seed({ ledgers: accounts.all.map((a) => initialLedger(a, now, BigInt(tts.usedChars(a)))), ...Voices.seedFor(accounts.all) });
  // Socket tokens verify on every node sharing the store.
  const tokenSecret = await store.nodes.socketTokenSecret();
  const nodeTiming: MembershipTiming = {
    heartbeatMs: options.nodeTiming?.heartbeatMs ?? NODES.heartbeatMs,
    staleAfterMs: options.nodeTiming?.staleAfterMs ?? NODES.staleAfterMs,
    sweepEveryMs: options.nodeTiming?.sweepEveryMs ?? NODES.sweepEveryMs,
  };
  const owners = new SessionOwners(store, node.id, nodeTiming.staleAfterMs, node.live);
  const guard = { allowHosts: new Set(options.allowMediaHosts ?? []), ...(options.resolveHost ? { resolve: options.resolveHost } : {}) };
  const tasks = new Tasks(store);
  const quota = options.uploadQuotaBytes ?? SERVER_LIMITS.uploadQuotaBytesDefault;
  if (!Number.isSafeInteger(quota) || quota < 0) throw new TypeError(`uploadQuotaBytes must be a non-negative integer, got ${quota}`);
  const uploads = new Uploads(store, quota);
  const chosen = chooseRecognizer(options.recognizer, options.pocketsphinx);
  const recognizer = chosen.recognizer;
  // A shared store (PostgreSQL) may hold deliveries other nodes added or left behind: look for them too.
  const webhooks = new WebhookDispatcher(store, guard, options.webhookRetryDelaysMs ?? WEBHOOK_DELIVERY.defaultRetryDelaysMs, clock, store.engine === 'postgres' ? WEBHOOK_DELIVERY.sharedStorePollMs : undefined);
  const runner = new TranscriptionRunner(store, tasks, uploads, recognizer, { ...DEFAULT_TIMING, ...options.taskTiming }, clock);
  const batch = new BatchWorker(store, runner, { ...BATCH_LEASES, ...options.batchLeases }, store.engine === 'postgres', lifetime.signal);
  const faults = new Faults();
  const supplementPolicy: SupplementPolicy = (line, kind, context) =>
    faults.socket.supplementDecision(context.sessionId, kind) ?? options.supplementPolicy?.(line, kind, context) ?? 'now';
  const httpLimits: HttpLimits = { ...HTTP_LIMITS, ...options.http };
  const socketConfig: SocketConfig = { ...SOCKET_DEFAULTS, ...options.socket };
  const realtime = new RealtimeSessions(
    { nodeId: node.id, tokenSecret, ...(node.live !== undefined ? { live: node.live } : {}) },
    store,
    recognizer,
    {
      supplementWaitMs: SERVER_LIMITS.finishSupplementWaitMs,
      recoveryWindowMs: REALTIME.recoveryWindowMs,
      ...options.realtimeTiming,
      ...(options.retainRealtimeAudioSamples !== undefined ? { retainAudioMaxSamples: options.retainRealtimeAudioSamples } : {}),
    },
    clock,
    supplementPolicy,
    realtimeLimits,
    { ...(options.onAudio !== undefined ? { onAudio: options.onAudio } : {}), tokens: faults.socket.tokens },
  );
  const takeover = node.live !== undefined ? new Takeover(node.live, store, realtime, (id) => accounts.byId(id), () => clock.now()) : undefined;
  const services: Services = {
    clock,
    store,
    limits: {
      http: {
        headersTimeoutMs: httpLimits.headersTimeoutMs,
        requestTimeoutMs: httpLimits.requestTimeoutMs,
        keepAliveTimeoutMs: httpLimits.keepAliveTimeoutMs,
        responseStallMs: httpLimits.responseStallMs,
        responseStallBytes: httpLimits.responseStallBytes,
      },
      socket: {
        maxBufferedBytes: socketConfig.maxBufferedBytes,
        slowConsumerGraceMs: socketConfig.slowConsumerGraceMs,
        partialSkipBufferedBytes: socketConfig.partialSkipBufferedBytes,
        maxConsecutiveErrors: socketConfig.maxConsecutiveErrors,
      },
    },
    accounts,
    voices: new Voices(store),
    tts,
    covers: new Covers(accounts.all, options.coverSeedCount ?? 600, store),
    uploads,
    tasks,
    transcriptions: new TranscriptionService(store, tasks, uploads, batch, { ...guard, timeoutMs: options.mediaFetchTimeoutMs ?? 15_000 }, clock, lifetime.signal),
    realtime,
    webhooks,
    nodeId: node.id,
    owners,
    ...(takeover !== undefined ? { takeover } : {}),
    baseUrl: '',
  };
  // Tasks that were running when the last process stopped (kept state only). PostgreSQL fails none:
  // their leases pass and another node, or this one, takes them over (docs/protocol.md "Batch leases").
  if (journal !== undefined) await store.recoverInterrupted(accounts.all.map((a) => a.id), clock.now());
  const router = new Router();
  for (const route of [...accountRoutes(services), ...sttRoutes(services)]) router.add(route);
  const pipeline = new RequestPipeline({
    router,
    faults,
    authenticate: (key) => accounts.authenticate(key),
    responseLimits: { maxHeldBytes: httpLimits.responseMaxHeldBytes, stallMs: httpLimits.responseStallMs, stallBytes: httpLimits.responseStallBytes },
    signal: lifetime.signal,
  });

  // Made once the listen address is known (its default internal URL); until then /health says starting.
  let membership: NodeMembership | undefined;
  const connections = new Set<Socket>();
  const server = createServer(
    {
      headersTimeout: httpLimits.headersTimeoutMs,
      requestTimeout: httpLimits.requestTimeoutMs,
      keepAliveTimeout: httpLimits.keepAliveTimeoutMs,
      connectionsCheckingInterval: httpLimits.timeoutCheckIntervalMs,
    },
    // GET /health, outside the API prefix and the request pipeline (no admission, no authentication).
    (req, res) => {
      if (isHealthCheck(req)) void answerHealth(req, res, membership);
      else pipeline.listener(req, res);
    },
  );
  server.on('connection', (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    refuseBlankLinePreamble(socket);
  });
  server.on('clientError', answerClientError);
  const sockets = new SocketServer({ accounts, realtime: services.realtime, faults, config: socketConfig, elsewhere: upgradeElsewhere(owners, node.id, () => clock.now(), takeover) });
  sockets.attachTo(server);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
    });
  } catch (error) {
    lifetime.abort();
    if (chosen.owned) recognizer.close?.();
    throw error;
  }
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `http://${host}:${address.port}`;
  services.baseUrl = publicUrl ?? url;
  membership = new NodeMembership({ id: node.id, internalUrl: node.internalUrl ?? url, publicUrl: services.baseUrl }, store, nodeTiming, clock);
  const joined = membership;
  let closing: Promise<void> | undefined;
  // `recycle` (a drain): the sessions' sockets are recycled (socket.recycle, 4002) rather than closed 4503.
  const shutdown = (recycle: boolean): Promise<void> => {
    closing ??= (async () => {
      lifetime.abort();
      // With the live state, the sessions go to other nodes first (their leases let go).
      await services.realtime.handOver({ recycle });
      await sockets.close();
      services.realtime.dispose();
      await batch.close();
      await webhooks.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of connections) socket.destroy();
      });
      if (chosen.owned) recognizer.close?.();
      // Leaves the registry; what this node still held is failed (its audio ends here), unless the live
      // state keeps it: then its leases are let go, and other nodes take the sessions over at once.
      await joined.stop();
      await node.live?.close();
      await store.close();
    })();
    return closing;
  };
  const close = (): Promise<void> => shutdown(false);
  try {
    // On a store other nodes may share, this node also fails the sessions of nodes that died (with the
    // live state: takes them over, so they end here if nobody comes back for them).
    await joined.start({ shared: store.engine === 'postgres', failOrphans: node.live === undefined, ...(takeover !== undefined ? { adopt: (row) => takeover.adoptOrphan(row), recycleTunnels: (ids) => void sockets.recycleForwardedBy(ids) } : {}) });
  } catch (error) {
    await close();
    throw error;
  }

  return {
    url,
    publicUrl: services.baseUrl,
    port: address.port,
    faults,
    requests: pipeline.requests,
    services,
    sockets,
    recognizer: { id: recognizer.id, ...(chosen.notice !== undefined ? { notice: chosen.notice } : {}) },
    ...(journal !== undefined ? { state: journal.report } : {}),
    node: {
      id: node.id,
      internalUrl: joined.node.internalUrl,
      get draining() {
        return joined.draining;
      },
    },
    drain: async (drainOptions: DrainOptions = {}) => {
      // Health says 503 and new sessions are refused at once; the registry learns it as the store answers.
      const marked = joined.drain();
      services.realtime.drain();
      await marked;
      await services.transcriptions.handBackBatchWork();
      await sleep(drainOptions.graceMs ?? NODES.drainGraceMs, lifetime.signal);
      // With the live state the balancer has taken this node out by now: each session's next socket
      // reaches another node, which takes it over at once.
      await shutdown(true);
    },
    close,
  };
}

export { API_PREFIX };
