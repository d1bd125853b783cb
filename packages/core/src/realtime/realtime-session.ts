import { CLOSE_CODES, REALTIME, SOCKET_DEFAULTS } from '../protocol.js';
import type { RealtimeNotice, RealtimeSession } from '../types/realtime.js';
import { AudioOutbox, type AudioStats, type InputFormat } from './audio-outbox.js';
import { FramePump } from './frame-pump.js';
import { GuardedEmitter } from './guarded-emitter.js';
import type { SessionLine } from './line-store.js';
import { SessionTranscript } from './session-transcript.js';
import { RealtimeError, isRealtimeError } from '../errors/realtime-error.js';
import { SessionRecovery, type RecoveryAction, type RecoveryFacts } from './session-recovery.js';
import { socketAddress } from './socket-address.js';
import { parseServerMessage, type ServerMessage, type SessionReadyMessage } from './server-messages.js';
import type { RealtimeFinishResult, RealtimeSessionEvents } from './session-events.js';
import { SessionIntent } from './session-intent.js';
import { SessionMessages, type MessageAction } from './session-messages.js';
import { StateMachine, type SessionState, type StateChange } from './session-state.js';
import { resolveWebSocket, SocketTransport, type WebSocketConstructor } from './socket-transport.js';
import type { OperationOptions, RealtimeSessionInit } from './session-options.js';
import { HeartbeatWatchdog } from './heartbeat-watchdog.js';
import { TimerSet } from './timer-set.js';
import { Waiters, invalidTimeout, type WaitOptions } from './waiters.js';

export { socketUrlFor } from './socket-address.js';

/**
 * A realtime session over the socket: audio in, lines out, never losing a sample the
 * server has not acknowledged.
 *
 * Generations: every socket gets a transport id, and every callback from a socket that is no longer
 * current is dropped; partials of an epoch already left are dropped. Every await re-checks the state.
 * This class is the one owner of the state: SessionMessages (what the server says) and SessionRecovery
 * (a lost socket) return the actions to take and this class runs them; only here does the state change
 * and only here are the socket, the timers and REST used. What the user asked (pause, resume, finish,
 * and so whether write() takes audio) is SessionIntent, which outlives sockets. See README.md here.
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
 *     |── session.finish {capturedSamples} ────►|   once everything is acknowledged (or drainTimeoutMs)
 *     |◄── session.finished {session} ── close 4409
 */
export class RealtimeSocketSession extends GuardedEmitter<RealtimeSessionEvents> {
  readonly sessionId: string;

  readonly #init: RealtimeSessionInit;
  readonly #machine: StateMachine;
  readonly #outbox: AudioOutbox;
  readonly #transcript = new SessionTranscript({
    line: (line) => this.emit('line', line),
    lineUpdated: (update) => this.emit('line.updated', update),
    notice: (notice) => this.emit('notice', notice),
  });
  readonly #now: () => number;
  readonly #sender: FramePump;
  readonly #recovery: SessionRecovery;
  readonly #waiters = new Waiters();
  readonly #timers = new TimerSet();
  readonly #heartbeat: HeartbeatWatchdog;

  #ws: { WebSocket: WebSocketConstructor; headers: boolean } | undefined;
  #transport: SocketTransport | undefined;
  #transportSeq = 0;
  #ready = false;
  #cancelConnectTimer: (() => void) | undefined;
  #everReady = false;
  #lastSocketError = '';
  /** A REST finish is under way: reconnect attempts stand aside. */
  #restFinishing = false;
  readonly #intent = new SessionIntent();
  readonly #messages: SessionMessages;
  #result: RealtimeFinishResult | undefined;
  #failure: Error | undefined;
  /** Set by session.notice BALANCE_EXHAUSTED: how the session ends once the final view arrives. */
  #exhausted: { readonly receivedSamples: number; readonly notAccepted: { readonly from: number; readonly to: number } | null } | undefined;
  #finishPromise: Promise<RealtimeFinishResult> | undefined;
  /** Aborted at the end (teardown): REST calls of the recovery stop with the session. */
  readonly #lifetime = new AbortController();
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
      onGap: (gap) => this.emit('gap', { ...gap, epoch: this.epoch }),
    });
    const s = this;
    const drain = { maxInFlightSamples: init.maxInFlightSamples ?? 32_000, drainTimeoutMs: init.drainTimeoutMs ?? 5000 };
    this.#sender = new FramePump(this.#outbox, drain, this.#now, (ms, run) => this.#later(ms, run), {
      readySocket: () => (this.#ready ? this.#transport : undefined),
      get state() { return s.state; },
      get epoch() { return s.epoch; },
      onFirstFrame: (startSample, epoch) => this.emit('first.frame', { startSample, epoch }),
    });
    this.#recovery = new SessionRecovery(init.reconnect, REALTIME.recoveryWindowMs, init.restFinishReserveMs ?? 10_000);
    this.#machine = new StateMachine((change) => this.#onStateChange(change));
    this.#messages = new SessionMessages(this.#outbox, this.#transcript);
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
    return this.#messages.epoch;
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
   * Float32 (or PCM16 as an Int16Array) audio at the declared sampleRate and channels (interleaved). Returns the input samples
   * accepted (block.length); 0 when the session does not take audio: from pause() until resume(), from
   * finish() on, and once ended. Whether it is taken follows those calls, not the socket: while
   * reconnecting, audio is buffered if the session was streaming and dropped if it was paused or finishing.
   */
  write(block: Float32Array | Int16Array): number {
    if (!this.#takesAudio()) return 0;
    this.#outbox.writeFloat(block);
    this.#sender.pump();
    return block.length;
  }

  /**
   * Declares the rate, channels and resampler kernel of write() blocks, in place of the sampleRate and
   * channels options: for a writer that learns its rate only when it starts (a browser capture at its
   * AudioContext's rate), or whose device came back at another rate. The same format again is a no-op;
   * a different one before any audio or right after markDiscontinuity() (else REALTIME_INVALID_STATE);
   * the session, its positions and its unacknowledged audio carry on. An unsupported rate throws
   * DSP_UNSUPPORTED_RATE.
   */
  setInputFormat(format: InputFormat): void {
    this.#outbox.setInput(format);
  }

  /**
   * A discontinuity in the audio given to write(): what comes next does not follow what came before
   * (a mute, audio lost before it reached the writer, another source). The resampler's tail goes out
   * now, so the audio before the cut is complete; the next write() starts with a fresh filter, so no
   * sample sent mixes the two sides. Nothing is inserted: the server gets the two stretches back to
   * back, each resampled exactly as a stream of its own. Returns the 16 kHz samples the tail added; 0
   * with nothing written since the last cut, for writePcm16() (it does not resample), and when the
   * session does not take audio (pause() and finish() end the segment themselves).
   */
  markDiscontinuity(): number {
    if (!this.#takesAudio()) return 0;
    const produced = this.#outbox.endSegment();
    if (produced > 0) this.#sender.pump();
    return produced;
  }

  /**
   * PCM16 at 16 kHz mono, sent bit for bit. Same return rule as write(). write() and writePcm16()
   * alternate only at a discontinuity (REALTIME_INVALID_STATE inside a segment).
   */
  writePcm16(samples: Int16Array): number {
    if (!this.#takesAudio()) return 0;
    this.#outbox.writePcm16(samples);
    this.#sender.pump();
    return samples.length;
  }

  #takesAudio(): boolean {
    return this.#intent.accepting && this.state !== 'idle' && !this.#machine.terminal;
  }

  // ------------------------------------------------------------------------------------------------
  // Operations
  // ------------------------------------------------------------------------------------------------

  /**
   * Encodes the resampler's tail into this epoch, sends everything written so far, waits until the
   * server acknowledged it (at most drainTimeoutMs), then pauses with that exact capturedSamples.
   * Resolves once the server confirmed (session.paused). Audio written once it started is dropped (at
   * once when streaming; while the socket is down or a rotation completes it waits for that first).
   * A pause() that times out or is aborted before session.pause went out is withdrawn (back to
   * `streaming`); once it went out the pause proceeds (`pausing`, then `paused`: call resume()).
   */
  async pause(options: OperationOptions = {}): Promise<void> {
    const wait = this.#waitOptions('pause', options, 30_000);
    // Paused with a resume on its way is not paused for long: wait for the resume, then pause.
    const can = (): boolean => this.state === 'streaming' || (this.state === 'paused' && !this.#intent.resume) || this.#machine.terminal || this.state === 'finishing';
    this.#checkCall(wait);
    if (!can()) await this.#waiters.until(can, wait); // else in the caller's tick: audio written right after is refused
    if (this.state === 'paused') return;
    if (this.#machine.terminal) throw this.#failure ?? RealtimeError.closed('pause');
    if (this.state !== 'streaming') throw RealtimeError.invalidState('pause', this.state);
    this.#intent.pauseAsked();
    this.#sender.newPause(); // the one sent on this socket earlier was answered already
    this.#outbox.endSegment();
    this.#sender.startDrain();
    this.#machine.set('pausing', 'pause()');
    this.#sender.pump();
    try {
      await this.#waiters.until(() => this.state === 'paused', wait);
    } catch (caught) {
      this.#abandonPause();
      throw caught;
    }
  }

  /**
   * Resumes after pause(): the server starts the next epoch. Audio written from the call on is taken
   * (sent once the new epoch started). Survives a reconnect: a socket that comes back to a session still
   * paused sends session.resume again. Timed out or aborted before session.resume went out, it is
   * withdrawn (still `paused`, audio dropped); once it went out the resume proceeds.
   */
  async resume(options: OperationOptions = {}): Promise<void> {
    const wait = this.#waitOptions('resume', options, 30_000);
    const can = (): boolean => this.state === 'paused' || this.state === 'streaming' || this.#machine.terminal || this.state === 'finishing';
    this.#checkCall(wait);
    if (!can()) await this.#waiters.until(can, wait); // else in the caller's tick: audio written right after is taken
    if (this.state === 'streaming') return;
    if (this.#machine.terminal) throw this.#failure ?? RealtimeError.closed('resume');
    if (this.state !== 'paused') throw RealtimeError.invalidState('resume', this.state);
    this.#intent.resumeAsked();
    this.#sendResume();
    try {
      await this.#waiters.until(() => this.state === 'streaming', wait);
    } catch (caught) {
      this.#abandonResume();
      throw caught;
    }
  }

  /**
   * Finishes the session: encodes the resampler's tail, sends every remaining sample, waits for the
   * acknowledgement (at most drainTimeoutMs per socket), sends session.finish with the exact
   * capturedSamples and resolves with the final view, every notice and the final lines. Always settles
   * (default timeout 60 s: the server waits up to ~8 s for supplements) and leaves no timer or listener
   * behind. Repeated calls return the same promise. With the socket down it keeps reconnecting, and
   * finishes over REST only when the recovery window expired, the reconnect policy gave up, or the
   * deadline is restFinishReserveMs away (audio that never arrived becomes a declared gap).
   */
  finish(options: OperationOptions = {}): Promise<RealtimeFinishResult> {
    if (this.#result !== undefined) return Promise.resolve(this.#result);
    if (this.#finishPromise !== undefined) return this.#finishPromise;
    if (this.#machine.terminal) return Promise.reject(this.#failure ?? RealtimeError.closed('finish'));
    const wait = this.#waitOptions('finish', options, 60_000);
    const invalid = invalidTimeout('finish', wait.timeoutMs);
    if (invalid !== undefined) return Promise.reject(invalid);
    this.#intent.finishAsked();
    const wasPaused = this.state === 'paused';
    this.#outbox.flushResampler(); // after a pause() its tail went out already: nothing more then
    this.#sender.startDrain();
    if (this.state !== 'reconnecting' && this.state !== 'connecting') this.#machine.set('finishing', 'finish()');
    // Paused with audio the server did not take (a pause that went ahead undrained, or audio written
    // after resume() was asked): a new epoch takes it first.
    if (wasPaused && this.#outbox.unsent > 0) this.#sendResume();
    this.#recover(this.#recovery.finishRequested(this.#now() + wait.timeoutMs, this.#facts()));
    this.#sender.pump();
    this.#finishPromise = this.#waiters
      .until(() => this.#result !== undefined, wait)
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

  #waitOptions(call: string, options: OperationOptions, defaultTimeoutMs: number): WaitOptions {
    return { call, signal: options.signal, timeoutMs: options.timeoutMs ?? defaultTimeoutMs, failure: () => this.#failure };
  }

  /** What Waiters.until checks first, for pause() and resume() when they need not wait at all. */
  #checkCall(wait: WaitOptions): void {
    const invalid = invalidTimeout(wait.call, wait.timeoutMs);
    if (invalid !== undefined) throw invalid;
    if (wait.signal?.aborted) throw RealtimeError.aborted(wait.call, wait.signal.reason);
  }

  /** pause() gave up. Not sent on the live socket yet: withdraw it. Sent: the server may be pausing; it proceeds. */
  #abandonPause(): void {
    if (this.#machine.terminal || !this.#intent.pause || this.state === 'paused') return;
    if (this.#ready && this.#sender.sent.pauseSentOn(this.#transport?.id)) return;
    this.#intent.withdrawPause();
    if (this.state === 'pausing') this.#machine.set('streaming', 'pause() withdrawn before session.pause went out');
    this.#sender.pump();
  }

  /** resume() gave up: the same rule as #abandonPause. */
  #abandonResume(): void {
    if (this.#machine.terminal || !this.#intent.resume || this.state !== 'paused') return;
    if (this.#ready && this.#sender.sent.resumeSentOn(this.#transport?.id)) return;
    this.#intent.withdrawResume();
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
    this.#recover(this.#recovery.lost(code, reason, this.#lastSocketError, this.#facts()));
  }

  /** What recovery is told: the session as it is now. */
  #facts(): RecoveryFacts {
    return {
      state: this.state,
      terminal: this.#machine.terminal,
      finishRequested: this.#intent.finish,
      socketReady: this.#ready,
      hasRest: this.#init.rest !== undefined,
      now: this.#now(),
    };
  }

  /** Runs what SessionRecovery decided, in order; an action that needs a fresh look asks it again then. */
  #recover(actions: readonly RecoveryAction[]): void {
    for (const action of actions) {
      switch (action.do) {
        case 'reconnecting':
          if (this.state !== 'connecting') this.#machine.set('reconnecting', action.reason);
          this.#recover(this.#recovery.nextAttempt(action.code, action.reason, action.at, this.#facts()));
          break;
        case 'retry':
          this.emit('reconnecting', action.info);
          this.#later(action.delayMs, () => {
            this.#recovery.attemptStarted();
            void this.#reconnect();
          });
          break;
        case 'fail':
          this.#end('failed', action.error, action.reason);
          break;
        case 'finishOverRest':
          void this.#finishOverRest(action.why, action.expired);
          break;
        case 'readFinalView':
          void this.#readFinalView(action.reason);
          break;
        case 'finished':
          this.#onFinished(action.view, action.reason);
          break;
        case 'openSocket':
          this.#openSocket();
          break;
        case 'watchDeadline':
          this.#recover(this.#recovery.watchFinishDeadline(this.#facts()));
          break;
        case 'checkDeadline':
          this.#later(action.delayMs, () => this.#recover(this.#recovery.finishDeadlineDue(this.#facts())));
          break;
      }
    }
  }

  /** One attempt: read the session over REST when we can (it may have ended meanwhile), then the socket. */
  async #reconnect(): Promise<void> {
    const waiting = (): boolean => !this.#restFinishing && (this.state === 'reconnecting' || this.state === 'connecting');
    if (!waiting()) return;
    const rest = this.#init.rest;
    if (rest !== undefined && this.#everReady) {
      let view: RealtimeSession;
      try {
        view = await rest.get(this.sessionId, { signal: this.#lifetime.signal });
      } catch (caught) {
        this.#recover(this.#recovery.viewFailed(caught, this.#facts()));
        return;
      }
      if (!waiting()) return;
      this.#recover([this.#recovery.viewRead(view)]);
      return;
    }
    this.#openSocket();
  }

  /**
   * Saves the result over REST with the exact capturedSamples: the server settles what it received,
   * and what it did not is declared a gap here and a TRANSPORT_GAP there.
   */
  async #finishOverRest(why: string, expired: boolean): Promise<void> {
    const rest = this.#init.rest;
    if (this.#machine.terminal || this.#restFinishing) return;
    if (rest === undefined) {
      if (expired) this.emit('recovery.expired', { finishedOverRest: false });
      this.#end('failed', expired ? RealtimeError.recoveryWindowExpired() : RealtimeError.closed('finish'), why);
      return;
    }
    this.#restFinishing = true;
    if (expired) this.emit('recovery.expired', { finishedOverRest: true });
    this.#intent.finishAsked();
    this.#machine.set('finishing', why);
    try {
      const view = await rest.finish(this.sessionId, String(this.#outbox.produced), { signal: this.#lifetime.signal });
      // The socket's session.finished may have won the race (same settlement): #onFinished ignores this one.
      this.#onFinished(view, `${why}: finished over REST`);
    } catch (caught) {
      this.#end('failed', caught instanceof Error ? caught : RealtimeError.recoveryWindowExpired(), `${why}; REST finish failed`);
    } finally {
      this.#restFinishing = false;
    }
  }

  /** Close 4409 without session.finished before it: read the final view over REST. */
  async #readFinalView(reason: string): Promise<void> {
    const rest = this.#init.rest;
    if (rest === undefined) {
      this.#end('failed', RealtimeError.closed('finish'), reason);
      return;
    }
    try {
      const view = await rest.get(this.sessionId, { signal: this.#lifetime.signal });
      this.#onFinished(view, 'the session was finished elsewhere');
    } catch (caught) {
      this.#end('failed', caught instanceof Error ? caught : RealtimeError.closed('finish'), reason);
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
    const reconnectAttempt = message.type === 'session.ready' ? this.#socketReady(message) : undefined;
    const actions = this.#messages.handle(message, { state: this.state, transportId: t.id, intent: this.#intent, sent: this.#sender.sent, reconnectAttempt });
    for (const action of actions) this.#run(t, action);
    if (t.id === this.#transport?.id || message.type === 'session.finished') this.#emitRaw(message);
    this.#waiters.check();
  }

  /**
   * session.ready on the current socket: it is ready, the heartbeat runs, the outage (if any) is over, and the
   * pump starts afresh on it (a drain in progress gets a new wait). Returns the reconnect attempt that
   * made it, undefined for the first connect.
   */
  #socketReady(m: SessionReadyMessage): number | undefined {
    this.#ready = true;
    this.#clearConnectTimer();
    const attempt = this.#recovery.recovered(m.recoveryWindowMs);
    const reconnect = this.#everReady;
    this.#everReady = true;
    this.#heartbeat.start(this.#init.heartbeatTimeoutMs ?? m.heartbeatTimeoutMs ?? SOCKET_DEFAULTS.heartbeatTimeoutMs);
    this.#sender.newSocket(this.#intent.finish || this.#intent.pause);
    return reconnect ? attempt : undefined;
  }

  /** One action SessionMessages decided for a message from socket t. */
  #run(t: SocketTransport, action: MessageAction): void {
    switch (action.do) {
      case 'state':
        if (action.intent === 'paused') this.#intent.paused();
        else if (action.intent === 'streaming') this.#intent.streaming();
        this.#machine.set(action.to, action.reason);
        return;
      case 'resume':
        this.#sendResume();
        return;
      case 'pump':
        this.#sender.pump();
        return;
      case 'resumed':
        this.#sender.resumeAnswered();
        this.#intent.resumeTaken();
        return;
      case 'pong':
        t.sendJson({ type: 'pong', id: action.id });
        return;
      case 'finished':
        this.#onFinished(action.view, action.reason);
        return;
      case 'exhausted':
        this.#onBalanceExhausted(action.notice);
        return;
      case 'resync':
        t.close(CLOSE_CODES.normal, 'resync');
        this.#onLost(undefined, action.reason);
        return;
      case 'emit':
        (this.emit as (type: string, payload: unknown) => boolean)(action.event, action.payload);
        return;
    }
  }

  /** session.resume {epoch} once per socket (a rotation, or resume() after pause()). */
  #sendResume(): void {
    this.#sender.sendResume(this.epoch);
  }

  #emitRaw(message: ServerMessage): void {
    this.emit('message', message);
  }

  /**
   * The balance is used up: the server took audio up to receivedSamples and finishes the session by
   * itself. Not a fault to recover from: nothing more is sent (no frame, no finish, no resume), write()
   * takes nothing, the refused range is declared as a gap, and the session waits for session.finished
   * (a socket lost meanwhile reconnects only to hear it) to end `failed` with the typed error.
   */
  #onBalanceExhausted(notice: RealtimeNotice): void {
    if (this.#machine.terminal || this.#exhausted !== undefined) return;
    const parsed = Number(notice.receivedSamples);
    const receivedSamples = Number.isSafeInteger(parsed) && parsed >= 0 ? parsed : this.#outbox.ackedServer;
    this.#intent.finishAsked();
    this.#sender.halt();
    const notAccepted = this.#outbox.declareRefused(receivedSamples);
    this.#exhausted = { receivedSamples, notAccepted };
    if (this.state !== 'finishing' && this.state !== 'reconnecting' && this.state !== 'connecting') this.#machine.set('finishing', 'balance exhausted');
    const error = this.#balanceError(undefined);
    this.emit('balance.exhausted', { receivedSamples, notAccepted, notice, error });
  }

  #balanceError(view: RealtimeSession | undefined): RealtimeError {
    const info = this.#exhausted ?? { receivedSamples: this.#outbox.ackedServer, notAccepted: null };
    return RealtimeError.balanceExhausted({ ...info, sampleRate: REALTIME.sampleRate, ...(view !== undefined ? { session: view } : {}) });
  }

  #onFinished(view: RealtimeSession, reason: string): void {
    if (this.#machine.terminal) return;
    if (this.#exhausted !== undefined) {
      // The lines and notices stay readable (lines, notices); the end is the typed error, whose
      // `session` is this final view with the charge.
      this.#transcript.merge(view);
      this.#end('failed', this.#balanceError(view), 'balance exhausted');
      return;
    }
    // Whatever way it was finished (socket, REST, elsewhere), audio captured past the server's final
    // cursor never arrived: declare it (the server reports it as TRANSPORT_GAP).
    this.#outbox.declareUndelivered(Number(view.usage.receivedSamples));
    this.#transcript.merge(view);
    this.#result = { session: view, notices: [...this.#transcript.notices], lines: this.#transcript.lines, reason };
    // connect() waits for session.ready: a session the service failed before that rejects it with the why.
    if (!this.#everReady && view.status === 'FAILED') this.#failure = RealtimeError.sessionFailed(view);
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

  /**
   * The machine's own work first (teardown, waiters), the user's listeners last: whatever they do, the
   * session is torn down and every wait settled. A throwing listener is caught by GuardedEmitter (see
   * listenerFailed).
   */
  #onStateChange(change: StateChange): void {
    if (this.#machine.terminal) this.#teardown();
    this.#waiters.check();
    // Terminal without the awaited condition (e.g. pause() when the session finished): nothing waits forever.
    if (this.#machine.terminal) this.#waiters.rejectAll(this.#failure ?? RealtimeError.closed('operation'));
    this.emit('state', change);
  }

  /**
   * A listener threw: reported as `debug` { kind: 'listener-error', detail: { event, error } }; the
   * session carries on. Without a `debug` listener (or when one of those threw) the error is rethrown
   * in a microtask, as rxjs does, so an application bug is never swallowed silently.
   */
  protected listenerFailed(event: string, error: unknown): void {
    if (event !== 'debug' && this.listenerCount('debug') > 0) {
      this.emit('debug', { kind: 'listener-error', detail: { event, error } });
      return;
    }
    queueMicrotask(() => {
      throw error;
    });
  }

  /** The end other than `finished`: `closed` by the user, `failed` otherwise. Pending waits reject with `error`. */
  #end(to: 'closed' | 'failed', error: Error, reason: string): void {
    if (this.#machine.terminal) return;
    this.#failure = error;
    this.#machine.set(to, reason);
  }

  /** Terminal: close the socket, clear every timer, remove the abort listener. */
  #teardown(): void {
    const t = this.#transport;
    this.#transport = undefined;
    this.#ready = false;
    t?.close(CLOSE_CODES.normal, this.state);
    this.#heartbeat.stop();
    this.#clearConnectTimer();
    this.#timers.clear();
    this.#init.signal?.removeEventListener('abort', this.#onAbort);
    this.#lifetime.abort(this.#failure ?? RealtimeError.closed('operation'));
  }
}
