import { EventEmitter } from 'eventemitter3';
import type { Observable } from 'rxjs';
import { CLOSE_CODES, REALTIME, SOCKET_DEFAULTS } from '../protocol.js';
import type { RealtimeNotice, RealtimeSession, RealtimeUsage } from '../types/realtime.js';
import { AudioOutbox, type AudioStats } from './audio-outbox.js';
import { FramePump } from './frame-pump.js';
import type { LineUpdate, SessionLine } from './line-store.js';
import { SessionTranscript } from './session-transcript.js';
import { RealtimeError, isRealtimeError } from './realtime-error.js';
import { SessionRecovery, type RecoveryHost } from './session-recovery.js';
import { socketAddress } from './socket-address.js';
import { parseServerMessage, type EntitiesMessage, type PartialMessage, type ServerMessage, type SessionReadyMessage } from './server-messages.js';
import type { RealtimeFinishResult, RealtimeSessionEvents } from './session-events.js';
import { StateMachine, type SessionState, type StateChange } from './session-state.js';
import { resolveWebSocket, SocketTransport, type WebSocketConstructor } from './socket-transport.js';
import type { OperationOptions, RealtimeSessionInit } from './session-options.js';
import { SessionStreams, type SessionObservables } from './session-streams.js';
import { HeartbeatWatchdog } from './heartbeat-watchdog.js';
import { TimerSet } from './timer-set.js';
import { Waiters } from './waiters.js';

export { socketUrlFor } from './socket-address.js';

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
  readonly #transcript = new SessionTranscript({
    line: (line) => {
      this.#subjects.lines.next(line);
      this.emit('line', line);
    },
    lineUpdated: (update) => {
      this.#subjects.lineUpdates.next(update);
      this.emit('line.updated', update);
    },
    notice: (notice) => this.#subjects.notices.next(notice),
  });
  readonly #now: () => number;
  readonly #sender: FramePump;
  readonly #recovery: SessionRecovery;
  readonly #waiters = new Waiters();
  readonly #timers = new TimerSet();
  readonly #subjects = new SessionStreams();
  readonly #heartbeat: HeartbeatWatchdog;

  #ws: { WebSocket: WebSocketConstructor; headers: boolean } | undefined;
  #transport: SocketTransport | undefined;
  #transportSeq = 0;
  #ready = false;
  #epoch: number = REALTIME.firstEpoch;
  #cancelConnectTimer: (() => void) | undefined;
  #everReady = false;
  #lastSocketError = '';
  #finishRequested = false;
  #pauseRequested = false;
  #rotatingFrom: number | undefined;
  #result: RealtimeFinishResult | undefined;
  #failure: Error | undefined;
  #finishPromise: Promise<RealtimeFinishResult> | undefined;
  readonly #onAbort = (): void => this.#end('closed', RealtimeError.aborted('session', this.#init.signal?.reason), 'aborted');

  constructor(init: RealtimeSessionInit) {
    super();
    this.#init = init;
    this.sessionId = init.sessionId;
    this.#now = init.now ?? (() => Date.now());
    this.#outbox = new AudioOutbox({
      sampleRate: init.sampleRate ?? REALTIME.sampleRate,
      channels: init.channels ?? 1,
      bufferMs: init.bufferMs ?? REALTIME.recoveryWindowMs,
      onGap: (gap) => this.emit('gap', { ...gap, epoch: this.#epoch }),
    });
    const s = this;
    const drain = { maxInFlightSamples: init.maxInFlightSamples ?? 32_000, drainTimeoutMs: init.drainTimeoutMs ?? 5000 };
    this.#sender = new FramePump(this.#outbox, drain, this.#now, (ms, run) => this.#later(ms, run), {
      readySocket: () => (this.#ready ? this.#transport : undefined),
      get state() { return s.state; },
      get epoch() { return s.#epoch; },
      onFirstFrame: (startSample, epoch) => this.emit('first.frame', { startSample, epoch }),
    });
    this.#recovery = new SessionRecovery(this.#recoveryHost(), init.reconnect, REALTIME.recoveryWindowMs, init.drainTimeoutMs ?? 5000);
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
    return this.#transcript.lines;
  }

  get notices(): readonly RealtimeNotice[] {
    return this.#transcript.notices;
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
      this.#end('failed', caught instanceof Error ? caught : RealtimeError.noWebSocket(), 'no WebSocket');
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
    this.#sender.pump();
    return block.length;
  }

  /** PCM16 at 16 kHz mono, sent bit for bit. Same return rule as write(). */
  writePcm16(samples: Int16Array): number {
    if (!WRITABLE.includes(this.state)) return 0;
    this.#outbox.writePcm16(samples);
    this.#sender.pump();
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
    if (this.#machine.terminal) throw this.#failure ?? RealtimeError.closed('pause');
    if (this.state !== 'streaming') throw RealtimeError.invalidState('pause', this.state);
    this.#pauseRequested = true;
    this.#sender.pauseSentOn = -1; // a new pause: the one sent on this socket earlier was answered already
    this.#sender.startDrain();
    this.#machine.set('pausing', 'pause()');
    this.#sender.pump();
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
    if (this.#machine.terminal) throw this.#failure ?? RealtimeError.closed('resume');
    if (this.state !== 'paused') throw RealtimeError.invalidState('resume', this.state);
    this.#sendResume();
    await this.#waiters.until(() => this.state === 'streaming', wait);
  }

  /**
   * Finishes the session: encodes the resampler's tail, sends every remaining sample, waits for the
   * acknowledgement (at most drainTimeoutMs), sends session.finish with the exact capturedSamples and
   * resolves with the final view, every notice and the final lines. Always settles (default timeout
   * 60 s: the server waits up to ~8 s for supplements) and leaves no timer or listener behind.
   * Repeated calls return the same promise. With the socket down it waits for it at most drainTimeoutMs,
   * then finishes over REST (audio that never arrived becomes a declared gap).
   */
  finish(options: OperationOptions = {}): Promise<RealtimeFinishResult> {
    if (this.#result !== undefined) return Promise.resolve(this.#result);
    if (this.#finishPromise !== undefined) return this.#finishPromise;
    if (this.#machine.terminal) return Promise.reject(this.#failure ?? RealtimeError.closed('finish'));
    this.#finishRequested = true;
    const wasPaused = this.state === 'paused';
    if (!wasPaused) this.#outbox.flushResampler();
    this.#sender.startDrain();
    if (this.state !== 'reconnecting' && this.state !== 'connecting') this.#machine.set('finishing', 'finish()');
    // Paused with audio the server refused (frames in flight when it paused): a new epoch takes it first.
    if (wasPaused && this.#outbox.unsent > 0) this.#sendResume();
    // Socket down: wait for it at most drainTimeoutMs, then finish over REST (SessionRecovery).
    if (!this.#ready) this.#recovery.finishWhileDown();
    this.#sender.pump();
    const timeoutMs = options.timeoutMs ?? 60_000;
    this.#finishPromise = this.#waiters
      .until(() => this.#result !== undefined, { call: 'finish', signal: options.signal, timeoutMs, failure: () => this.#failure })
      .then(
        () => this.#result as RealtimeFinishResult,
        (caught: unknown) => {
          // A finish that timed out or was aborted ends the session here (the server keeps it open
          // until its recovery window passes; a REST finish can still save it).
          if (!this.#machine.terminal) {
            const timedOut = isRealtimeError(caught) && caught.code === 'REALTIME_TIMEOUT';
            this.#end(timedOut ? 'failed' : 'closed', caught as Error, timedOut ? 'finish timed out' : 'finish aborted');
          }
          throw caught;
        },
      );
    return this.#finishPromise;
  }

  /**
   * A plain disconnect: the socket closes and the session object ends in state `closed`. The server
   * keeps the session (not finished, not charged) until its recovery window passes; finish it over
   * REST to save it. Pending operations reject with REALTIME_CLOSED.
   */
  close(): void {
    this.#end('closed', RealtimeError.closed('operation'), 'closed by the client');
  }

  /** Captured ranges declared lost so far (see the `gap` event), merged. */
  get gaps(): ReadonlyArray<readonly [number, number]> {
    return this.#outbox.gaps;
  }

  // ------------------------------------------------------------------------------------------------
  // Socket lifecycle
  // ------------------------------------------------------------------------------------------------

  #openSocket(): void {
    const ws = this.#ws;
    if (ws === undefined || this.#machine.terminal) return;
    const { url, headers } = socketAddress(this.#init, ws.headers);
    const id = ++this.#transportSeq;
    this.#ready = false;
    this.#lastSocketError = '';
    let socket;
    try {
      socket = headers !== undefined ? new ws.WebSocket(url, undefined, { headers }) : new ws.WebSocket(url);
    } catch (caught) {
      this.#end('failed', RealtimeError.socketRefused(caught instanceof Error ? caught.message : String(caught), caught), 'socket refused');
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
    this.#cancelConnectTimer = this.#timers.later(this.#init.connectTimeoutMs ?? 10_000, () => {
      this.#cancelConnectTimer = undefined;
      const t = this.#transport;
      if (t === undefined || t.id !== id || this.#ready) return;
      t.terminate();
      this.#onLost(undefined, 'connect timeout');
    });
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
    this.#recovery.lost(code, reason);
  }

  /** SessionRecovery's view of this session: live reads through getters, actions through closures. */
  #recoveryHost(): RecoveryHost {
    const s = this;
    return {
      sessionId: this.sessionId,
      rest: this.#init.rest,
      signal: this.#init.signal,
      get state() { return s.state; },
      get terminal() { return s.#machine.terminal; },
      get everReady() { return s.#everReady; },
      get finishRequested() { return s.#finishRequested; },
      get socketReady() { return s.#ready; },
      get lastSocketError() { return s.#lastSocketError; },
      get capturedSamples() { return s.#outbox.produced; },
      setState: (next, reason) => {
        if (next === 'finishing') this.#finishRequested = true;
        this.#machine.set(next, reason);
      },
      fail: (error, reason) => this.#end('failed', error, reason),
      openSocket: () => this.#openSocket(),
      finished: (view, reason) => this.#onFinished(view, reason),
      later: (ms, run) => this.#later(ms, run),
      now: this.#now,
      emitReconnecting: (info) => this.emit('reconnecting', info),
      emitRecoveryExpired: (info) => this.emit('recovery.expired', info),
    };
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
        this.#sender.pump();
        return;
      case 'transcript.partial':
        if (m.epoch < this.#epoch) return; // an epoch already left: stale
        this.#subjects.partials.next(m);
        return;
      case 'transcript.line':
        this.#transcript.addLine(m.line);
        return;
      case 'transcript.alignment':
      case 'transcript.entities':
      case 'transcript.revision':
      case 'transcript.language': {
        this.#transcript.supplement(m);
        if (m.type === 'transcript.entities') this.#subjects.entities.next(m);
        return;
      }
      case 'usage.updated':
        if (m.usage !== undefined) this.#subjects.usage.next(m.usage);
        if (m.rotate) this.#onRotate(m.epoch);
        return;
      case 'session.notice':
        this.#transcript.addNotice(m.notice);
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
    const attempt = this.#recovery.recovered(m.recoveryWindowMs);
    this.#everReady = true;
    this.#sender.newSocket();
    this.#heartbeat.start(this.#init.heartbeatTimeoutMs ?? m.heartbeatTimeoutMs ?? SOCKET_DEFAULTS.heartbeatTimeoutMs);
    this.#epoch = m.epoch;
    // Lines committed while we were away arrive in the view: new ones are emitted, known ones updated.
    if (m.session !== undefined) {
      this.#transcript.merge(m.session);
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
    this.#sender.pump();
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
    } else if ((this.state === 'finishing' && this.#sender.finishSentOn !== this.#transport?.id) || (this.state === 'pausing' && this.#sender.pauseSentOn !== this.#transport?.id)) {
      // Audio is still draining: rotate without leaving the state, the drain continues in the new epoch.
      // Not once the pause or finish went out: the server handles that first, and a resume after it
      // would undo the pause (a paused session resumes into the next epoch).
      this.#rotatingFrom = epoch;
      this.#sendResume();
    }
  }

  #sendResume(): void {
    this.#sender.sendResume(this.#epoch);
  }

  #onResumed(epoch: number, received: number): void {
    this.#epoch = epoch;
    this.#sender.resumeSentOn = -1;
    this.#outbox.acknowledge(received);
    this.#outbox.rewindTo(received);
    if (this.state === 'rotating' || this.state === 'paused') this.#machine.set('streaming', `resumed in epoch ${epoch}`);
    if (this.#rotatingFrom !== undefined && epoch !== this.#rotatingFrom) {
      this.emit('rotated', { fromEpoch: this.#rotatingFrom, toEpoch: epoch, atSample: received });
    }
    this.#rotatingFrom = undefined;
    this.#sender.pump();
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
      this.#sender.pump();
    }
    const aboutMessage = m.details?.['frameEpoch'] === undefined;
    if (aboutMessage && (m.code === 'WRONG_EPOCH' || m.code === 'SESSION_CLOSED') && this.#sender.resumeSentOn === t.id && !this.#finishRequested) {
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

  #onFinished(view: RealtimeSession, reason: string): void {
    if (this.#machine.terminal) return;
    // Whatever way it was finished (socket, REST, elsewhere), audio captured past the server's final
    // cursor never arrived: declare it (the server reports it as TRANSPORT_GAP).
    this.#outbox.declareUndelivered(Number(view.usage.receivedSamples));
    this.#transcript.merge(view);
    this.#result = { session: view, notices: [...this.#transcript.notices], lines: this.#transcript.lines, reason };
    this.#machine.set('finished', reason);
  }

  // ------------------------------------------------------------------------------------------------
  // Heartbeat, timers, state, teardown
  // ------------------------------------------------------------------------------------------------

  #clearConnectTimer(): void {
    this.#cancelConnectTimer?.();
    this.#cancelConnectTimer = undefined;
  }

  /** A timer that teardown clears and that never runs after the end. */
  #later(ms: number, run: () => void): void {
    this.#timers.later(ms, () => {
      if (!this.#machine.terminal) run();
    });
  }

  #onStateChange(change: StateChange): void {
    this.#subjects.state.next(change.to);
    this.emit('state', change);
    if (this.#machine.terminal) this.#teardown();
    this.#waiters.check();
    // Terminal without the awaited condition (e.g. pause() when the session finished): nothing waits forever.
    if (this.#machine.terminal) this.#waiters.rejectAll(this.#failure ?? RealtimeError.closed('operation'));
  }

  /** The end other than `finished`: `closed` by the user, `failed` otherwise. Pending waits reject with `error`. */
  #end(to: 'closed' | 'failed', error: Error, reason: string): void {
    if (this.#machine.terminal) return;
    this.#failure = error;
    this.#machine.set(to, reason);
  }

  /** Terminal: close the socket, clear every timer, remove the abort listener, complete the streams. */
  #teardown(): void {
    const t = this.#transport;
    this.#transport = undefined;
    this.#ready = false;
    t?.close(CLOSE_CODES.normal, this.state);
    this.#heartbeat.stop();
    this.#clearConnectTimer();
    this.#timers.clear();
    this.#init.signal?.removeEventListener('abort', this.#onAbort);
    this.#subjects.complete();
  }
}
