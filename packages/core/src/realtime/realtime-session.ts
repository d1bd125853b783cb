import { EventEmitter } from 'eventemitter3';
import type { Observable } from 'rxjs';
import { isNotFoundError } from '../errors/guards.js';
import { API_PREFIX, CLOSE_CODES, FINAL_CLOSE_CODES, REALTIME, REALTIME_PATHS, SOCKET_DEFAULTS, SOCKET_QUERY, TERMINAL_STATUSES } from '../protocol.js';
import type { RealtimeNotice, RealtimeSession, RealtimeUsage } from '../types/realtime.js';
import { AudioOutbox, type AudioStats } from './audio-outbox.js';
import { LineStore, type LineUpdate, type SessionLine } from './line-store.js';
import { DefaultReconnectPolicy, type ReconnectPolicy } from './reconnect-policy.js';
import { RealtimeError, isRealtimeError } from './realtime-error.js';
import { parseServerMessage, type EntitiesMessage, type PartialMessage, type ServerMessage, type SessionReadyMessage } from './server-messages.js';
import type { RealtimeFinishResult, RealtimeSessionEvents } from './session-events.js';
import { StateMachine, type SessionState, type StateChange } from './session-state.js';
import { resolveWebSocket, SocketTransport, type WebSocketConstructor } from './socket-transport.js';
import type { OperationOptions, RealtimeSessionInit } from './session-options.js';
import { SessionStreams, type SessionObservables } from './session-streams.js';
import { HeartbeatWatchdog } from './heartbeat-watchdog.js';
import { Waiters } from './waiters.js';

/** States in which audio written now will be sent (now or after a reconnect or rotation). */
const WRITABLE: readonly SessionState[] = ['connecting', 'streaming', 'rotating', 'reconnecting'];

/**
 * A realtime session over the socket (issue 4): audio in, lines out, never losing a sample the
 * server has not acknowledged.
 *
 * Generations: every socket gets a transport id, and every callback from a socket that is no longer
 * current is dropped; partials of an epoch already left are dropped. Every await re-checks the state.
 *
 * Handshake per socket:
 *
 *   client                                   server
 *     |── upgrade (accessKey header | token) ──►|
 *     |◄── session.ready {epoch, received} ─────|   rewind to received, resend the rest
 *     |── frames {epoch, startSample} ─────────►|
 *     |◄── audio.ack {received} ─── (release) ──|
 *     |◄── usage.updated {rotate:true} ─────────|   rewind to ack, session.resume {epoch}
 *     |── session.resume {epoch} ──────────────►|
 *     |◄── session.resumed {epoch+1, received} ─|   continue in epoch+1 from received
 *     |── session.finish {capturedSamples} ────►|   after everything is acknowledged
 *     |◄── session.finished {session} ── close 4409
 */
export class RealtimeSocketSession extends EventEmitter<RealtimeSessionEvents> implements SessionObservables {
  readonly sessionId: string;
  readonly partials$: Observable<PartialMessage>;
  readonly lines$: Observable<SessionLine>;
  readonly lineUpdates$: Observable<LineUpdate>;
  readonly entities$: Observable<EntitiesMessage>;
  readonly notices$: Observable<RealtimeNotice>;
  readonly usage$: Observable<RealtimeUsage>;
  readonly state$: Observable<SessionState>;
  readonly backpressure$: Observable<AudioStats>;

  readonly #init: RealtimeSessionInit;
  readonly #machine: StateMachine;
  readonly #outbox: AudioOutbox;
  readonly #lines = new LineStore();
  readonly #notices: RealtimeNotice[] = [];
  #policy: ReconnectPolicy;
  readonly #now: () => number;
  readonly #waiters = new Waiters();
  readonly #timers = new Set<ReturnType<typeof setTimeout>>();
  readonly #subjects = new SessionStreams();
  readonly #heartbeat: HeartbeatWatchdog;

  #ws: { WebSocket: WebSocketConstructor; headers: boolean } | undefined;
  #transport: SocketTransport | undefined;
  #transportSeq = 0;
  #ready = false;
  #epoch: number = REALTIME.firstEpoch;
  #connectTimer: ReturnType<typeof setTimeout> | undefined;
  #lossStartedAt: number | undefined;
  #attempt = 0;
  #everReady = false;
  #lastSocketError = '';
  #firstFrameSent = false;
  #finishRequested = false;
  #pauseRequested = false;
  #drainDeadline = 0;
  /** Transport id on which session.finish / session.pause was sent (resent once per new socket). */
  #finishSentOn = -1;
  #pauseSentOn = -1;
  #resumeSentOn = -1;
  #rotatingFrom: number | undefined;
  #result: RealtimeFinishResult | undefined;
  #failure: Error | undefined;
  #finishPromise: Promise<RealtimeFinishResult> | undefined;
  readonly #onAbort = (): void => this.#fail(RealtimeError.aborted('session', this.#init.signal?.reason), 'aborted');

  constructor(init: RealtimeSessionInit) {
    super();
    this.#init = init;
    this.sessionId = init.sessionId;
    this.#now = init.now ?? (() => Date.now());
    this.#policy = init.reconnect ?? defaultPolicy(REALTIME.recoveryWindowMs);
    this.#outbox = new AudioOutbox({
      sampleRate: init.sampleRate ?? REALTIME.sampleRate,
      channels: init.channels ?? 1,
      bufferMs: init.bufferMs ?? REALTIME.recoveryWindowMs,
      onGap: (gap) => this.emit('gap', { ...gap, epoch: this.#epoch }),
    });
    this.partials$ = this.#subjects.partials.asObservable();
    this.lines$ = this.#subjects.lines.asObservable();
    this.lineUpdates$ = this.#subjects.lineUpdates.asObservable();
    this.entities$ = this.#subjects.entities.asObservable();
    this.notices$ = this.#subjects.notices.asObservable();
    this.usage$ = this.#subjects.usage.asObservable();
    this.state$ = this.#subjects.state.asObservable();
    this.backpressure$ = this.#subjects.backpressure.asObservable();
    this.#machine = new StateMachine((change) => this.#onStateChange(change));
    this.#heartbeat = new HeartbeatWatchdog(this.#now, () => {
      // The server pings every heartbeatIntervalMs; silence this long means a dead or half-open path.
      this.#transport?.terminate();
      this.#onLost(CLOSE_CODES.HEARTBEAT_TIMEOUT, 'heartbeat timeout');
    });
  }

  get state(): SessionState {
    return this.#machine.state;
  }

  /** Current epoch (recording segment). */
  get epoch(): number {
    return this.#epoch;
  }

  /** Lines so far, each once, with the supplements that arrived. */
  get lines(): readonly SessionLine[] {
    return this.#lines.all();
  }

  get notices(): readonly RealtimeNotice[] {
    return this.#notices;
  }

  get stats(): AudioStats {
    return this.#outbox.stats();
  }

  /** Opens the first socket; resolves on session.ready, rejects when the session failed before it. */
  async start(): Promise<this> {
    const signal = this.#init.signal;
    if (signal?.aborted) throw RealtimeError.aborted('connect', signal.reason);
    signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#machine.set('connecting', 'connect()');
    try {
      this.#ws = await resolveWebSocket(this.#init.WebSocket);
    } catch (caught) {
      this.#fail(caught instanceof Error ? caught : RealtimeError.noWebSocket(), 'no WebSocket');
      throw caught;
    }
    if (this.#machine.terminal) throw this.#failure ?? RealtimeError.closed('connect');
    this.#openSocket();
    await this.#waiters.until(() => this.#everReady, { call: 'connect', timeoutMs: Number.POSITIVE_INFINITY, failure: () => this.#failure });
    return this;
  }

  // ------------------------------------------------------------------------------------------------
  // Audio in
  // ------------------------------------------------------------------------------------------------

  /**
   * Float32 audio at the declared sampleRate and channels (interleaved). Returns the input samples
   * accepted (block.length); 0 when the session does not take audio now (paused, pausing, finishing, closed).
   */
  write(block: Float32Array): number {
    if (!WRITABLE.includes(this.state)) return 0;
    this.#outbox.writeFloat(block);
    this.#pump();
    return block.length;
  }

  /** PCM16 at 16 kHz mono, sent bit for bit. Same return rule as write(). */
  writePcm16(samples: Int16Array): number {
    if (!WRITABLE.includes(this.state)) return 0;
    this.#outbox.writePcm16(samples);
    this.#pump();
    return samples.length;
  }

  // ------------------------------------------------------------------------------------------------
  // Operations
  // ------------------------------------------------------------------------------------------------

  /**
   * Sends everything written so far, waits until the server acknowledged it (at most drainTimeoutMs),
   * then pauses with that exact capturedSamples. Resolves once the server confirmed (session.paused).
   */
  async pause(options: OperationOptions = {}): Promise<void> {
    const wait = { call: 'pause', signal: options.signal, timeoutMs: options.timeoutMs ?? 30_000, failure: () => this.#failure };
    await this.#waiters.until(() => this.state === 'streaming' || this.state === 'paused' || this.#machine.terminal || this.state === 'finishing', wait);
    if (this.state === 'paused') return;
    if (this.state !== 'streaming') throw RealtimeError.invalidState('pause', this.state);
    this.#pauseRequested = true;
    this.#pauseSentOn = -1; // a new pause: the one sent on this socket earlier was answered already
    this.#drainDeadline = this.#now() + (this.#init.drainTimeoutMs ?? 5000);
    this.#machine.set('pausing', 'pause()');
    this.#armDrainTimer();
    this.#pump();
    try {
      await this.#waiters.until(() => this.state === 'paused', wait);
    } finally {
      this.#pauseRequested = false;
    }
  }

  /** Resumes after pause(): the server starts the next epoch; audio written from now on is sent. */
  async resume(options: OperationOptions = {}): Promise<void> {
    const wait = { call: 'resume', signal: options.signal, timeoutMs: options.timeoutMs ?? 30_000, failure: () => this.#failure };
    await this.#waiters.until(() => this.state === 'paused' || this.state === 'streaming' || this.#machine.terminal || this.state === 'finishing', wait);
    if (this.state === 'streaming') return;
    if (this.state !== 'paused') throw RealtimeError.invalidState('resume', this.state);
    this.#sendResume();
    await this.#waiters.until(() => this.state === 'streaming', wait);
  }

  /**
   * Finishes the session: encodes the resampler's tail, sends every remaining sample, waits for the
   * acknowledgement (at most drainTimeoutMs), sends session.finish with the exact capturedSamples and
   * resolves with the final view, every notice and the final lines. Always settles (default timeout
   * 60 s: the server waits up to ~8 s for supplements) and leaves no timer or listener behind.
   * Repeated calls return the same promise.
   */
  finish(options: OperationOptions = {}): Promise<RealtimeFinishResult> {
    if (this.#result !== undefined) return Promise.resolve(this.#result);
    if (this.#finishPromise !== undefined) return this.#finishPromise;
    if (this.#machine.terminal) return Promise.reject(this.#failure ?? RealtimeError.closed('finish'));
    this.#finishRequested = true;
    const wasPaused = this.state === 'paused';
    if (!wasPaused) this.#outbox.flushResampler();
    this.#drainDeadline = this.#now() + (this.#init.drainTimeoutMs ?? 5000);
    if (this.state !== 'reconnecting' && this.state !== 'connecting') this.#machine.set('finishing', 'finish()');
    // Paused with audio the server refused (frames in flight when it paused): a new epoch takes it first.
    if (wasPaused && this.#outbox.unsent > 0) this.#sendResume();
    this.#armDrainTimer();
    this.#pump();
    const timeoutMs = options.timeoutMs ?? 60_000;
    this.#finishPromise = this.#waiters
      .until(() => this.#result !== undefined, { call: 'finish', signal: options.signal, timeoutMs, failure: () => this.#failure })
      .then(
        () => this.#result as RealtimeFinishResult,
        (caught: unknown) => {
          // A finish that timed out or was aborted ends the session here (the server keeps it open
          // until its recovery window passes; a REST finish can still save it).
          if (!this.#machine.terminal) this.#fail(caught as Error, isRealtimeError(caught) && caught.code === 'REALTIME_TIMEOUT' ? 'finish timed out' : 'finish aborted');
          throw caught;
        },
      );
    return this.#finishPromise;
  }

  /**
   * A plain disconnect: the socket closes and the session object is done. The server keeps the session
   * (not finished, not charged) until its recovery window passes; finish it over REST to save it.
   */
  close(): void {
    this.#fail(RealtimeError.closed('operation'), 'closed by the client');
  }

  // ------------------------------------------------------------------------------------------------
  // Socket lifecycle
  // ------------------------------------------------------------------------------------------------

  #socketUrl(): { url: string; headers: Record<string, string> | undefined } {
    const init = this.#init;
    const query = new URLSearchParams();
    query.set(SOCKET_QUERY.sessionId, init.sessionId);
    const headerAuth = init.accessKey !== undefined && (this.#ws?.headers ?? false);
    if (!headerAuth && init.token !== undefined) query.set(SOCKET_QUERY.token, init.token);
    return { url: `${init.socketUrl}?${query.toString()}`, headers: headerAuth ? { accessKey: init.accessKey as string } : undefined };
  }

  #openSocket(): void {
    const ws = this.#ws;
    if (ws === undefined || this.#machine.terminal) return;
    const { url, headers } = this.#socketUrl();
    const id = ++this.#transportSeq;
    this.#ready = false;
    this.#lastSocketError = '';
    let socket;
    try {
      socket = headers !== undefined ? new ws.WebSocket(url, undefined, { headers }) : new ws.WebSocket(url);
    } catch (caught) {
      this.#fail(RealtimeError.socketRefused(caught instanceof Error ? caught.message : String(caught), caught), 'socket refused');
      return;
    }
    this.#transport = new SocketTransport(id, socket, {
      onOpen: () => {},
      onText: (t, text) => this.#onText(t, text),
      onClose: (t, code, reason) => this.#onClose(t, code, reason),
      onError: (t, message) => {
        if (t.id === this.#transport?.id) this.#lastSocketError = message;
      },
    });
    this.#clearConnectTimer();
    this.#connectTimer = setTimeout(() => {
      this.#connectTimer = undefined;
      const t = this.#transport;
      if (t === undefined || t.id !== id || this.#ready) return;
      t.terminate();
      this.#onLost(undefined, 'connect timeout');
    }, this.#init.connectTimeoutMs ?? 10_000);
  }

  #onClose(t: SocketTransport, code: number, reason: string): void {
    if (t.id !== this.#transport?.id) return;
    this.#onLost(code, reason === '' ? `socket closed ${code}` : `socket closed ${code} ${reason}`);
  }

  /** The current socket is gone: decide between the end and a reconnect. */
  #onLost(code: number | undefined, reason: string): void {
    this.#transport?.dispose();
    this.#transport = undefined;
    this.#ready = false;
    this.#heartbeat.stop();
    this.#clearConnectTimer();
    if (this.#machine.terminal) return;
    if (code !== undefined && FINAL_CLOSE_CODES.includes(code)) {
      this.#onFinalClose(code, reason);
      return;
    }
    // A refused upgrade (`ws`: "Unexpected server response: 401") will be refused again.
    const refused = /Unexpected server response: (400|401|403|404)/.exec(this.#lastSocketError);
    if (refused !== null) {
      this.#fail(RealtimeError.socketRefused(`HTTP ${refused[1]}`), `socket refused (HTTP ${refused[1]})`);
      return;
    }
    this.#scheduleReconnect(code, reason);
  }

  #onFinalClose(code: number, reason: string): void {
    switch (code) {
      case CLOSE_CODES.RECOVERY_WINDOW_EXPIRED:
        void this.#recoveryExpired();
        return;
      case CLOSE_CODES.SESSION_FINISHED:
        // session.finished normally arrived just before; if not, read the final view over REST.
        void this.#finishedElsewhere(reason);
        return;
      case CLOSE_CODES.REPLACED:
        this.#fail(RealtimeError.replaced(), reason);
        return;
      case CLOSE_CODES.SESSION_NOT_FOUND:
        this.#fail(RealtimeError.sessionNotFound(code), reason);
        return;
      default:
        this.#fail(RealtimeError.protocolViolation(code, reason), reason);
    }
  }

  #scheduleReconnect(code: number | undefined, reason: string): void {
    const now = this.#now();
    if (this.#lossStartedAt === undefined) {
      this.#lossStartedAt = now;
      this.#attempt = 0;
    }
    if (this.state !== 'connecting') this.#machine.set('reconnecting', reason);
    const delay = this.#policy.nextRetryDelayMs({ attempt: this.#attempt, elapsedMs: now - this.#lossStartedAt, closeCode: code, reason });
    if (delay === null) {
      this.#fail(RealtimeError.reconnectExhausted(reason), `reconnect gave up: ${reason}`);
      return;
    }
    this.emit('reconnecting', { attempt: this.#attempt + 1, delayMs: delay, reason, closeCode: code });
    this.#later(delay, () => {
      this.#attempt += 1;
      void this.#reconnect();
    });
  }

  /** One attempt: read the session over REST when we can (it may have ended meanwhile), then the socket. */
  async #reconnect(): Promise<void> {
    if (this.state !== 'reconnecting' && this.state !== 'connecting') return;
    const rest = this.#init.rest;
    if (rest !== undefined && this.#everReady) {
      let view: RealtimeSession;
      try {
        view = await rest.get(this.sessionId, this.#init.signal !== undefined ? { signal: this.#init.signal } : {});
      } catch (caught) {
        if (this.#machine.terminal) return;
        if (isNotFoundError(caught)) {
          this.#fail(RealtimeError.sessionNotFound(), 'session not found');
          return;
        }
        this.#scheduleReconnect(undefined, `GET session failed: ${caught instanceof Error ? caught.message : String(caught)}`);
        return;
      }
      if (this.state !== 'reconnecting' && this.state !== 'connecting') return;
      if ((TERMINAL_STATUSES as readonly string[]).includes(view.status)) {
        this.#onFinished(view, 'the session was finished elsewhere');
        return;
      }
    }
    this.#openSocket();
  }

  async #recoveryExpired(): Promise<void> {
    const rest = this.#init.rest;
    if (rest === undefined) {
      this.emit('recovery.expired', { finishedOverRest: false });
      this.#fail(RealtimeError.recoveryWindowExpired(), 'recovery window expired');
      return;
    }
    // Spec "finish": a REST finish still saves the result; say so in the event and the final reason.
    this.#finishRequested = true;
    this.#machine.set('finishing', 'recovery window expired');
    this.emit('recovery.expired', { finishedOverRest: true });
    try {
      const view = await rest.finish(this.sessionId, String(this.#outbox.produced));
      this.#onFinished(view, 'recovery window expired: finished over REST');
    } catch (caught) {
      this.#fail(caught instanceof Error ? caught : RealtimeError.recoveryWindowExpired(), 'recovery window expired; REST finish failed');
    }
  }

  async #finishedElsewhere(reason: string): Promise<void> {
    if (this.#result !== undefined) return;
    const rest = this.#init.rest;
    if (rest === undefined) {
      this.#fail(RealtimeError.closed('finish'), reason);
      return;
    }
    try {
      this.#onFinished(await rest.get(this.sessionId), 'the session was finished elsewhere');
    } catch (caught) {
      this.#fail(caught instanceof Error ? caught : RealtimeError.closed('finish'), reason);
    }
  }

  // ------------------------------------------------------------------------------------------------
  // Messages
  // ------------------------------------------------------------------------------------------------

  #onText(t: SocketTransport, text: string): void {
    if (t.id !== this.#transport?.id || this.#machine.terminal) return;
    this.#heartbeat.touch();
    const parsed = parseServerMessage(text);
    if (parsed.kind === 'unknown') {
      this.emit('debug', { kind: 'unknown-message', detail: { type: parsed.type } });
      return;
    }
    if (parsed.kind === 'invalid') {
      this.emit('debug', { kind: 'invalid-message', detail: { reason: parsed.reason } });
      return;
    }
    const message = parsed.message;
    this.#handle(t, message);
    if (t.id === this.#transport?.id || message.type === 'session.finished') this.#emitRaw(message);
    this.#waiters.check();
  }

  #emitRaw(message: ServerMessage): void {
    (this.emit as (type: string, payload: unknown) => boolean)(message.type, message);
  }

  #handle(t: SocketTransport, m: ServerMessage): void {
    switch (m.type) {
      case 'ping':
        t.sendJson({ type: 'pong', id: m.id ?? null });
        return;
      case 'pong':
        return;
      case 'session.ready':
        this.#onReady(m);
        return;
      case 'audio.ack':
        this.#outbox.acknowledge(m.receivedSamples);
        this.#subjects.backpressure.next(this.#outbox.stats());
        this.emit('backpressure', this.#outbox.stats());
        this.#pump();
        return;
      case 'transcript.partial':
        if (m.epoch < this.#epoch) return; // an epoch already left: stale
        this.#subjects.partials.next(m);
        return;
      case 'transcript.line':
        this.#addLine(m.line);
        return;
      case 'transcript.alignment':
      case 'transcript.entities':
      case 'transcript.revision':
      case 'transcript.language': {
        const update = this.#lines.supplement(m);
        if (m.type === 'transcript.entities') this.#subjects.entities.next(m);
        if (update !== undefined) this.#emitUpdate(update);
        return;
      }
      case 'usage.updated':
        if (m.usage !== undefined) this.#subjects.usage.next(m.usage);
        if (m.rotate) this.#onRotate(m.epoch);
        return;
      case 'session.notice':
        this.#addNotice(m.notice);
        return;
      case 'session.paused':
        this.#outbox.acknowledge(m.receivedSamples);
        this.#outbox.rewindTo(m.receivedSamples);
        if (this.state === 'pausing' || this.state === 'streaming' || this.state === 'rotating') this.#machine.set('paused', 'session.paused');
        return;
      case 'session.resumed':
        this.#onResumed(m.epoch, m.receivedSamples);
        return;
      case 'session.finished':
        this.#onFinished(m.session, 'finished');
        return;
      case 'error':
        this.#onSocketError(t, m);
        return;
    }
  }

  #onReady(m: SessionReadyMessage): void {
    this.#ready = true;
    this.#clearConnectTimer();
    const reconnect = this.#everReady;
    const attempt = this.#attempt;
    this.#everReady = true;
    this.#lossStartedAt = undefined;
    this.#attempt = 0;
    this.#finishSentOn = this.#pauseSentOn = this.#resumeSentOn = -1;
    this.#heartbeat.start(this.#init.heartbeatTimeoutMs ?? m.heartbeatTimeoutMs ?? SOCKET_DEFAULTS.heartbeatTimeoutMs);
    this.#epoch = m.epoch;
    if (this.#init.reconnect === undefined && m.recoveryWindowMs !== undefined) this.#policy = defaultPolicy(m.recoveryWindowMs);
    // Lines committed while we were away arrive in the view: new ones are emitted, known ones updated.
    if (m.session !== undefined) {
      for (const line of m.session.lines) this.#addLine(line);
      for (const notice of m.session.notices) if (!this.#notices.some((n) => sameNotice(n, notice))) this.#addNotice(notice);
    }
    this.#outbox.acknowledge(m.receivedSamples);
    this.#outbox.rewindTo(m.receivedSamples);
    if (reconnect) this.emit('reconnected', { attempt, receivedSamples: m.receivedSamples, resendSamples: this.#outbox.unsent });
    const rotated = m.awaitingResume && m.status === 'ACTIVE';
    if (rotated) this.#rotatingFrom = this.#epoch;
    if (this.#finishRequested) {
      // Draining states rotate without leaving the state (see #onRotate).
      this.#machine.set('finishing', reconnect ? 'reconnected while finishing' : 'finish()');
      if (rotated) this.#sendResume();
    } else if (m.status === 'PAUSED') {
      this.#machine.set('paused', reconnect ? 'reconnected: paused' : 'session is paused');
    } else if (this.#pauseRequested) {
      this.#machine.set('pausing', 'reconnected while pausing');
      if (rotated) this.#sendResume();
    } else if (rotated) {
      this.#machine.set('rotating', reconnect ? 'reconnected: rotation pending' : 'rotation pending');
      this.#sendResume();
    } else {
      this.#machine.set('streaming', reconnect ? 'reconnected' : 'session.ready');
    }
    this.#pump();
  }

  #onRotate(epoch: number): void {
    if (epoch !== this.#epoch) return; // a rotation of an epoch already left
    // The server flushed its ack just before: frames after it were refused (NOT_ACCEPTING) and are
    // sent again in the next epoch from the cursor session.resumed reports.
    this.#outbox.rewindTo(this.#outbox.acked);
    if (this.state === 'streaming') {
      this.#rotatingFrom = epoch;
      this.#machine.set('rotating', 'usage.updated rotate');
      this.#sendResume();
    } else if ((this.state === 'finishing' && this.#finishSentOn !== this.#transport?.id) || (this.state === 'pausing' && this.#pauseSentOn !== this.#transport?.id)) {
      // Audio is still draining: rotate without leaving the state, the drain continues in the new epoch.
      // Not once the pause or finish went out: the server handles that first, and a resume after it
      // would undo the pause (a paused session resumes into the next epoch).
      this.#rotatingFrom = epoch;
      this.#sendResume();
    }
  }

  #sendResume(): void {
    const t = this.#transport;
    if (t === undefined || !this.#ready || this.#resumeSentOn === t.id) return;
    this.#resumeSentOn = t.id;
    t.sendJson({ type: 'session.resume', epoch: this.#epoch });
  }

  #onResumed(epoch: number, received: number): void {
    this.#epoch = epoch;
    this.#resumeSentOn = -1;
    this.#outbox.acknowledge(received);
    this.#outbox.rewindTo(received);
    if (this.state === 'rotating' || this.state === 'paused') this.#machine.set('streaming', `resumed in epoch ${epoch}`);
    if (this.#rotatingFrom !== undefined && epoch !== this.#rotatingFrom) {
      this.emit('rotated', { fromEpoch: this.#rotatingFrom, toEpoch: epoch, atSample: received });
    }
    this.#rotatingFrom = undefined;
    this.#pump();
  }

  #onSocketError(t: SocketTransport, m: Extract<ServerMessage, { type: 'error' }>): void {
    if (m.fatal) {
      // The close with its code follows; RECOVERY_WINDOW_EXPIRED is handled there.
      this.emit('debug', { kind: 'fatal-error', detail: { code: m.code, message: m.message } });
      return;
    }
    const received = Number(m.details?.['receivedSamples'] ?? Number.NaN);
    if (m.code === 'BEYOND_CURSOR' && Number.isSafeInteger(received)) {
      // The server misses audio before this frame: send again from its cursor.
      this.#outbox.rewindTo(received);
      this.#pump();
    }
    const aboutMessage = m.details?.['frameEpoch'] === undefined;
    if (aboutMessage && (m.code === 'WRONG_EPOCH' || m.code === 'SESSION_CLOSED') && this.#resumeSentOn === t.id && !this.#finishRequested) {
      // Our session.resume was refused: our idea of the epoch is wrong. A new socket's session.ready
      // tells the truth; resync through the reconnect path instead of guessing.
      this.emit('debug', { kind: 'resync', detail: { code: m.code, message: m.message } });
      t.close(CLOSE_CODES.normal, 'resync');
      this.#onLost(undefined, `resync after refused session.resume (${m.code})`);
      return;
    }
    // NOT_ACCEPTING / WRONG_EPOCH for frames in flight across a rotation or pause are expected.
    this.emit('debug', { kind: 'refused', detail: { code: m.code, message: m.message } });
  }

  #addLine(wire: Parameters<LineStore['add']>[0]): void {
    const { line, update } = this.#lines.add(wire);
    if (line !== undefined) {
      this.#subjects.lines.next(line);
      this.emit('line', line);
    }
    if (update !== undefined) this.#emitUpdate(update);
  }

  #emitUpdate(update: LineUpdate): void {
    this.#subjects.lineUpdates.next(update);
    this.emit('line.updated', update);
  }

  #addNotice(notice: RealtimeNotice): void {
    this.#notices.push(notice);
    this.#subjects.notices.next(notice);
  }

  #onFinished(view: RealtimeSession, reason: string): void {
    if (this.#machine.terminal) return;
    for (const line of view.lines) this.#addLine(line);
    for (const notice of view.notices) if (!this.#notices.some((n) => sameNotice(n, notice))) this.#addNotice(notice);
    this.#result = { session: view, notices: [...this.#notices], lines: this.#lines.all(), reason };
    this.#machine.set('finished', reason);
  }

  // ------------------------------------------------------------------------------------------------
  // Sending
  // ------------------------------------------------------------------------------------------------

  /** Sends what the state and the in-flight window allow; then pause/finish messages once drained. */
  #pump(): void {
    const t = this.#transport;
    if (t === undefined || !this.#ready || !t.open) return;
    const state = this.state;
    const draining = state === 'pausing' || state === 'finishing';
    if (state !== 'streaming' && !draining) return;
    if (draining && this.#resumeSentOn === t.id) return; // a rotation must complete first
    const outbox = this.#outbox;
    const window = this.#init.maxInFlightSamples ?? 32_000;
    for (;;) {
      if (outbox.expected - outbox.acked >= window) break;
      const frame = outbox.nextFrame(this.#epoch, draining);
      if (frame === null) break;
      t.send(frame.bytes);
      if (!this.#firstFrameSent) {
        this.#firstFrameSent = true;
        this.emit('first.frame', { startSample: frame.startSample, epoch: this.#epoch });
      }
    }
    if (!draining || outbox.unsent > 0) return;
    // Everything is sent; go ahead once it is acknowledged, or when the drain wait ran out.
    if (outbox.acked < outbox.produced && this.#now() < this.#drainDeadline) return;
    const captured = String(outbox.produced);
    if (state === 'finishing' && this.#finishSentOn !== t.id) {
      this.#finishSentOn = t.id;
      t.sendJson({ type: 'session.finish', capturedSamples: captured });
    } else if (state === 'pausing' && this.#pauseSentOn !== t.id) {
      this.#pauseSentOn = t.id;
      t.sendJson({ type: 'session.pause', capturedSamples: captured });
    }
  }

  #armDrainTimer(): void {
    this.#later(Math.max(0, this.#drainDeadline - this.#now()) + 1, () => this.#pump());
  }

  // ------------------------------------------------------------------------------------------------
  // Heartbeat, timers, state, teardown
  // ------------------------------------------------------------------------------------------------

  #clearConnectTimer(): void {
    if (this.#connectTimer !== undefined) clearTimeout(this.#connectTimer);
    this.#connectTimer = undefined;
  }

  #later(ms: number, run: () => void): void {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      if (!this.#machine.terminal) run();
    }, ms);
    this.#timers.add(timer);
  }

  #onStateChange(change: StateChange): void {
    this.#subjects.state.next(change.to);
    this.emit('state', change);
    if (this.#machine.terminal) this.#teardown();
    this.#waiters.check();
    // Terminal without the awaited condition (e.g. pause() when the session finished): nothing waits forever.
    if (this.#machine.terminal) this.#waiters.rejectAll(this.#failure ?? RealtimeError.closed('operation'));
  }

  #fail(error: Error, reason: string): void {
    if (this.#machine.terminal) return;
    this.#failure = error;
    this.#machine.set('failed', reason);
  }

  /** Terminal: close the socket, clear every timer, remove the abort listener, complete the streams. */
  #teardown(): void {
    const t = this.#transport;
    this.#transport = undefined;
    this.#ready = false;
    t?.close(CLOSE_CODES.normal, this.state);
    this.#heartbeat.stop();
    this.#clearConnectTimer();
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    this.#init.signal?.removeEventListener('abort', this.#onAbort);
    this.#subjects.complete();
  }
}

/**
 * The default policy retries a little past the server's recovery window: the attempt after the window
 * is answered with close 4410, which is what lets the session be finished over REST and saved.
 */
function defaultPolicy(recoveryWindowMs: number): ReconnectPolicy {
  return new DefaultReconnectPolicy({ maxElapsedMs: recoveryWindowMs + 5000 });
}

function sameNotice(a: RealtimeNotice, b: RealtimeNotice): boolean {
  return a.code === b.code && a.message === b.message && (a.lineIds ?? []).join() === (b.lineIds ?? []).join();
}

/** ws(s) URL of the socket endpoint for an http(s) base URL. */
export function socketUrlFor(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/^http/, 'ws') + API_PREFIX + REALTIME_PATHS.socket;
}
