import { ApiError } from '../../errors.js';
import { MODELS, REALTIME, REALTIME_SPENDING } from '@soundclone/core/internal';
import { ABANDONED_SESSIONS, ACCOUNT_LIMITS, ID_PREFIXES, NODE_ADMISSION, RECOGNIZER_REFUSALS, SERVER_LIMITS } from '../../protocol.js';
import { isRecognizerError } from '../../recognition/errors.js';
import type { Recognizer, RecognizerStream } from '../../recognition/recognizer.js';
import { dec } from '../../util/decimal.js';
import { randomId } from '../../util/ids.js';
import type { TimedClock } from '../../util/clock.js';
import type { Account } from '../../domain/accounts/accounts.js';
import { available, realtimeMinimum, receivedDurationMs } from '../../domain/accounts/billing.js';
import { isExistingKey, isRefusal, isStoreError, type IdempotencyRow, type NewIdempotencyKey, type RealtimeSettlement, type Store, type TaskRow } from '../../store/store.js';
import { IdempotencyStore, idempotencyConflict } from '../../domain/idempotency.js';
import type { RealtimeCreateRequest } from './options.js';
import { RecoveryWindow } from './recovery-window.js';
import { AbandonedSweep, isAbandoned, settleUntilStored, sweepIntervalMs } from './abandoned.js';
import { StoreSpendingGuard } from './spending.js';
import { tellObserver, type AudioObserver } from './audio-observer.js';
import { tokenSessionId, type TokenAging } from './token-aging.js';
import { SessionAudio, type FeedOutcome, type ResumeOutcome, type SessionNotice, type SupplementKind, type SupplementPolicy } from './audio.js';
import { initialMeta, LiveSession, type LiveSnapshot } from '../../live/live-session.js';
import { chargeWorkTurn, nextWorkTurn, workTurnOpen } from '../work-turns.js';
import { capturedFrom, insufficient, liveUnavailable, nodeFull, sessionLimit } from './refusals.js';
import { issueSocketToken, verifySocketToken } from './socket-token.js';
import type { AttachOutcome, CreateOutcome, RealtimeLimits, RealtimeNode, RealtimeTiming, Session } from './session-types.js';
import { realtimeTranscript, sessionView } from './view.js';
import { newTask, type Task } from '../../domain/transcriptions/tasks.js';

export type { AttachOutcome, CreateOutcome, RealtimeLimits, RealtimeNode, RealtimeTiming, Session } from './session-types.js';

/** A key's outcome: the session this node made, or the one a key kept in the store names. */
type Made = { readonly session: Session } | { readonly sessionId: string; readonly taskId: string };

/**
 * Realtime sessions over REST (spec "Real-time session", "finish"; creation is ours). A session owns
 * its History task (modelId svc_stt_realtime_v1), PROCESSING while open. Finish settles exactly once:
 * the first call does the work, every later or concurrent call awaits and returns the same result.
 */
export class RealtimeSessions {
  private readonly sessions = new Map<string, Session>();
  /**
   * In front of the store: this node's concurrent creates with one key share one outcome here; a key
   * another node (or an earlier run) took is found in the store, and a create racing one on another
   * node learns of it from openRealtime (ExistingKey).
   */
  private readonly idempotency = new IdempotencyStore<Made>(async (scope, key) => {
    const kept = await this.store.idempotency.find(scope, key);
    return kept === undefined ? undefined : { bodyHash: kept.bodyHash, value: keptSession(kept) };
  });
  /** Draining: new sessions are refused (503, details.reason NODE_DRAINING); live ones go on. */
  private draining = false;
  /** Ends sessions nobody will finish (abandoned.ts); runs once the first session is made. */
  private readonly abandonedSweep: AbandonedSweep;
  /**
   * Sessions whose recovery window passed and that no finish had begun at the time: the only ones the
   * sweep looks at (not every session this node ever held). Left as soon as a finish begins.
   */
  private readonly expiredUnfinished = new Set<string>();
  /** Aborted at shutdown: ends the waits of abandoned settlements that retry (settleUntilStored). */
  private readonly lifetime = new AbortController();

  constructor(
    private readonly node: RealtimeNode,
    private readonly store: Store,
    private readonly recognizer: Recognizer,
    private readonly timing: RealtimeTiming,
    private readonly clock: TimedClock,
    private readonly supplementPolicy: SupplementPolicy = () => 'now',
    private readonly limits: RealtimeLimits = { maxOpenSessionsPerAccount: ACCOUNT_LIMITS.defaultMaxOpenSessions },
    /** Test hooks: told after each accepted frame (ServerOptions.onAudio); sessions whose tokens expired early (faults.socket). */
    private readonly hooks: { readonly onAudio?: AudioObserver; readonly tokens?: TokenAging } = {},
  ) {
    this.abandonedSweep = new AbandonedSweep(sweepIntervalMs(this.abandonAfterMs), () => void this.endAbandoned(), clock);
  }

  /** How long after its recovery window passed an untouched session is ended (RealtimeTiming.abandonAfterMs). */
  get abandonAfterMs(): number {
    return this.timing.abandonAfterMs ?? ABANDONED_SESSIONS.afterWindowMs;
  }

  /** Sessions on this node that can still take audio, every account's (RealtimeLimits.maxLiveSessionsPerNode counts these). */
  liveSessions(): number {
    let live = 0;
    for (const session of this.sessions.values()) if (session.finishing === undefined && !session.recovery.expired) live += 1;
    return live;
  }

  /** The account's sessions that can still take audio (RealtimeLimits.maxOpenSessionsPerAccount counts these). */
  openSessions(account: Account): number {
    let open = 0;
    for (const session of this.sessions.values()) {
      if (session.ownerId === account.id && session.finishing === undefined && !session.recovery.expired) open += 1;
    }
    return open;
  }

  /**
   * The limits a client should know (capabilities): decoder counts only for a recogniser with a
   * bounded pool (PocketSphinx), null otherwise.
   */
  async limitsView(account: Account): Promise<Record<string, unknown>> {
    const pool = this.recognizer as Partial<{ maxDecoders: number; maxDecodersPerAccount: number }>;
    return {
      minimumAvailableCharacters: dec(realtimeMinimum()),
      maxOpenSessionsPerAccount: this.limits.maxOpenSessionsPerAccount,
      // Every node's (the store counts them); this node's alone could say less.
      openSessions: Math.max(this.openSessions(account), await this.store.nodes.openSessions(account.id)),
      maxDecoders: typeof pool.maxDecoders === 'number' ? pool.maxDecoders : null,
      maxDecodersPerAccount: typeof pool.maxDecodersPerAccount === 'number' ? pool.maxDecodersPerAccount : null,
    };
  }

  /**
   * Same key, same body: the first create's session (replayed); another body: 409 IDEMPOTENCY_CONFLICT.
   * The key is kept in the store with the session, so every node sharing it knows the key.
   */
  async create(account: Account, body: Record<string, unknown>, request: RealtimeCreateRequest, idempotencyKey: string, requestId: string): Promise<CreateOutcome> {
    const scope = `${account.id}/realtime`;
    const { value, replayed } = await this.idempotency.run(scope, idempotencyKey, body, (bodyHash) =>
      this.open(account, request, requestId, { scope, key: idempotencyKey, bodyHash, requestId }),
    );
    if ('session' in value) return { kind: 'here', session: value.session, replayed };
    const local = this.find(account, value.sessionId);
    return local !== undefined ? { kind: 'here', session: local, replayed: true } : { kind: 'elsewhere', sessionId: value.sessionId, taskId: value.taskId };
  }

  /** The node drains: from now on creation is refused with 503 SERVICE_UNAVAILABLE, reason NODE_DRAINING. */
  drain(): void {
    this.draining = true;
  }

  private async open(account: Account, request: RealtimeCreateRequest, requestId: string, key: NewIdempotencyKey): Promise<Made> {
    if (this.draining) {
      throw new ApiError('SERVICE_UNAVAILABLE', 'this server is shutting down and takes no new realtime sessions; try again (another server takes it)', { reason: NODE_DRAINING_REASON }, { retryAfterSec: 1 });
    }
    // Refused unless the balance covers the shortest session worth opening (REALTIME_SPENDING.minimumMs);
    // after that, the spending guard keeps the audio within what is left (docs/protocol.md). Asked
    // here first so the refusals come in their order; openRealtime checks it again as it creates.
    const minimum = realtimeMinimum();
    const ledger = await this.store.accounts.ledger(account.id);
    const left = ledger === undefined ? 0n : available(ledger);
    if (left < minimum) throw insufficient(minimum, left);
    const max = this.limits.maxOpenSessionsPerAccount;
    // This node's own count first, before a recogniser stream is opened; openRealtime counts every
    // node's under the account's lock.
    if (this.openSessions(account) >= max) throw sessionLimit(max);
    // This node's own capacity last: the refusals above hold on every node, a retry elsewhere cannot
    // help them; this one it can (the balancer sends the retry to another node).
    const perNode = this.limits.maxLiveSessionsPerNode ?? NODE_ADMISSION.defaultMaxLiveSessions;
    if (this.liveSessions() >= perNode) throw nodeFull(perNode);
    // The recogniser first: a refusal (no free decoder, a model that cannot load) must leave nothing
    // behind, least of all a History task that stays PROCESSING for ever.
    const stream = this.openStream(account, request);
    let made: Made;
    try {
      made = await this.register(account, request, requestId, stream, key);
    } catch (error) {
      stream.close?.();
      throw error;
    }
    // Another node took the key first: its session answers, this stream is not needed.
    if (!('session' in made)) stream.close?.();
    return made;
  }

  /** The recogniser's stream, or 503 SERVICE_UNAVAILABLE (details.reason, Retry-After) when it cannot serve now. */
  private openStream(account: Account, request: RealtimeCreateRequest, resume?: unknown): RecognizerStream {
    try {
      return this.recognizer.openStream({ languageHint: request.languageHint, vocabularyHints: request.options.vocabularyHints, maxSpeakers: 1, owner: account.id, ...(resume !== undefined ? { resume } : {}) });
    } catch (error) {
      if (!isRecognizerError(error)) throw error;
      if (error.code === 'RECOGNIZER_ACCOUNT_LIMIT') {
        throw new ApiError('RATE_LIMITED', `no realtime session now: ${error.message}`, { reason: ACCOUNT_LIMITS.decoderLimitReason }, { cause: error, retryAfterSec: ACCOUNT_LIMITS.retryAfterSec });
      }
      throw new ApiError('SERVICE_UNAVAILABLE', `no realtime session now: ${error.message}`, { reason: error.code }, { cause: error, retryAfterSec: RECOGNIZER_REFUSALS.retryAfterSec });
    }
  }

  private async register(account: Account, request: RealtimeCreateRequest, requestId: string, stream: RecognizerStream, key: NewIdempotencyKey): Promise<Made> {
    const now = this.clock.now();
    const minimum = realtimeMinimum();
    const id = randomId(ID_PREFIXES.session);
    const max = this.limits.maxOpenSessionsPerAccount;
    const task = await this.store.openRealtime({
      task: newTask({ ownerId: account.id, kind: 'realtime', modelId: MODELS.realtime, title: request.title ?? 'Realtime session', languageHint: request.languageHint, requestId, status: 'PROCESSING' }, now),
      minimum,
      session: { id, nodeId: this.node.nodeId, maxOpen: max },
      idempotency: key,
    });
    if (isExistingKey(task)) {
      if (task.existing.bodyHash !== key.bodyHash) throw idempotencyConflict(key.key);
      return keptSession(task.existing);
    }
    if (isRefusal(task)) throw task.refused === 'sessions' ? sessionLimit(max) : insufficient(minimum, task.available);
    const identity = { sessionId: id, taskId: task.id, ownerId: account.id, createdAt: now, request };
    let lease: string | undefined;
    const takenAt = this.node.live?.clock() ?? 0;
    if (this.node.live !== undefined) {
      try {
        lease = await this.node.live.create(id, initialMeta(identity, REALTIME.firstEpoch));
      } catch (error) {
        // Without its live state the session could not outlive this node: none is made.
        await this.store.failTask(task.id, { errorCode: 'SERVICE_UNAVAILABLE', message: 'the live session state could not be written', retryable: true, action: 'RETRY', requestId }, this.clock.now()).catch(() => undefined);
        this.closeInStore(id);
        throw liveUnavailable(error);
      }
    }
    const session = this.build(account, request, task, id, now, stream);
    if (lease !== undefined && this.node.live !== undefined) this.follow(session, new LiveSession(this.node.live, identity, lease, { received: 0n, lines: 0, anchor: 0n, takenAt }, this.timing.retainAudioMaxSamples !== undefined, (reason) => this.drop(session, reason)));
    this.sessions.set(session.id, session);
    session.recovery.start();
    this.abandonedSweep.start();
    return { session };
  }

  /**
   * A session another node owned, taken over (src/live/takeover.ts holds the lease already): rebuilt
   * from its durable state with a fresh recogniser stream fed the open segment's audio; its recovery
   * window starts as for a socket that went away.
   */
  /**
   * A session taken over from Redis (live/takeover.ts): its lease is held (renewed) from the start; the
   * recogniser is prepared off the event loop, then the open segment's audio is fed to it in pieces
   * within the node's work budget (work-turns.ts), so a long open segment never holds the loop (and
   * the renewals of every lease of this node) for seconds. Rejects when the lease is lost meanwhile.
   */
  async restore(account: Account, task: Task, snapshot: LiveSnapshot, token: string, takenAt: number): Promise<Session> {
    const live = this.node.live;
    if (live === undefined) throw new Error('restore needs the live state');
    const existing = this.sessions.get(snapshot.identity.sessionId);
    if (existing !== undefined) return existing;
    const { sessionId, request, createdAt } = snapshot.identity;
    const stream = this.openStream(account, request, snapshot.audio.anchorState);
    const session = this.build(account, request, task, sessionId, createdAt, stream);
    let lost = false;
    const held = new LiveSession(live, snapshot.identity, token, { received: snapshot.received, lines: snapshot.audio.lines.length, anchor: snapshot.audio.anchor, takenAt }, this.timing.retainAudioMaxSamples !== undefined, (reason) => {
      lost = true;
      this.drop(session, reason);
    });
    try {
      session.audio.restore(snapshot.audio);
      await session.audio.prepare();
      for (let at = 0; at < snapshot.audio.open.length && !lost; ) {
        if (!workTurnOpen()) {
          await new Promise<void>((resolve) => nextWorkTurn(resolve));
          continue;
        }
        const started = performance.now();
        const piece = snapshot.audio.open.subarray(at, at + REPLAY_PIECE_SAMPLES);
        session.audio.replay(piece);
        at += piece.length;
        chargeWorkTurn(performance.now() - started);
      }
      if (lost || held.lost) throw new Error(`realtime session ${sessionId}: its lease was lost while it was being taken over`);
    } catch (error) {
      held.lose('fenced');
      session.audio.close();
      throw error;
    }
    this.follow(session, held);
    this.sessions.set(sessionId, session);
    session.recovery.start();
    this.abandonedSweep.start();
    return session;
  }

  /** Keeps the live state in step with the session: changes that come without a feed (rotation, commits) are written after the call that made them. */
  private follow(session: Session, live: LiveSession): void {
    session.live = live;
    let queued = false;
    session.audio.subscribe((event) => {
      if (event.type === 'transcript.partial' || queued) return;
      queued = true;
      queueMicrotask(() => {
        queued = false;
        this.sync(session);
      });
    });
  }

  /** Writes the session's changes to the live state (no-op without it). */
  private sync(session: Session, samples?: Int16Array, skipped = 0): void {
    if (session.live !== undefined && session.finishing === undefined) session.live.sync(session.audio, samples, skipped);
  }

  /**
   * The session's live state was lost (another node took it, or Redis cannot be reached): this node
   * lets it go at once, accepting nothing more; attached sockets are closed retryably (session.moved)
   * so their clients reconnect, through the balancer, to the node that has it or takes it.
   */
  private drop(session: Session, _reason: string, recycle = false): void {
    if (this.sessions.get(session.id) !== session) return;
    this.sessions.delete(session.id);
    session.recovery.dispose();
    session.audio.accepting = false;
    session.audio.announce({ type: 'session.moved', ...(recycle ? { recycle } : {}) });
    session.audio.close();
  }

  /** What an audio.ack may say: the received cursor, or with the live state what it holds durably. */
  acknowledged(session: Session): bigint {
    return session.live !== undefined ? session.live.durable : session.audio.received;
  }

  /** A session built around a recogniser stream (a new one, or one taken over). */
  private build(account: Account, request: RealtimeCreateRequest, task: Task, id: string, createdAt: number, stream: RecognizerStream): Session {
    const t = this.timing;
    const context = { sessionId: id };
    let session: Session | undefined;
    const audio = new SessionAudio(
      stream,
      request.options,
      (line, kind) => this.supplementPolicy(line, kind, context),
      { ...(t.rotateEveryMs !== undefined ? { rotateEveryMs: t.rotateEveryMs } : {}), ...(t.rotateEverySamples !== undefined ? { rotateEverySamples: t.rotateEverySamples } : {}) },
      t.retainAudioMaxSamples !== undefined ? { maxSamples: t.retainAudioMaxSamples } : undefined,
      (error) => {
        if (session !== undefined) this.fail(session, error);
      },
      this.clock,
    );
    audio.spending = new StoreSpendingGuard(this.store, task.id);
    session = {
      id,
      ownerId: account.id,
      account,
      task,
      audio,
      request,
      createdAt,
      notices: [],
      recovery: new RecoveryWindow(t.recoveryWindowMs, this.clock, () => {
        audio.expire();
        this.closeInStore(id);
        this.expiredUnfinished.add(id);
      }),
      attachedSockets: 0,
    };
    return session;
  }

  /**
   * A socket attaches: the recogniser loads what it needs (a PocketSphinx decoder, on a worker
   * thread) before session.ready, so a session created over REST and never connected holds none.
   * Undefined when there is nothing to wait for. Never rejects: a recogniser failure fails the
   * session (see fail).
   */
  prepare(session: Session): Promise<void> | undefined {
    return session.audio.prepare();
  }

  /**
   * The recogniser failed (a decoder would not load, an engine error): the session ends FAILED with
   * error RECOGNIZER_UNAVAILABLE, nothing charged, its decoder slot let go; attached sockets get
   * session.finished. During a finish, settle sees audio.failure and does the same.
   */
  private fail(session: Session, error: unknown): void {
    if (session.finishing !== undefined) return;
    session.finishing = this.settleFailed(session, error);
    this.closeInStore(session.id);
  }

  /**
   * The session stops counting as open on every node (finishing, or its recovery window passed). Not
   * awaited: a failed write only lets the store count the session until its task ends.
   */
  private closeInStore(id: string): void {
    this.store.nodes.closeSession(id).catch(() => undefined);
  }

  /**
   * The session's own state ends at once (audio closed, session.finished announced in the call that
   * failed, as a socket expects); the History task follows in the store, and `finishing` resolves
   * when it has. Never rejects: a failed write leaves the task to the next start (recoverInterrupted).
   */
  private settleFailed(session: Session, error: unknown): Promise<void> {
    const task = session.task;
    const taskError = {
      errorCode: RECOGNIZER_REFUSALS.taskErrorCode,
      message: `recognition failed: ${error instanceof Error ? error.message : String(error)}`,
      retryable: true,
      action: 'RETRY' as const,
      requestId: task.requestId,
    };
    // The view shows the failure at once, whatever the store's answer time.
    session.task = { ...task, error: taskError, status: 'FAILED' };
    session.audio.close();
    session.recovery.dispose();
    void session.live?.end();
    const written = this.store.failTask(task.id, taskError, this.clock.now()).then(
      (row) => {
        if (row !== 'already') session.task = row;
      },
      () => undefined,
    );
    session.audio.announce({ type: 'session.finished' });
    return written;
  }

  /** The socket lifetime limit, undefined when there is none (session.ready reports it). */
  get socketLifetimeMs(): number | undefined {
    return this.timing.socketLifetimeMs;
  }

  /** The configured recovery window (session.ready reports it). */
  get recoveryWindowMs(): number {
    return this.timing.recoveryWindowMs;
  }

  /** Looks a session up by id alone (the socket token already names the session and its owner). */
  byId(id: string): Session | undefined {
    return this.sessions.get(id);
  }

  /** A socket attaches: the recovery window stops. Refused once finished or expired. */
  attach(session: Session): AttachOutcome {
    if (session.finishing !== undefined) return 'finished';
    if (!session.recovery.cancel()) return 'expired';
    session.attachedSockets += 1;
    return 'attached';
  }

  /** A socket detached (any cause): with none left the recovery window starts. */
  detach(session: Session): void {
    session.attachedSockets = Math.max(0, session.attachedSockets - 1);
    if (session.attachedSockets === 0 && session.finishing === undefined) session.recovery.start();
  }

  /**
   * With the live state, before this node closes: every live session it owns is let go (its writes
   * answered, its lease released, then its sockets closed 4503 `session moved`; with `recycle`, a drain,
   * told socket.recycle and closed 4002 instead, which clients follow at once without counting a loss),
   * so its clients reconnect and another node takes each over at once. Sessions finishing stay to settle
   * here.
   */
  async handOver(options: { readonly recycle?: boolean } = {}): Promise<void> {
    const owned = [...this.sessions.values()].filter((s) => s.live !== undefined && s.finishing === undefined);
    await Promise.all(
      owned.map(async (session) => {
        await session.live?.handOver();
        this.drop(session, 'handed over', options.recycle === true);
      }),
    );
  }

  /** Whether this node drains (it then takes no session, new or taken over). */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Server shutdown: every session timer cleared (rotation, recovery, delayed supplements). */
  dispose(): void {
    this.abandonedSweep.stop();
    this.lifetime.abort();
    for (const session of this.sessions.values()) {
      session.recovery.dispose();
      session.audio.dispose();
    }
  }

  /** An owned session or NOT_FOUND (another account's session looks exactly like a missing one). */
  get(account: Account, id: string): Session {
    const session = this.find(account, id);
    if (session === undefined) throw ApiError.notFound('realtime session');
    return session;
  }

  /** The account's session when it lives on this node; undefined otherwise (elsewhere, or no such session). */
  find(account: Account, id: string): Session | undefined {
    const session = this.sessions.get(id);
    return session === undefined || session.ownerId !== account.id ? undefined : session;
  }

  view(session: Session): Record<string, unknown> {
    return sessionView(session, this.clock.now());
  }

  /** Spec "pause": commits the current segment and stops accepting until session.resume. */
  pause(session: Session, body: Record<string, unknown>): void {
    const captured = capturedFrom(body);
    if (session.finishing !== undefined) throw new ApiError('SESSION_CLOSED', 'the session is finished or finishing');
    session.audio.recordCaptured(captured);
    session.audio.pause();
    this.sync(session);
    // session.paused acknowledges the received cursor: with the live state, only once Redis holds it.
    const live = session.live;
    if (live === undefined) {
      session.audio.announce({ type: 'session.paused' });
      return;
    }
    void live.settled().then(() => {
      if (!live.lost && session.finishing === undefined && this.sessions.get(session.id) === session) session.audio.announce({ type: 'session.paused' });
    });
  }

  /** session.resume (the socket): the next epoch, or refused (see SessionAudio.resumeFrom). */
  resume(session: Session, epoch: number): ResumeOutcome {
    const outcome = session.audio.resumeFrom(epoch);
    if (outcome.kind === 'resumed' && outcome.changed) this.sync(session);
    return outcome;
  }

  /**
   * session.captured: the client's capture progress (the largest value counts). Refused once finishing:
   * the finish's own capturedSamples decides the transport gap.
   */
  recordCaptured(session: Session, body: Record<string, unknown>): void {
    const captured = capturedFrom(body);
    if (session.finishing !== undefined) throw new ApiError('SESSION_CLOSED', 'the session is finished or finishing');
    session.audio.recordCaptured(captured);
    this.sync(session);
  }

  /** Spec "finish" 1-6. Idempotent: the same task, one charge. */
  async finish(session: Session, body: Record<string, unknown>): Promise<void> {
    if (session.finishing === undefined) {
      const captured = capturedFrom(body);
      session.finishing = this.settle(session, captured);
      this.closeInStore(session.id);
    } else if (session.unsettled !== undefined) {
      // An earlier finish's settlement did not reach the database: this one writes the same again.
      session.finishing = session.unsettled();
    }
    await session.finishing;
  }

  /**
   * Ends every session of this node nobody will finish (abandoned.ts): settled as a finish settles,
   * PARTIAL, with the notice SESSION_ABANDONED; a finish that comes meanwhile awaits the same
   * settlement. Returns the ids ended now; the settlements go on (a failed one leaves the task as a
   * failed finish does).
   */
  endAbandoned(): readonly string[] {
    const now = this.clock.now();
    const ended: string[] = [];
    for (const id of this.expiredUnfinished) {
      const session = this.sessions.get(id);
      if (session === undefined || session.finishing !== undefined) {
        this.expiredUnfinished.delete(id);
        continue;
      }
      if (!isAbandoned(session, now, this.abandonAfterMs)) continue;
      this.expiredUnfinished.delete(id);
      session.finishing = this.settle(session, session.audio.captured, 'abandoned');
      session.finishing.catch(() => undefined);
      ended.push(session.id);
    }
    return ended;
  }

  /**
   * Spec "finish" 2-6, once per session. `abandoned`: the service ends a session nobody finished
   * (endAbandoned); the client never said its audio was whole, so it ends PARTIAL whatever it received.
   */
  private async settle(session: Session, captured: bigint, by: 'finish' | 'abandoned' = 'finish'): Promise<void> {
    const audio = session.audio;
    audio.recordCaptured(captured);
    audio.beginFinish();
    if (audio.failure !== undefined) {
      this.settleFailed(session, audio.failure);
      return;
    }
    await this.waitForSupplements(session);
    const noticesBefore = session.notices.length;
    const missing = new Map<string, { kinds: SupplementKind[]; lineIds: string[] }>();
    for (const line of audio.lines) {
      if (line.pending.size === 0) continue;
      const kinds = [...line.pending].sort();
      const key = kinds.join(',');
      const group = missing.get(key) ?? { kinds, lineIds: [] };
      group.lineIds.push(line.id);
      missing.set(key, group);
    }
    for (const { kinds, lineIds } of missing.values()) {
      session.notices.push({ code: 'SUPPLEMENT_NOT_RECEIVED', message: `${kinds.join(', ')} did not arrive before the session closed`, supplements: kinds, lineIds });
    }
    if (by === 'abandoned') {
      const waited = Math.round(session.recovery.expiredAt === null ? 0 : this.clock.now() - session.recovery.expiredAt);
      session.notices.push({
        code: ABANDONED_SESSIONS.notice,
        message: `no socket and no finish for ${waited} ms after the recovery window passed: the service finished the session; the charge covers the ${dec(audio.received)} samples received`,
      });
    }
    if (session.request.options.processingContentStorage) {
      session.notices.push({ code: 'PROCESSING_STORAGE_NOT_APPLIED', message: 'the reference service does not store processing content' });
    }
    // Past the balance the audio was refused, not lost: BALANCE_EXHAUSTED says so, not TRANSPORT_GAP.
    const gap = !audio.exhausted && audio.captured > audio.received;
    if (gap) {
      session.notices.push({ code: 'TRANSPORT_GAP', message: `captured ${audio.captured} samples but received ${audio.received}; the charge covers what was received` });
    }
    // Skipped time was received (no gap) but carried no audio: only the audio is charged.
    const durationMs = receivedDurationMs(audio.audioSamples);
    const transcript = realtimeTranscript(session);
    audio.close();
    session.recovery.dispose();
    const settlement: RealtimeSettlement = {
      status: gap || audio.exhausted || by === 'abandoned' ? 'PARTIAL' : 'COMPLETED',
      durationMs,
      transcript,
      detectedLanguage: transcript.languageCode,
      now: this.clock.now(),
    };
    if (by === 'abandoned') {
      await this.settled(session, await settleUntilStored(this.store, session.task.id, settlement, sweepIntervalMs(this.abandonAfterMs), this.lifetime.signal), noticesBefore);
      return;
    }
    let settled: Awaited<ReturnType<Store['settleRealtime']>>;
    try {
      settled = await this.store.settleRealtime(session.task.id, settlement);
    } catch (error) {
      if (isStoreError(error) && error.code === 'STORE_UNAVAILABLE') this.keepTrying(session, settlement, noticesBefore);
      throw error;
    }
    await this.settled(session, settled, noticesBefore);
  }

  /**
   * A finish whose settlement the database did not take (it could not be reached): the finish answers
   * the store's 503, and the same settlement (computed once: the same transcript, duration and status)
   * is written again by the next finish (Session.unsettled) and in the background until the database
   * answers (settleUntilStored, until shutdown), so the task never stays PROCESSING because of one failed
   * write. The store settles a task once: whichever write lands first charges, the other answers
   * 'already'; what follows a settlement (settled()) runs once.
   */
  private keepTrying(session: Session, settlement: RealtimeSettlement, noticesBefore: number): void {
    let done: Promise<void> | undefined;
    const finalize = (row: TaskRow | 'already'): Promise<void> => {
      done ??= this.settled(session, row, noticesBefore).finally(() => {
        session.unsettled = undefined;
      });
      return done;
    };
    session.unsettled = async () => finalize(await this.store.settleRealtime(session.task.id, settlement));
    settleUntilStored(this.store, session.task.id, settlement, SETTLE_RETRY_FIRST_WAIT_MS, this.lifetime.signal).then(
      (row) => {
        const finished = finalize(row);
        session.finishing = finished;
        finished.catch(() => undefined);
      },
      () => undefined,
    );
  }

  /** After the store settled the session's task (or answered 'already'): the view, the live state, the announcements. */
  private async settled(session: Session, settled: TaskRow | 'already', noticesBefore: number): Promise<void> {
    // 'already': the task ended by another hand (a node that held the session too, or a sweeper that
    // failed it): the view shows what the store kept, never a PROCESSING task of a finished session.
    session.task = settled !== 'already' ? settled : ((await this.store.tasks.get(session.task.id).catch(() => undefined)) ?? session.task);
    await session.live?.end();
    for (const notice of session.notices.slice(noticesBefore)) session.audio.announce({ type: 'session.notice', notice });
    session.audio.announce({ type: 'session.finished' });
  }

  /**
   * Audio from the socket (connection.ts). A frame that reaches the spending limit is stored up to it;
   * the session then ends by itself (exhaust). `pending`: the spending guard waits for the store; the
   * caller feeds the same frame again once the answer settled (nothing changed meanwhile).
   */
  feed(session: Session, epoch: number, startSample: bigint, samples: Int16Array): FeedOutcome {
    const outcome = session.audio.feed(epoch, startSample, samples);
    if (outcome.kind === 'accepted' && outcome.acceptedSamples > 0) this.sync(session, samples.subarray(outcome.duplicateSamples, outcome.duplicateSamples + outcome.acceptedSamples));
    if (session.audio.exhausted && session.finishing === undefined) this.exhaust(session);
    if (outcome.kind === 'accepted') tellObserver(this.hooks.onAudio, session.id, outcome.receivedSamples);
    return outcome;
  }

  /** A skip frame from the socket (SessionAudio.skip): never charged, so never pending. */
  skip(session: Session, epoch: number, startSample: bigint, count: number): FeedOutcome {
    const outcome = session.audio.skip(epoch, startSample, count);
    if (outcome.kind === 'accepted' && outcome.acceptedSamples > 0) this.sync(session, undefined, outcome.acceptedSamples);
    return outcome;
  }

  /**
   * The account's balance is used up at the session's receivedSamples: tell the client at once
   * (session.notice BALANCE_EXHAUSTED, so it stops sending), then finish as a finish would (commit,
   * supplements, settle at most the balance) and end PARTIAL with session.finished.
   */
  private exhaust(session: Session): void {
    const received = session.audio.received;
    const notice: SessionNotice = {
      code: REALTIME_SPENDING.exhaustedNotice,
      message: `the account's balance is used up after ${dec(received)} samples (${dec(receivedDurationMs(session.audio.audioSamples))} ms of audio); audio from there on was not accepted or charged`,
      receivedSamples: dec(received),
    };
    session.notices.push(notice);
    session.audio.announce({ type: 'session.notice', notice });
    session.finishing = this.settle(session, session.audio.captured);
    this.closeInStore(session.id);
  }

  /** Waits until no line has a pending supplement, at most supplementWaitMs and never past the recovery window. */
  private waitForSupplements(session: Session): Promise<void> {
    const audio = session.audio;
    const pending = (): boolean => audio.lines.some((l) => l.pending.size > 0);
    if (!pending()) return Promise.resolve();
    // Never past the recovery window: the time left on a running window (0 once expired), else the
    // whole window.
    const budget = Math.max(0, Math.min(this.timing.supplementWaitMs, SERVER_LIMITS.finishSupplementWaitMs, session.recovery.remainingMs()));
    return new Promise((resolve) => {
      const done = (): void => {
        cancel();
        unsubscribe();
        resolve();
      };
      const cancel = this.clock.setTimer(budget, done);
      const unsubscribe = audio.subscribe((event) => {
        if (event.type === 'transcript.supplement' && !pending()) done();
      });
    });
  }

  /** Socket token for browsers (socket-token.ts); the socket verifies it with verifyToken. */
  issueToken(session: Pick<Session, 'id'>): { token: string; expiresAt: string } {
    return issueSocketToken(this.node.tokenSecret, session.id, this.tokenNow(session.id));
  }

  /**
   * The session id a valid, unexpired token names (it may live on another node: the socket endpoint
   * then forwards); undefined for a token this service did not sign or that expired.
   */
  verifyToken(token: string): string | undefined {
    return verifySocketToken(this.node.tokenSecret, token, this.tokenNow(tokenSessionId(token)));
  }

  /** The service's clock, moved on for a session whose tokens a fault expired (token-aging.ts). */
  private tokenNow(sessionId: string): number {
    const now = this.clock.now();
    return this.hooks.tokens === undefined ? now : this.hooks.tokens.tokenNow(sessionId, now);
  }
}

/** A finish's settlement the database did not take is written again after this (ms), the wait doubling (settleUntilStored). */
const SETTLE_RETRY_FIRST_WAIT_MS = 200;
/** A taken-over open segment is fed to the recogniser this much at a time (0.25 s; PocketSphinx: ~50 ms), within the work budget. */
const REPLAY_PIECE_SAMPLES = REALTIME.sampleRate / 4;

/** details.reason of a realtime creation refused because this server drains (docs/protocol.md "Several nodes"). */
export const NODE_DRAINING_REASON = 'NODE_DRAINING';

/** The session a realtime create's kept key names (openRealtime keeps every realtime key with its session). */
function keptSession(row: IdempotencyRow): Made {
  if (row.sessionId === undefined) throw new Error(`the realtime Idempotency-Key ${row.key} is kept without its session`);
  return { sessionId: row.sessionId, taskId: row.taskId };
}

